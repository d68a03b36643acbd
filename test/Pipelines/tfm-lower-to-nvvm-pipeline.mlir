// RUN: tfm-opt %s --tfm-lower-to-nvvm-pipeline="chip=sm_90a" | FileCheck %s

// The CUDA target's pipeline from tfm-opt: a norm and a projection with a
// run-time row count reach host code in the LLVM dialect that launches
// PTX kernels through the mgpu* runtime, on one stream.
// CHECK-NOT: tfm.
// CHECK-NOT: linalg.
// CHECK: llvm.func @norm_linear(
// CHECK: llvm.call @mgpuStreamCreate()
// CHECK: llvm.call @mgpuMemAlloc(
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @tfm_kernels::@norm_linear_kernel
// CHECK: llvm.call @mgpuStreamSynchronize(
// CHECK: llvm.func @_mlir_ciface_norm_linear(
// CHECK: gpu.binary @tfm_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90a
func.func @norm_linear(%x: tensor<?x64xf32>, %g: tensor<64xf32>,
                       %w: tensor<96x64xf32>) -> tensor<?x96xf32> {
  %n = tfm.rms_norm %x, %g eps(1.0e-05) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %y = tfm.linear %n, %w : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}
