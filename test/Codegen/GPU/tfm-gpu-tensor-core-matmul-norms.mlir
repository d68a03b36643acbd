// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul)" | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{norm-prologues=false})" | FileCheck %s --check-prefix=OFF
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(tfm-gpu-tensor-core-matmul{few-rows=0})" | FileCheck %s --check-prefix=OFF

// Projections whose rows are a norm's output: the few-rows kernels compute
// the norm themselves (norm-prologues), and the norm's ops run over a
// subview of their rows that is empty for 8 rows or fewer.

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#col = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// RMSNorm as convert-tfm-to-linalg lowers it, read by two projections (q
// and k). On the host, the norm's ops (the fill, the sum of squares, the
// scaling) read and write [lead, 1, ...] subviews, lead = B when there
// are more than 8 rows, else 0. Each few-rows kernel reads X and G, not
// the normed rows: per row (while the row exists), the lanes' sums of
// squares over K, summed across the warp, then 1/sqrt(mean + eps) once;
// in the K loop, G's chunk at k, and each row's chunk of A computed
// lanewise with the norm's ops, rounded to bf16 as the norm stores it.
// The tile kernels read the normed rows, as before.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x1x64xbf16>, %[[G:[^:]*]]: memref<64xbf16>
// CHECK: %[[B:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[SQUARES:.*]] = memref.alloc(%[[B]]) : memref<?x1xf32>
// CHECK: %[[MANY:.*]] = arith.cmpi ugt, %{{.*}}, %c8
// CHECK: %[[LEAD:.*]] = arith.select %[[MANY]], %{{.*}}, %c0
// CHECK: %[[SQUARES_VIEW:.*]] = memref.subview %[[SQUARES]][0, 0] [%[[LEAD]], 1] [1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SQUARES_VIEW]] :
// CHECK: %[[X_VIEW:.*]] = memref.subview %[[X]][0, 0, 0] [%[[LEAD]], 1, 64] [1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[X_VIEW]] : {{.*}}) outs(%[[SQUARES_VIEW]] :
// CHECK: %[[N:.*]] = memref.alloc(%[[B]]) : memref<?x1x64xbf16>
// CHECK: %[[N_VIEW:.*]] = memref.subview %[[N]][0, 0, 0] [%[[LEAD]], 1, 64] [1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[X_VIEW]], %[[SQUARES_VIEW]], %[[G]] : {{.*}}) outs(%[[N_VIEW]] :
// CHECK: %[[A:.*]] = memref.collapse_shape %[[N]]
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK: nvgpu.device_async_copy %[[A]]
// CHECK: %[[X_ROWS:.*]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<?x1x64xbf16> into memref<?x64xbf16>
// CHECK: gpu.launch
// CHECK-NOT: %[[A]][
// CHECK:   %[[ROW0:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:     scf.for
// CHECK:       vector.load %[[X_ROWS]][%c0{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
// CHECK:       arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:       vector.reduction <add>
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:     arith.divf
// CHECK:     arith.addf
// CHECK:     %[[SCALE:.*]] = math.rsqrt
// CHECK:     scf.yield %[[SCALE]] : f32
// CHECK:   scf.for
// CHECK:     %[[GAIN:.*]] = vector.load %[[G]][%{{.*}}] {alignment = 16 : i64} : memref<64xbf16>, vector<8xbf16>
// CHECK:     vector.load %[[X_ROWS]][%c0{{.*}}, %{{.*}}]
// CHECK:     %[[SCALES:.*]] = vector.broadcast %[[ROW0]] : f32 to vector<8xf32>
// CHECK:     arith.mulf %{{.*}}, %[[SCALES]] : vector<8xf32>
// CHECK:     arith.extf %[[GAIN]]
// CHECK:     %[[ROUNDED:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK:     arith.extf %[[ROUNDED]] : vector<8xbf16> to vector<8xf32>
// CHECK:     vector.reduction <add>
// CHECK-NOT: %[[A]][
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK: gpu.launch
// CHECK: math.rsqrt
// CHECK: return
// Without the prologues (or without the few-rows kernel), the norm runs
// over all its rows and every kernel reads them.
// OFF-LABEL: func.func @rms_norm
// OFF-NOT: memref.subview
// OFF-NOT: math.rsqrt {{.*}} : f32
// OFF: linalg.generic
// OFF: math.rsqrt
// OFF-NOT: math.rsqrt
// OFF: return
func.func @rms_norm(%x: memref<?x1x64xbf16>, %g: memref<64xbf16>, %wq: memref<32x64xbf16>, %wk: memref<16x64xbf16>) -> (memref<?x32xf32>, memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %width = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %b = memref.dim %x, %c0 : memref<?x1x64xbf16>
  %squares = memref.alloc(%b) : memref<?x1xf32>
  linalg.fill ins(%zero : f32) outs(%squares : memref<?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<?x1x64xbf16>) outs(%squares : memref<?x1xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %e = arith.extf %in : bf16 to f32
    %sq = arith.mulf %e, %e : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  %n = memref.alloc(%b) : memref<?x1x64xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %squares, %g : memref<?x1x64xbf16>, memref<?x1xf32>, memref<64xbf16>) outs(%n : memref<?x1x64xbf16>) {
  ^bb0(%in: bf16, %sum: f32, %gain: bf16, %o: bf16):
    %mean = arith.divf %sum, %width : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %e = arith.extf %in : bf16 to f32
    %s = arith.mulf %e, %r : f32
    %ge = arith.extf %gain : bf16 to f32
    %y = arith.mulf %s, %ge : f32
    %t = arith.truncf %y : f32 to bf16
    linalg.yield %t : bf16
  }
  %q = memref.alloc(%b) : memref<?x32xf32>
  %k = memref.alloc(%b) : memref<?x16xf32>
  %a = memref.collapse_shape %n [[0, 1], [2]] : memref<?x1x64xbf16> into memref<?x64xbf16>
  linalg.fill ins(%zero : f32) outs(%q : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %wq : memref<?x64xbf16>, memref<32x64xbf16>) outs(%q : memref<?x32xf32>) {
  ^bb0(%in: bf16, %w: bf16, %acc: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %w : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.fill ins(%zero : f32) outs(%k : memref<?x16xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %wk : memref<?x64xbf16>, memref<16x64xbf16>) outs(%k : memref<?x16xf32>) {
  ^bb0(%in: bf16, %w: bf16, %acc: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %w : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return %q, %k : memref<?x32xf32>, memref<?x16xf32>
}


// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#col = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// LayerNorm: the sum, the mean (a row map), the sum of squared deviations
// from it, then the norm with its weight and bias. Every op of the chain
// runs over the empty-for-few-rows subviews; the few-rows kernel computes
// each row's mean (a pass over K), then its deviations (a second pass,
// reading the mean), and A's chunks from X, the two row values, G and
// the bias.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x1x64xbf16>, %[[G:[^:]*]]: memref<64xbf16>, %[[BETA:[^:]*]]: memref<64xbf16>
// CHECK: %[[LEAD:.*]] = arith.select
// CHECK: linalg.fill {{.*}} outs(%[[SUMS:.*]] : memref<?x1xf32, strided<[1, 1]>>)
// CHECK: linalg.generic {{.*}} outs(%[[SUMS]] :
// CHECK: %[[MEAN:.*]] = memref.subview %{{.*}}[0, 0] [%[[LEAD]], 1] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[SUMS]] : {{.*}}) outs(%[[MEAN]] :
// CHECK: linalg.fill {{.*}} outs(%[[DEVIATIONS:.*]] : memref<?x1xf32, strided<[1, 1]>>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MEAN]] : {{.*}}) outs(%[[DEVIATIONS]] :
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MEAN]], %[[DEVIATIONS]], %[[G]], %[[BETA]] :
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK: gpu.launch
// CHECK:   scf.if %{{.*}} -> (f32, f32) {
// CHECK:     %[[SUM:.*]] = scf.for
// CHECK:     %[[MU:.*]] = arith.divf
// CHECK:     scf.for
// CHECK:       arith.subf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:     math.rsqrt
// CHECK:   scf.for
// CHECK:     vector.load %[[G]]
// CHECK:     vector.load %[[BETA]]
// CHECK: return
func.func @layer_norm(%x: memref<?x1x64xbf16>, %g: memref<64xbf16>, %beta: memref<64xbf16>, %w: memref<32x64xbf16>) -> memref<?x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %width = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %b = memref.dim %x, %c0 : memref<?x1x64xbf16>
  %mean = memref.alloc(%b) : memref<?x1xf32>
  %sums = memref.alloc(%b) : memref<?x1xf32>
  linalg.fill ins(%zero : f32) outs(%sums : memref<?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<?x1x64xbf16>) outs(%sums : memref<?x1xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %e = arith.extf %in : bf16 to f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%sums : memref<?x1xf32>) outs(%mean : memref<?x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.divf %in, %width : f32
    linalg.yield %m : f32
  }
  %deviations = memref.alloc(%b) : memref<?x1xf32>
  linalg.fill ins(%zero : f32) outs(%deviations : memref<?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %mean : memref<?x1x64xbf16>, memref<?x1xf32>) outs(%deviations : memref<?x1xf32>) {
  ^bb0(%in: bf16, %mu: f32, %acc: f32):
    %e = arith.extf %in : bf16 to f32
    %d = arith.subf %e, %mu : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  %n = memref.alloc(%b) : memref<?x1x64xbf16>
  linalg.generic {indexing_maps = [#id, #row, #row, #col, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mean, %deviations, %g, %beta : memref<?x1x64xbf16>, memref<?x1xf32>, memref<?x1xf32>, memref<64xbf16>, memref<64xbf16>) outs(%n : memref<?x1x64xbf16>) {
  ^bb0(%in: bf16, %mu: f32, %var: f32, %gain: bf16, %bias: bf16, %o: bf16):
    %v = arith.divf %var, %width : f32
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    %e = arith.extf %in : bf16 to f32
    %d = arith.subf %e, %mu : f32
    %s = arith.mulf %d, %r : f32
    %ge = arith.extf %gain : bf16 to f32
    %y = arith.mulf %s, %ge : f32
    %be = arith.extf %bias : bf16 to f32
    %z = arith.addf %y, %be : f32
    %t = arith.truncf %z : f32 to bf16
    linalg.yield %t : bf16
  }
  %c = memref.alloc(%b) : memref<?x32xf32>
  %a = memref.collapse_shape %n [[0, 1], [2]] : memref<?x1x64xbf16> into memref<?x64xbf16>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : memref<?x64xbf16>, memref<32x64xbf16>) outs(%c : memref<?x32xf32>) {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %wt : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return %c : memref<?x32xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#col = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A static count of few rows: no tile kernel is built, so the norm's ops go.
// CHECK-LABEL: func.func @static_few_rows
// CHECK-NOT: linalg.
// CHECK: gpu.launch
// CHECK: math.rsqrt
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @static_few_rows(%x: memref<2x1x64xbf16>, %g: memref<64xbf16>, %w: memref<32x64xbf16>) -> memref<2x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %width = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %b = memref.dim %x, %c0 : memref<2x1x64xbf16>
  %squares = memref.alloc() : memref<2x1xf32>
  linalg.fill ins(%zero : f32) outs(%squares : memref<2x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<2x1x64xbf16>) outs(%squares : memref<2x1xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %e = arith.extf %in : bf16 to f32
    %sq = arith.mulf %e, %e : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  %n = memref.alloc() : memref<2x1x64xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %squares, %g : memref<2x1x64xbf16>, memref<2x1xf32>, memref<64xbf16>) outs(%n : memref<2x1x64xbf16>) {
  ^bb0(%in: bf16, %sum: f32, %gain: bf16, %o: bf16):
    %mean = arith.divf %sum, %width : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %e = arith.extf %in : bf16 to f32
    %s = arith.mulf %e, %r : f32
    %ge = arith.extf %gain : bf16 to f32
    %y = arith.mulf %s, %ge : f32
    %t = arith.truncf %y : f32 to bf16
    linalg.yield %t : bf16
  }
  %c = memref.alloc() : memref<2x32xf32>
  %a = memref.collapse_shape %n [[0, 1], [2]] : memref<2x1x64xbf16> into memref<2x64xbf16>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x32xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : memref<2x64xbf16>, memref<32x64xbf16>) outs(%c : memref<2x32xf32>) {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %wt : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return %c : memref<2x32xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#col = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// The normed rows are also copied out: the norm stays whole, and the
// few-rows kernel reads its rows.
// CHECK-LABEL: func.func @read_elsewhere
// CHECK-NOT: memref.subview
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK: gpu.launch
// CHECK-NOT: math.rsqrt
// CHECK: return
func.func @read_elsewhere(%x: memref<?x1x64xbf16>, %g: memref<64xbf16>, %w: memref<32x64xbf16>, %copy: memref<?x1x64xbf16>) -> memref<?x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %width = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %b = memref.dim %x, %c0 : memref<?x1x64xbf16>
  %squares = memref.alloc(%b) : memref<?x1xf32>
  linalg.fill ins(%zero : f32) outs(%squares : memref<?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<?x1x64xbf16>) outs(%squares : memref<?x1xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %e = arith.extf %in : bf16 to f32
    %sq = arith.mulf %e, %e : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  %n = memref.alloc(%b) : memref<?x1x64xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %squares, %g : memref<?x1x64xbf16>, memref<?x1xf32>, memref<64xbf16>) outs(%n : memref<?x1x64xbf16>) {
  ^bb0(%in: bf16, %sum: f32, %gain: bf16, %o: bf16):
    %mean = arith.divf %sum, %width : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %e = arith.extf %in : bf16 to f32
    %s = arith.mulf %e, %r : f32
    %ge = arith.extf %gain : bf16 to f32
    %y = arith.mulf %s, %ge : f32
    %t = arith.truncf %y : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.copy %n, %copy : memref<?x1x64xbf16> to memref<?x1x64xbf16>
  %c = memref.alloc(%b) : memref<?x32xf32>
  %a = memref.collapse_shape %n [[0, 1], [2]] : memref<?x1x64xbf16> into memref<?x64xbf16>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : memref<?x64xbf16>, memref<32x64xbf16>) outs(%c : memref<?x32xf32>) {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %wt : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return %c : memref<?x32xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#col = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// The norm's input is written between the norm and the projection: the
// few-rows kernel would read other values, so the norm stays whole.
// CHECK-LABEL: func.func @input_written_after
// CHECK-NOT: memref.subview
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK: gpu.launch
// CHECK-NOT: math.rsqrt
// CHECK: return
func.func @input_written_after(%g: memref<64xbf16>, %w: memref<32x64xbf16>, %from: memref<?x1x64xbf16>) -> memref<?x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %width = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %bx = memref.dim %from, %c0 : memref<?x1x64xbf16>
  %x = memref.alloc(%bx) : memref<?x1x64xbf16>
  memref.copy %from, %x : memref<?x1x64xbf16> to memref<?x1x64xbf16>
  %b = memref.dim %x, %c0 : memref<?x1x64xbf16>
  %squares = memref.alloc(%b) : memref<?x1xf32>
  linalg.fill ins(%zero : f32) outs(%squares : memref<?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<?x1x64xbf16>) outs(%squares : memref<?x1xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %e = arith.extf %in : bf16 to f32
    %sq = arith.mulf %e, %e : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  %n = memref.alloc(%b) : memref<?x1x64xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %squares, %g : memref<?x1x64xbf16>, memref<?x1xf32>, memref<64xbf16>) outs(%n : memref<?x1x64xbf16>) {
  ^bb0(%in: bf16, %sum: f32, %gain: bf16, %o: bf16):
    %mean = arith.divf %sum, %width : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %e = arith.extf %in : bf16 to f32
    %s = arith.mulf %e, %r : f32
    %ge = arith.extf %gain : bf16 to f32
    %y = arith.mulf %s, %ge : f32
    %t = arith.truncf %y : f32 to bf16
    linalg.yield %t : bf16
  }
  %c = memref.alloc(%b) : memref<?x32xf32>
  %a = memref.collapse_shape %n [[0, 1], [2]] : memref<?x1x64xbf16> into memref<?x64xbf16>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x32xf32>)
  %zb = arith.constant 0.0 : bf16
  linalg.fill ins(%zb : bf16) outs(%x : memref<?x1x64xbf16>)
  linalg.fill ins(%zero : f32) outs(%c : memref<?x32xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : memref<?x64xbf16>, memref<32x64xbf16>) outs(%c : memref<?x32xf32>) {
  ^bb0(%in: bf16, %wt: bf16, %acc: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %wt : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return %c : memref<?x32xf32>
}


// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#col = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
// In a loop, what the norm writes could be read before it on the next
// iteration: the norm stays whole.
// CHECK-LABEL: func.func @in_loop
// CHECK-NOT: memref.subview
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK: return
func.func @in_loop(%x: memref<?x1x64xbf16>, %g: memref<64xbf16>, %w: memref<32x64xbf16>, %out: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %width = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %b = memref.dim %x, %c0 : memref<?x1x64xbf16>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %squares = memref.alloc(%b) : memref<?x1xf32>
    linalg.fill ins(%zero : f32) outs(%squares : memref<?x1xf32>)
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<?x1x64xbf16>) outs(%squares : memref<?x1xf32>) {
    ^bb0(%in: bf16, %acc: f32):
      %e = arith.extf %in : bf16 to f32
      %sq = arith.mulf %e, %e : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    }
    %n = memref.alloc(%b) : memref<?x1x64xbf16>
    linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %squares, %g : memref<?x1x64xbf16>, memref<?x1xf32>, memref<64xbf16>) outs(%n : memref<?x1x64xbf16>) {
    ^bb0(%in: bf16, %sum: f32, %gain: bf16, %o: bf16):
      %mean = arith.divf %sum, %width : f32
      %v = arith.addf %mean, %eps : f32
      %r = math.rsqrt %v : f32
      %e = arith.extf %in : bf16 to f32
      %s = arith.mulf %e, %r : f32
      %ge = arith.extf %gain : bf16 to f32
      %y = arith.mulf %s, %ge : f32
      %t = arith.truncf %y : f32 to bf16
      linalg.yield %t : bf16
    }
    %c = memref.alloc(%b) : memref<?x32xf32>
    %a = memref.collapse_shape %n [[0, 1], [2]] : memref<?x1x64xbf16> into memref<?x64xbf16>
    linalg.fill ins(%zero : f32) outs(%c : memref<?x32xf32>)
    linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : memref<?x64xbf16>, memref<32x64xbf16>) outs(%c : memref<?x32xf32>) {
    ^bb0(%in: bf16, %wt: bf16, %acc: f32):
      %0 = arith.extf %in : bf16 to f32
      %1 = arith.extf %wt : bf16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %acc, %2 : f32
      linalg.yield %3 : f32
    }
    memref.copy %c, %out : memref<?x32xf32> to memref<?x32xf32>
  }
  return
}
