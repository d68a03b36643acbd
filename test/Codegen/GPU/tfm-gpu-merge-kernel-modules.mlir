// RUN: tfm-opt %s --tfm-gpu-merge-kernel-modules | FileCheck %s

// Every kernel in one gpu.module, named after the module it came from; the
// launches point at it. A module with more than kernels stays.
// CHECK-LABEL: func.func @f
// CHECK: gpu.launch_func @tfm_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @tfm_kernels::@f_kernel_0 blocks
// CHECK: gpu.launch_func @other::@g blocks
// CHECK: gpu.module @tfm_kernels {
// CHECK:   gpu.func @f_kernel() kernel
// CHECK:   gpu.func @f_kernel_0() kernel
// CHECK: }
// CHECK-NOT: gpu.module @f_kernel
// CHECK: gpu.module @other
module attributes {gpu.container_module} {
  func.func @f() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @other::@g blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @f_kernel {
    gpu.func @f_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @other {
    gpu.func @g() kernel {
      gpu.return
    }
    func.func @helper() {
      return
    }
  }
}
