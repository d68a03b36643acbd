// RUN: tfm-compile %s --emit=mlir --stage=bufferized -o - | FileCheck %s

// The buffers of a forward on the CPU: a gated FFN's per-block scratch is
// freed at the end of each parallel iteration (ownership-based deallocation
// needs scf's deallocation interfaces registered), the hidden activation is
// freed right after the down projection reads it (tfm-free-buffers-early),
// and the result is computed in the caller's buffer: it is not copied there
// (tfm-drop-self-copies). The only copies move the rows left after the
// register blocks in and out of a zero-padded block's scratch.
// CHECK-LABEL: func.func @ffn_buffers
// CHECK-SAME: %[[OUT:[^:]+]]: memref<?x?x64xf32>) -> i32
// CHECK-NOT: memref.copy {{.+}}, %[[OUT]]
// CHECK: %[[HIDDEN:.+]] = memref.alloc(%{{.+}}) {{.+}} : memref<?x96xf32>
// CHECK: scf.forall
// CHECK:   %[[GATE:.+]] = memref.alloc(%{{.+}}) {{.+}} : memref<?x32xf32>
// CHECK:   %[[UP:.+]] = memref.alloc(%{{.+}}) {{.+}} : memref<?x32xf32>
// CHECK-DAG:   memref.dealloc %[[GATE]]
// CHECK-DAG:   memref.dealloc %[[UP]]
// CHECK: } else {
// CHECK: %[[IN_OUT:.+]] = memref.collapse_shape %[[OUT]] {{\[\[}}0, 1], [2]]
// CHECK: scf.forall
// CHECK:   memref.subview %[[IN_OUT]]
// CHECK: memref.dealloc %[[HIDDEN]]
// CHECK-NOT: memref.copy {{.+}}, %[[OUT]]
// CHECK-NOT: memref.copy {{.+}}, %[[IN_OUT]] :
// CHECK: return
func.func @ffn_buffers(%x: tensor<?x?x64xf32>, %g: tensor<96x64xf32>, %u: tensor<96x64xf32>,
                       %d: tensor<64x96xf32>) -> tensor<?x?x64xf32> {
  %y = tfm.ffn swiglu %x gate(%g) up(%u) down(%d)
      : (tensor<?x?x64xf32>, tensor<96x64xf32>, tensor<96x64xf32>, tensor<64x96xf32>)
      -> tensor<?x?x64xf32>
  %r = arith.addf %x, %y : tensor<?x?x64xf32>
  return %r : tensor<?x?x64xf32>
}
