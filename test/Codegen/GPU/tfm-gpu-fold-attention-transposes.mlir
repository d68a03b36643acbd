// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-gpu-fold-attention-transposes))" | FileCheck %s

// Heads split by transposes of [B, S, H, D] rows and merged by a transpose
// of the result: the kernel reads transposed views of the rows and writes
// a transposed view of a [B, S, H, D] buffer, which replaces the merge.
// CHECK-LABEL: func.func @split_and_merged
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x?x8x64xbf16>, %[[K:[^:]*]]: tensor<?x?x2x64xbf16>, %[[V:[^:]*]]: tensor<?x?x2x64xbf16>)
// CHECK: %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only : tensor<?x?x8x64xbf16> to memref<?x?x8x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: %[[QT:.*]] = memref.transpose %[[QB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK: %[[KT:.*]] = memref.transpose %[[KB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[VT:.*]] = memref.transpose %[[VB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x8x64xbf16>
// CHECK: %[[OUTT:.*]] = memref.transpose %[[OUT]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x?x8x64xbf16> to memref<?x8x?x64xbf16, strided<[?, 64, 512, 1]>>
// CHECK: tfm.buffer_attention %[[QT]], %[[KT]], %[[VT]] into %[[OUTT]]
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x8x64xbf16> to tensor<?x?x8x64xbf16>
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
func.func @split_and_merged(%q: tensor<?x?x8x64xbf16>, %k: tensor<?x?x2x64xbf16>, %v: tensor<?x?x2x64xbf16>) -> tensor<?x?x8x64xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x8x64xbf16>
  %s = tensor.dim %q, %c1 : tensor<?x?x8x64xbf16>
  %qe = tensor.empty(%b, %s) : tensor<?x8x?x64xbf16>
  %qt = linalg.transpose ins(%q : tensor<?x?x8x64xbf16>) outs(%qe : tensor<?x8x?x64xbf16>) permutation = [0, 2, 1, 3]
  %ke = tensor.empty(%b, %s) : tensor<?x2x?x64xbf16>
  %kt = linalg.transpose ins(%k : tensor<?x?x2x64xbf16>) outs(%ke : tensor<?x2x?x64xbf16>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<?x?x2x64xbf16>) outs(%ke : tensor<?x2x?x64xbf16>) permutation = [0, 2, 1, 3]
  %qb = bufferization.to_buffer %qt read_only : tensor<?x8x?x64xbf16> to memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
  %kb = bufferization.to_buffer %kt read_only : tensor<?x2x?x64xbf16> to memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
  %vb = bufferization.to_buffer %vt read_only : tensor<?x2x?x64xbf16> to memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
  %o = memref.alloc(%b, %s) : memref<?x8x?x64xbf16>
  tfm.buffer_attention %qb, %kb, %vb into %o {mask = #tfm.mask<causal>}
      : memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>,
        memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> into memref<?x8x?x64xbf16>
  %ot = bufferization.to_tensor %o restrict writable : memref<?x8x?x64xbf16> to tensor<?x8x?x64xbf16>
  %me = tensor.empty(%b, %s) : tensor<?x?x8x64xbf16>
  %m = linalg.transpose ins(%ot : tensor<?x8x?x64xbf16>) outs(%me : tensor<?x?x8x64xbf16>) permutation = [0, 2, 1, 3]
  return %m : tensor<?x?x8x64xbf16>
}

// -----

// Kept: a transposed operand whose buffer something else also reads, and a
// result read by more than its merge.
// CHECK-LABEL: func.func @kept
// CHECK: %[[QT:.*]] = linalg.transpose
// CHECK: bufferization.to_buffer %[[QT]] read_only
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK: tfm.buffer_attention %{{.*}}, %{{.*}}, %{{.*}} into %[[OUT]]
// CHECK: linalg.transpose
func.func @kept(%q: tensor<?x?x8x64xbf16>, %k: memref<?x2x?x64xbf16>, %v: memref<?x2x?x64xbf16>) -> (tensor<?x?x8x64xbf16>, tensor<?x8x?x64xbf16>, bf16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x8x64xbf16>
  %s = tensor.dim %q, %c1 : tensor<?x?x8x64xbf16>
  %qe = tensor.empty(%b, %s) : tensor<?x8x?x64xbf16>
  %qt = linalg.transpose ins(%q : tensor<?x?x8x64xbf16>) outs(%qe : tensor<?x8x?x64xbf16>) permutation = [0, 2, 1, 3]
  %qb = bufferization.to_buffer %qt read_only : tensor<?x8x?x64xbf16> to memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
  %o = memref.alloc(%b, %s) : memref<?x8x?x64xbf16>
  tfm.buffer_attention %qb, %k, %v into %o
      : memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16> into memref<?x8x?x64xbf16>
  %ot = bufferization.to_tensor %o restrict writable : memref<?x8x?x64xbf16> to tensor<?x8x?x64xbf16>
  %me = tensor.empty(%b, %s) : tensor<?x?x8x64xbf16>
  %m = linalg.transpose ins(%ot : tensor<?x8x?x64xbf16>) outs(%me : tensor<?x?x8x64xbf16>) permutation = [0, 2, 1, 3]
  %first = memref.load %qb[%c0, %c0, %c0, %c0] : memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
  return %m, %ot, %first : tensor<?x?x8x64xbf16>, tensor<?x8x?x64xbf16>, bf16
}

// -----

// Decode's new k ([B, 1, H, D] -> [B, H, 1, D] on its way into the cache):
// only a unit dim moves, so the transpose is a collapse and an expansion,
// views of the same data; a transpose of two dims that are not 1 stays.
// CHECK-LABEL: func.func @unit_dims_moved
// CHECK-SAME: (%[[K:.*]]: tensor<?x1x4x64xbf16>, %[[Q:.*]]: tensor<?x3x4x64xbf16>)
// CHECK-NOT: linalg.transpose ins(%[[K]]
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[K]] {{\[}}[0], [1, 2], [3]] : tensor<?x1x4x64xbf16> into tensor<?x4x64xbf16>
// CHECK: %[[B:.*]] = tensor.dim %[[K]], %{{.*}}
// CHECK: %[[HEADS:.*]] = tensor.expand_shape %[[ROWS]] {{\[}}[0], [1], [2, 3]] output_shape [%[[B]], 4, 1, 64] : tensor<?x4x64xbf16> into tensor<?x4x1x64xbf16>
// CHECK: linalg.transpose ins(%[[Q]]
// CHECK: return %[[HEADS]]
func.func @unit_dims_moved(%k: tensor<?x1x4x64xbf16>, %q: tensor<?x3x4x64xbf16>)
    -> (tensor<?x4x1x64xbf16>, tensor<?x4x3x64xbf16>) {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %k, %c0 : tensor<?x1x4x64xbf16>
  %e = tensor.empty(%b) : tensor<?x4x1x64xbf16>
  %t = linalg.transpose ins(%k : tensor<?x1x4x64xbf16>) outs(%e : tensor<?x4x1x64xbf16>) permutation = [0, 2, 1, 3]
  %bq = tensor.dim %q, %c0 : tensor<?x3x4x64xbf16>
  %eq = tensor.empty(%bq) : tensor<?x4x3x64xbf16>
  %tq = linalg.transpose ins(%q : tensor<?x3x4x64xbf16>) outs(%eq : tensor<?x4x3x64xbf16>) permutation = [0, 2, 1, 3]
  return %t, %tq : tensor<?x4x1x64xbf16>, tensor<?x4x3x64xbf16>
}
