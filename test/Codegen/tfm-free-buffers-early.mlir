// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tfm-free-buffers-early))' | FileCheck %s

// Each buffer is freed right after the last op that uses it or a view of
// it (an op whose regions use it counts), not at the end of the block.
// CHECK-LABEL: func.func @freed_after_last_use
// CHECK: %[[A:.+]] = memref.alloc(%{{.+}}) : memref<?x64xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[A]] : memref<?x64xf32>)
// CHECK: %[[B:.+]] = memref.alloc(%{{.+}}) : memref<?x64xf32>
// CHECK: scf.forall
// CHECK:   memref.subview %[[A]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: memref.copy %[[B]], %{{.+}}
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @freed_after_last_use(%n: index, %out: memref<?x64xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc(%n) : memref<?x64xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<?x64xf32>)
  %b = memref.alloc(%n) : memref<?x64xf32>
  scf.forall (%i) in (%n) {
    %row = memref.subview %a[%i, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %dst = memref.subview %b[%i, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %row, %dst : memref<1x64xf32, strided<[64, 1], offset: ?>> to memref<1x64xf32, strided<[64, 1], offset: ?>>
  }
  memref.copy %b, %out : memref<?x64xf32> to memref<?x64xf32>
  memref.dealloc %a : memref<?x64xf32>
  memref.dealloc %b : memref<?x64xf32>
  return
}

// -----

// A buffer freed in another block than the one that allocates it stays
// where the deallocation pipeline put it.
// CHECK-LABEL: func.func @other_block_stays
// CHECK: scf.if
// CHECK:   memref.dealloc
// CHECK: }
// CHECK-NEXT: return
func.func @other_block_stays(%n: index, %flag: i1) {
  %a = memref.alloc(%n) : memref<?xf32>
  scf.if %flag {
    memref.dealloc %a : memref<?xf32>
  }
  return
}
