// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-drop-self-copies))' | FileCheck %s

// A result computed in the caller's buffer through an [M, N] view, then
// copied from the [B, S, N] view of it back onto that buffer: the copy goes.
// CHECK-LABEL: func.func @copy_onto_itself
// CHECK-NOT: memref.copy
// CHECK: return
func.func @copy_onto_itself(%out: memref<?x?x256xf32>, %b: index, %s: index) {
  %c = memref.collapse_shape %out [[0, 1], [2]] : memref<?x?x256xf32> into memref<?x256xf32>
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [%b, %s, 256] : memref<?x256xf32> into memref<?x?x256xf32>
  memref.copy %e, %out : memref<?x?x256xf32> to memref<?x?x256xf32>
  return
}

// -----

// Another buffer, or the same one reshaped along other dims, is copied.
// CHECK-LABEL: func.func @real_copies_stay
// CHECK: memref.copy %{{.+}}, %[[OUT:.+]] :
// CHECK: memref.copy %{{.+}}, %[[OUT]] :
func.func @real_copies_stay(%out: memref<2x3x4xf32>, %other: memref<2x3x4xf32>) {
  memref.copy %other, %out : memref<2x3x4xf32> to memref<2x3x4xf32>
  %c = memref.collapse_shape %out [[0], [1, 2]] : memref<2x3x4xf32> into memref<2x12xf32>
  %e = memref.expand_shape %c [[0], [1, 2]] output_shape [2, 3, 4] : memref<2x12xf32> into memref<2x3x4xf32>
  %c2 = memref.collapse_shape %other [[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
  %e2 = memref.expand_shape %c2 [[0, 1], [2]] output_shape [2, 3, 4] : memref<6x4xf32> into memref<2x3x4xf32>
  memref.copy %e2, %out : memref<2x3x4xf32> to memref<2x3x4xf32>
  return
}
