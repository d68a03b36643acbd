// RUN: tfm-opt %s --pass-pipeline="builtin.module(gpu.module(tfm-nvvm-register-reallocation))" | FileCheck %s

// A kernel that moves registers between warpgroups (setmaxnreg) runs one
// block a multiprocessor, so that ptxas knows each warpgroup's registers at
// entry; a kernel that moves none, or that already says, is left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.func @moves() attributes {nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: llvm.func @stays() attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>}
// CHECK: llvm.func @said() attributes {nvvm.kernel, nvvm.minctasm = 2 : i32}
gpu.module @kernels {
  llvm.func @moves() attributes {nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>} {
    nvvm.setmaxregister increase 232
    llvm.return
  }
  llvm.func @stays() attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>} {
    llvm.return
  }
  llvm.func @said() attributes {nvvm.kernel, nvvm.minctasm = 2 : i32} {
    nvvm.setmaxregister decrease 40
    llvm.return
  }
}
