// RUN: tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-cpu-vectorize))" --split-input-file | FileCheck %s
// RUN: tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-cpu-vectorize{vector-width=8 register-rows=4}))" --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: not tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-cpu-vectorize{vector-width=0}))" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: vector-width and register-rows must be positive, got vector-width=0 register-rows=8

// A matmul becomes an 8x32 register block updated by one rank-1 product per
// step of K, 4 steps per iteration of its K loop, which carries the block;
// the N loop is outside the M loop.
// CHECK-LABEL: func.func @matmul
// CHECK:       scf.for %{{.+}} = %c0 to %c64 step %c32
// CHECK:         scf.for %{{.+}} = %c0 to %c256 step %c8
// CHECK:           %[[BLOCK:.+]] = vector.transfer_read
// CHECK:           scf.for %{{.+}} = %c0 to %c128 step %c4 iter_args(%{{.+}} = %{{.+}}, %[[SUMS:.+]] = %[[BLOCK]])
// CHECK:             %[[S1:.+]] = vector.contract {{.+}} %[[SUMS]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK:             %[[S2:.+]] = vector.contract {{.+}} %[[S1]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK:             %[[S3:.+]] = vector.contract {{.+}} %[[S2]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK:             %[[S4:.+]] = vector.contract {{.+}} %[[S3]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT:         vector.contract
// CHECK:             scf.yield %{{.+}}, %[[S4]]
// AVX2-LABEL: func.func @matmul
// AVX2:             vector.contract {{.+}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
func.func @matmul(%a: tensor<256x128xf32>, %b: tensor<128x64xf32>,
                  %c: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x64xf32>)
                     outs(%c : tensor<256x64xf32>) -> tensor<256x64xf32>
  return %0 : tensor<256x64xf32>
}

// -----

// M = 4 rows (a decode step of 4 grouped heads), N = 64: the block has 4
// rows and spends the rest of the 16 accumulator registers on whole rows of
// B. With 8 registers (AVX2), a whole row takes all of them: half the rows,
// 2 rows of 4 vectors.
// CHECK-LABEL: func.func @four_rows
// CHECK:       vector.contract {{.+}} : vector<4x1xf32>, vector<1x64xf32> into vector<4x64xf32>
// AVX2-LABEL: func.func @four_rows
// AVX2:        vector.contract {{.+}} : vector<2x1xf32>, vector<1x32xf32> into vector<2x32xf32>
func.func @four_rows(%a: tensor<4x128xf32>, %b: tensor<128x64xf32>,
                     %c: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x128xf32>, tensor<128x64xf32>)
                     outs(%c : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

// M = 4 or 8 rows (GQA or MQA decode), N = 128: blocks of 2 rows cover whole
// 128-column rows of B (16 accumulators), read front to back, not 4 rows of
// 64-column pieces. With AVX2, half the rows of 4 vectors.
// CHECK-LABEL: func.func @four_rows_whole_b_rows
// CHECK:       vector.contract {{.+}} : vector<2x1xf32>, vector<1x128xf32> into vector<2x128xf32>
// AVX2-LABEL: func.func @four_rows_whole_b_rows
// AVX2:        vector.contract {{.+}} : vector<2x1xf32>, vector<1x32xf32> into vector<2x32xf32>
func.func @four_rows_whole_b_rows(%a: tensor<4x64xf32>, %b: tensor<64x128xf32>,
                                  %c: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x64xf32>, tensor<64x128xf32>)
                     outs(%c : tensor<4x128xf32>) -> tensor<4x128xf32>
  return %0 : tensor<4x128xf32>
}

// -----

// CHECK-LABEL: func.func @eight_rows
// CHECK:       vector.contract {{.+}} : vector<2x1xf32>, vector<1x128xf32> into vector<2x128xf32>
func.func @eight_rows(%a: tensor<8x64xf32>, %b: tensor<64x128xf32>,
                      %c: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x128xf32>)
                     outs(%c : tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// N = 5, fewer columns than a vector (a projection's last columns): one
// block of all of them, in a partial vector, with the rows of any other
// block (half of a short M; AVX2 has 4 register rows).
// CHECK-LABEL: func.func @partial_vector_columns
// CHECK:       vector.contract {{.+}} : vector<4x1xf32>, vector<1x5xf32> into vector<4x5xf32>
// AVX2-LABEL: func.func @partial_vector_columns
// AVX2:        vector.contract {{.+}} : vector<4x1xf32>, vector<1x5xf32> into vector<4x5xf32>
func.func @partial_vector_columns(%a: tensor<8x64xf32>, %b: tensor<64x5xf32>,
                                  %c: tensor<8x5xf32>) -> tensor<8x5xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x5xf32>)
                     outs(%c : tensor<8x5xf32>) -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

// M = 8 rows, N = 256: a whole row of B needs all 16 accumulators, so half
// the rows, of 4 vectors: B is read in 64-column pieces.
// CHECK-LABEL: func.func @eight_rows_long_b_rows
// CHECK:       vector.contract {{.+}} : vector<4x1xf32>, vector<1x64xf32> into vector<4x64xf32>
func.func @eight_rows_long_b_rows(%a: tensor<8x64xf32>, %b: tensor<64x256xf32>,
                                  %c: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x256xf32>)
                     outs(%c : tensor<8x256xf32>) -> tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}

// -----

// Lane-wise dot products (a decode step's scores along key rows): the 4 rows
// of A against one row of B per step, B's rows outermost and read in order,
// vectors along the lanes; a multiply and an add, not vector.contract.
// CHECK-LABEL: func.func @lane_dots
// CHECK:       scf.for %{{.+}} = %c0 to %c32 step %c1
// CHECK:         scf.for %{{.+}} = %c0 to %c8 step %c1
// CHECK:           vector.transfer_read {{.+}} : tensor<32x8x16xf32>, vector<4x1x1x16xf32>
// CHECK:           arith.mulf {{.+}} : vector<4x1x1x16xf32>
// CHECK:           vector.multi_reduction <add>, {{.+}} [2] : vector<4x1x1x16xf32> to vector<4x1x16xf32>
// CHECK-NOT:       vector.contract
// AVX2-LABEL: func.func @lane_dots
// AVX2:             arith.mulf {{.+}} : vector<4x1x1x16xf32>
#a = affine_map<(m, n, k, l) -> (m, k, l)>
#b = affine_map<(m, n, k, l) -> (n, k, l)>
#c = affine_map<(m, n, k, l) -> (m, n, l)>
func.func @lane_dots(%a: tensor<4x8x16xf32>, %b: tensor<32x8x16xf32>,
                     %c: tensor<4x32x16xf32>) -> tensor<4x32x16xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%a, %b : tensor<4x8x16xf32>, tensor<32x8x16xf32>)
      outs(%c : tensor<4x32x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x32x16xf32>
  return %0 : tensor<4x32x16xf32>
}

// -----

// A transposed copy moves 16x16 blocks, in the order of the source's rows.
// CHECK-LABEL: func.func @transpose
// CHECK:       scf.for %{{.+}} = %c0 to %c64 step %c16
// CHECK:         scf.for %{{.+}} = %c0 to %c128 step %c16
// CHECK:           vector.transfer_read {{.+}} permutation_map = {{.+}} : tensor<64x128xf32>, vector<16x16xf32>
#transposed = affine_map<(d0, d1) -> (d1, d0)>
#identity = affine_map<(d0, d1) -> (d0, d1)>
func.func @transpose(%k: tensor<64x128xf32>) -> tensor<128x64xf32> {
  %init = tensor.empty() : tensor<128x64xf32>
  %0 = linalg.generic {indexing_maps = [#transposed, #identity],
                       iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<64x128xf32>) outs(%init : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

// -----

// Packing weights into contiguous [KC, NR] panels (tfm-cpu-tile-projections):
// the same 16x16 blocks, one panel after the other.
// CHECK-LABEL: func.func @transpose_panels
// CHECK:       scf.for %[[P:.+]] = %c0 to %c4 step %c1
// CHECK:         scf.for %[[C:.+]] = %c0 to %c32 step %c16
// CHECK:           scf.for %[[K:.+]] = %c0 to %c256 step %c16
// CHECK:             %[[BLOCK:.+]] = vector.transfer_read %{{.+}}[%[[P]], %[[C]], %[[K]]]{{.+}} permutation_map = {{.+}} : tensor<4x32x256xf32>, vector<1x16x16xf32>
// CHECK:             vector.transfer_write %[[BLOCK]], %{{.+}}[%[[P]], %[[K]], %[[C]]]
#strips = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#panels = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @transpose_panels(%w: tensor<4x32x256xf32>) -> tensor<4x256x32xf32> {
  %init = tensor.empty() : tensor<4x256x32xf32>
  %0 = linalg.generic {indexing_maps = [#strips, #panels],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<4x32x256xf32>) outs(%init : tensor<4x256x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x256x32xf32>
  return %0 : tensor<4x256x32xf32>
}

// -----

// Elementwise ops and row reductions: the innermost loop in blocks of up to
// four vectors, one row at a time.
// CHECK-LABEL: func.func @exp_and_row_max
// CHECK:       scf.for %{{.+}} = %c0 to %c256 step %c1
// CHECK:         scf.for %{{.+}} = %c0 to %c128 step %c64
// CHECK:           math.exp %{{.+}} : vector<1x64xf32>
// CHECK:       scf.for %{{.+}} = %c0 to %c256 step %c1
// CHECK:         vector.multi_reduction <maximumf>, %{{.+}} [1] : vector<1x64xf32> to vector<1xf32>
#identity = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @exp_and_row_max(%s: tensor<256x128xf32>, %m: tensor<256xf32>)
    -> (tensor<256x128xf32>, tensor<256xf32>) {
  %init = tensor.empty() : tensor<256x128xf32>
  %p = linalg.generic {indexing_maps = [#identity, #identity],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<256x128xf32>) outs(%init : tensor<256x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<256x128xf32>
  %max = linalg.generic {indexing_maps = [#identity, #row],
                         iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<256x128xf32>) outs(%m : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.maximumf %in, %out : f32
    linalg.yield %x : f32
  } -> tensor<256xf32>
  return %p, %max : tensor<256x128xf32>, tensor<256xf32>
}

// -----

// Left as scalar loops: dynamic sizes, and i1 data (a byte in memory, a bit
// in a vector register).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   vector.
// CHECK:       linalg.generic
// CHECK:       linalg.generic
// CHECK-NOT:   vector.
#identity = affine_map<(d0, d1) -> (d0, d1)>
func.func @left_alone(%x: tensor<?x64xf32>, %mask: tensor<8x64xi1>)
    -> (tensor<?x64xf32>, tensor<8x64xi1>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %init = tensor.empty(%n) : tensor<?x64xf32>
  %0 = linalg.generic {indexing_maps = [#identity, #identity],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x64xf32>) outs(%init : tensor<?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<?x64xf32>
  %minit = tensor.empty() : tensor<8x64xi1>
  %1 = linalg.generic {indexing_maps = [#identity, #identity],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mask : tensor<8x64xi1>) outs(%minit : tensor<8x64xi1>) {
  ^bb0(%in: i1, %out: i1):
    %t = arith.constant true
    %n1 = arith.xori %in, %t : i1
    linalg.yield %n1 : i1
  } -> tensor<8x64xi1>
  return %0, %1 : tensor<?x64xf32>, tensor<8x64xi1>
}

// -----

// Ops with a zero-size loop compute nothing: they stay as they are (tiling
// them to registers used to crash the pass), whichever dim is empty.
// CHECK-LABEL: func.func @empty_loops_left_alone
// CHECK-NOT:   vector.
// CHECK:       linalg.matmul
// CHECK:       linalg.matmul
// CHECK:       linalg.matmul
// CHECK-NOT:   vector.
func.func @empty_loops_left_alone(%a: tensor<8x16xf32>, %b0: tensor<16x0xf32>,
    %c0: tensor<8x0xf32>, %a0: tensor<0x16xf32>, %b: tensor<16x32xf32>,
    %c: tensor<0x32xf32>, %ak: tensor<8x0xf32>, %bk: tensor<0x32xf32>,
    %ck: tensor<8x32xf32>)
    -> (tensor<8x0xf32>, tensor<0x32xf32>, tensor<8x32xf32>) {
  %n = linalg.matmul ins(%a, %b0 : tensor<8x16xf32>, tensor<16x0xf32>)
      outs(%c0 : tensor<8x0xf32>) -> tensor<8x0xf32>
  %m = linalg.matmul ins(%a0, %b : tensor<0x16xf32>, tensor<16x32xf32>)
      outs(%c : tensor<0x32xf32>) -> tensor<0x32xf32>
  %k = linalg.matmul ins(%ak, %bk : tensor<8x0xf32>, tensor<0x32xf32>)
      outs(%ck : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %n, %m, %k : tensor<8x0xf32>, tensor<0x32xf32>, tensor<8x32xf32>
}
