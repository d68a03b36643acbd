// RUN: tfm-opt %s --tfm-gpu-merge-kernel-modules | FileCheck %s

// Every kernel in one gpu.module, named after the module it came from; the
// launches point at it; the constant globals the kernels read, which
// outlining copied into each module, are kept once. A module with anything
// else stays.
// CHECK-LABEL: func.func @f
// CHECK: gpu.launch_func @tfm_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @tfm_kernels::@f_kernel_0 blocks
// CHECK: gpu.launch_func @other::@g blocks
// CHECK: gpu.module @tfm_kernels {
// CHECK:   gpu.func @f_kernel() kernel
// CHECK:     memref.get_global @table
// CHECK:   memref.global "private" constant @table
// CHECK:   gpu.func @f_kernel_0() kernel
// CHECK:     memref.get_global @table
// CHECK-NOT: memref.global
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
      %t = memref.get_global @table : memref<2xf32>
      gpu.return
    }
    memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel() kernel {
      %t = memref.get_global @table : memref<2xf32>
      gpu.return
    }
    memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
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
