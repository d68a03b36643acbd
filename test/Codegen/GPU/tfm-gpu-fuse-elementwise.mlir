// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-fuse-elementwise))" | FileCheck %s

// One zero fill for k and v (as CSE leaves it): each projection gets an
// empty tensor and a fill of its own right before it.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[E1:.*]] = tensor.empty(%{{.*}}) : tensor<?x32xf32>
// CHECK: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<?x32xf32>)
// CHECK: %[[K:.*]] = linalg.generic {{.*}} outs(%[[F1]] : tensor<?x32xf32>)
// CHECK: %[[E2:.*]] = tensor.empty(%{{.*}}) : tensor<?x32xf32>
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<?x32xf32>)
// CHECK: %[[V:.*]] = linalg.generic {{.*}} outs(%[[F2]] : tensor<?x32xf32>)
// CHECK: return %[[K]], %[[V]]
func.func @shared_fill(%x: tensor<?x64xbf16>, %wk: tensor<32x64xbf16>, %wv: tensor<32x64xbf16>) -> (tensor<?x32xf32>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %e = tensor.empty(%m) : tensor<?x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %k = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wk : tensor<?x64xbf16>, tensor<32x64xbf16>) outs(%f : tensor<?x32xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<?x32xf32>
  %v = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wv : tensor<?x64xbf16>, tensor<32x64xbf16>) outs(%f : tensor<?x32xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<?x32xf32>
  return %k, %v : tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// One empty tensor for three elementwise results (as CSE leaves it): exp(x),
// which does not read -x, gets an empty tensor of its own, a buffer its
// kernel may fill alongside -x's; their sum reads both (-x through a
// buffer, as the attention kernel's result is read) and keeps sharing.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @shared_empty
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x32xf32>
// CHECK: %[[NEG:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<?x32xf32>)
// CHECK: %[[E2:.*]] = tensor.empty(%{{.*}}) : tensor<?x32xf32>
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} outs(%[[E2]] : tensor<?x32xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<?x32xf32>)
// CHECK: return %[[SUM]]
func.func @shared_empty(%x: tensor<?x32xf32>, %buffer: memref<?x32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x32xf32>
  %e = tensor.empty(%m) : tensor<?x32xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x32xf32>) outs(%e : tensor<?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<?x32xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x32xf32>) outs(%e : tensor<?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<?x32xf32>
  %negBuffer = bufferization.to_buffer %neg : tensor<?x32xf32> to memref<?x32xf32>
  memref.copy %negBuffer, %buffer : memref<?x32xf32> to memref<?x32xf32>
  %read = bufferization.to_tensor %buffer restrict : memref<?x32xf32> to tensor<?x32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%read, %exp : tensor<?x32xf32>, tensor<?x32xf32>) outs(%e : tensor<?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.addf %a, %b : f32
    linalg.yield %0 : f32
  } -> tensor<?x32xf32>
  return %sum : tensor<?x32xf32>
}

// -----

// o_proj: the rounding of its [B, S, N] sums and the residual added to it
// become one op reading the sums' view and the residual.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @residual
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x?x64xbf16>
// CHECK: %[[SUMS:.*]] = linalg.generic
// CHECK: %[[VIEW:.*]] = tensor.expand_shape %[[SUMS]]
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[VIEW]] : tensor<2x?x64xbf16>, tensor<2x?x64xf32>)
// CHECK:   arith.truncf
// CHECK:   arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[OUT]]
func.func @residual(%a: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %x: tensor<2x?x64xbf16>, %s: index) -> tensor<2x?x64xbf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x64xbf16>
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<?x64xbf16>, tensor<64x64xbf16>) outs(%f : tensor<?x64xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<?x64xf32>
  %view = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, %s, 64] : tensor<?x64xf32> into tensor<2x?x64xf32>
  %e2 = tensor.empty(%s) : tensor<2x?x64xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%view : tensor<2x?x64xf32>) outs(%e2 : tensor<2x?x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %0 = arith.truncf %in : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<2x?x64xbf16>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %r : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>) outs(%e2 : tensor<2x?x64xbf16>) {
  ^bb0(%in: bf16, %in_0: bf16, %o: bf16):
    %0 = arith.addf %in, %in_0 : bf16
    linalg.yield %0 : bf16
  } -> tensor<2x?x64xbf16>
  return %sum : tensor<2x?x64xbf16>
}

// -----

// A gated FFN: act(gate) · up in f32 over [B, S, F] views, collapsed into
// the f32 rows of the down projection. The rows are rounded to bf16 before
// the collapse, the rounding joins act(gate) · up, and the down projection
// reads the bf16 rows, widening them.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gated
// CHECK: %[[H:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x?x128xbf16>)
// CHECK:   math.exp
// CHECK:   %[[P:.*]] = arith.mulf
// CHECK:   %[[N:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK:   linalg.yield %[[N]] : bf16
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[H]] {{\[}}[0, 1], [2]] : tensor<2x?x128xbf16> into tensor<?x128xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[ROWS]], %{{.*}} : tensor<?x128xbf16>, tensor<64x128xbf16>)
// CHECK: ^bb0(%[[IN:.*]]: bf16, %[[W:.*]]: bf16, %[[OUT:.*]]: f32):
// CHECK:   %[[WIDE:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK:   %[[WW:.*]] = arith.extf %[[W]] : bf16 to f32
// CHECK:   arith.mulf %[[WIDE]], %[[WW]] : f32
func.func @gated(%x: tensor<?x64xbf16>, %wg: tensor<128x64xbf16>, %wu: tensor<128x64xbf16>, %wd: tensor<64x128xbf16>, %s: index) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %e = tensor.empty(%m) : tensor<?x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x128xf32>) -> tensor<?x128xf32>
  %gate = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wg : tensor<?x64xbf16>, tensor<128x64xbf16>) outs(%f : tensor<?x128xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<?x128xf32>
  %e1 = tensor.empty(%m) : tensor<?x128xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x128xf32>) -> tensor<?x128xf32>
  %up = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wu : tensor<?x64xbf16>, tensor<128x64xbf16>) outs(%f1 : tensor<?x128xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<?x128xf32>
  %gv = tensor.expand_shape %gate [[0, 1], [2]] output_shape [2, %s, 128] : tensor<?x128xf32> into tensor<2x?x128xf32>
  %uv = tensor.expand_shape %up [[0, 1], [2]] output_shape [2, %s, 128] : tensor<?x128xf32> into tensor<2x?x128xf32>
  %e2 = tensor.empty(%s) : tensor<2x?x128xf32>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%gv, %uv : tensor<2x?x128xf32>, tensor<2x?x128xf32>) outs(%e2 : tensor<2x?x128xf32>) {
  ^bb0(%g: f32, %u: f32, %o: f32):
    %0 = arith.negf %g : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %1, %one : f32
    %3 = arith.divf %g, %2 : f32
    %4 = arith.mulf %3, %u : f32
    linalg.yield %4 : f32
  } -> tensor<2x?x128xf32>
  %rows = tensor.collapse_shape %h [[0, 1], [2]] : tensor<2x?x128xf32> into tensor<?x128xf32>
  %e3 = tensor.empty(%m) : tensor<?x64xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %down = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%rows, %wd : tensor<?x128xf32>, tensor<64x128xbf16>) outs(%f3 : tensor<?x64xf32>) {
  ^bb0(%in: f32, %in_0: bf16, %out: f32):
    %0 = arith.extf %in_0 : bf16 to f32
    %1 = arith.mulf %in, %0 : f32
    %2 = arith.addf %out, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<?x64xf32>
  return %down : tensor<?x64xf32>
}

// -----

// A norm's per-row finishing step, 1/sqrt(mean + eps), is computed in the
// op that scales the row by it; an op that reads no projection and has as
// many dims as its reader stays apart (the rounding after the scaling).
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#id1 = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @row_scale
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x64xf32>, %[[MS:[^:]*]]: tensor<8xf32>)
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MS]] : tensor<8x64xf32>, tensor<8xf32>)
// CHECK:   math.rsqrt
// CHECK:   arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[N]] : tensor<8x64xf32>)
// CHECK:   arith.truncf
func.func @row_scale(%x: tensor<8x64xf32>, %ms: tensor<8xf32>) -> tensor<8x64xbf16> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%ms : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.rsqrt %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8x64xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<8x64xf32>, tensor<8xf32>) outs(%e1 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %o: f32):
    %0 = arith.mulf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x64xbf16>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n : tensor<8x64xf32>) outs(%e2 : tensor<8x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %0 = arith.truncf %in : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<8x64xbf16>
  return %b : tensor<8x64xbf16>
}

// -----

// Left apart: a per-row table computed in f64 (RoPE's sines), and one that
// two ops read.
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#id1 = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @apart
// CHECK: linalg.generic
// CHECK:   math.sin {{.*}} : f64
// CHECK: linalg.generic
// CHECK:   arith.mulf
// CHECK: linalg.generic
// CHECK:   math.rsqrt
// CHECK: linalg.generic
// CHECK:   arith.mulf
// CHECK: linalg.generic
// CHECK:   arith.addf
func.func @apart(%x: tensor<8x64xf32>, %p: tensor<8xf64>, %ms: tensor<8xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%p : tensor<8xf64>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f64, %o: f32):
    %0 = math.sin %in : f64
    %1 = arith.truncf %0 : f64 to f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8x64xf32>
  %rotated = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %t : tensor<8x64xf32>, tensor<8xf32>) outs(%e1 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %o: f32):
    %0 = arith.mulf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%ms : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = math.rsqrt %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<8x64xf32>, tensor<8xf32>) outs(%e1 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %o: f32):
    %0 = arith.mulf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<8x64xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<8x64xf32>, tensor<8xf32>) outs(%e1 : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %o: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<8x64xf32>
  return %rotated, %scaled, %shifted : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}
