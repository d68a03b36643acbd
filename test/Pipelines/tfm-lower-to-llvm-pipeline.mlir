// RUN: tfm-opt %s --tfm-lower-to-llvm-pipeline | FileCheck %s
// RUN: tfm-opt %s --tfm-lower-to-llvm-pipeline | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

// The whole bundled-example-style block reaches the LLVM dialect with a C
// interface wrapper taking one descriptor per input (7) and output (1).
// CHECK-NOT: tfm.
// CHECK-NOT: linalg.
// CHECK: llvm.func @block(
// The attention tiles run on OpenMP threads.
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK: llvm.func @_mlir_ciface_block(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK-SAME: -> i32 attributes {llvm.emit_c_interface
// LLVMIR: call void {{.*}}@__kmpc_fork_call(
// LLVMIR: define {{.*}}i32 @_mlir_ciface_block(ptr
func.func @block(%x: tensor<?x?x32xf32>, %g: tensor<32xf32>, %wq: tensor<32x32xf32>,
                 %wkv: tensor<8x32xf32>, %wg: tensor<48x32xf32>, %wd: tensor<32x48xf32>,
                 %pos: tensor<?xi32>) -> tensor<?x?x32xf32> {
  %y = tfm.decoder_block pre rms_norm %x heads(4, 1) eps(1.0e-05)
      attn_norm(%g) q(%wq) k(%wkv) v(%wkv) o(%wq) ffn_norm(%g)
      swiglu gate(%wg) up(%wg) down(%wd) positions(%pos)
      {mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 1.0e+04, style = half>}
      : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<8x32xf32>,
         tensor<8x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48x32xf32>, tensor<32x48xf32>, tensor<?xi32>) -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}
