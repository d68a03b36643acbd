// RUN: tfm-opt %s --tfm-resolve-dynamic-expand-shapes --canonicalize --split-input-file | FileCheck %s

// [M, N] -> [B, S, N] (two dynamic dims in one group, which LLVM 22's
// expand-strided-metadata cannot take) becomes a reinterpret_cast: sizes
// from output_shape, strides built outward from the source's.
// CHECK-LABEL: func.func @rows_to_batch_and_sequence
// CHECK-SAME: (%[[SRC:.+]]: memref<?x256xf32>, %[[B:.+]]: index, %[[S:.+]]: index)
// CHECK: %[[C256:.+]] = arith.constant 256 : index
// CHECK: %[[STRIDE:.+]] = arith.muli %[[S]], %[[C256]] : index
// CHECK: memref.reinterpret_cast %[[SRC]] to offset: [0], sizes: [%[[B]], %[[S]], 8, 32], strides: [%[[STRIDE]], 256, 32, 1]
// CHECK-NOT: memref.expand_shape
func.func @rows_to_batch_and_sequence(%m: memref<?x256xf32>, %b: index, %s: index)
    -> memref<?x?x8x32xf32> {
  %e = memref.expand_shape %m [[0, 1], [2, 3]] output_shape [%b, %s, 8, 32]
      : memref<?x256xf32> into memref<?x?x8x32xf32>
  return %e : memref<?x?x8x32xf32>
}

// -----

// A strided source keeps its strides and offset.
// CHECK-LABEL: func.func @strided_source
// CHECK-SAME: (%[[SRC:.+]]: memref<?x64xf32, strided<[?, 1], offset: ?>>, %[[B:.+]]: index, %[[S:.+]]: index)
// CHECK: %{{.+}}, %[[OFFSET:.+]], %{{.+}}:2, %[[STRIDES:.+]]:2 = memref.extract_strided_metadata %[[SRC]]
// CHECK: %[[OUTER:.+]] = arith.muli %[[STRIDES]]#0, %[[S]] : index
// CHECK: memref.reinterpret_cast %[[SRC]] to offset: [%[[OFFSET]]], sizes: [%[[B]], %[[S]], 64], strides: [%[[OUTER]], %[[STRIDES]]#0, 1]
func.func @strided_source(%m: memref<?x64xf32, strided<[?, 1], offset: ?>>, %b: index, %s: index)
    -> memref<?x?x64xf32, strided<[?, ?, 1], offset: ?>> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 64]
      : memref<?x64xf32, strided<[?, 1], offset: ?>> into memref<?x?x64xf32, strided<[?, ?, 1], offset: ?>>
  return %e : memref<?x?x64xf32, strided<[?, ?, 1], offset: ?>>
}

// -----

// One dynamic dim per group: left to upstream.
// CHECK-LABEL: func.func @one_dynamic_dim
// CHECK: memref.expand_shape
func.func @one_dynamic_dim(%m: memref<?x256xf32>, %b: index) -> memref<?x8x32xf32> {
  %e = memref.expand_shape %m [[0], [1, 2]] output_shape [%b, 8, 32]
      : memref<?x256xf32> into memref<?x8x32xf32>
  return %e : memref<?x8x32xf32>
}
