// RUN: tfm-opt %s --pass-pipeline="builtin.module(gpu.module(tfm-nvvm-extern-dynamic-shared-memory))" | FileCheck %s

// The zero-length shared array convert-gpu-to-nvvm makes of
// gpu.dynamic_shared_memory becomes an external declaration (PTX's
// .extern .shared array) aligned to 1024 bytes (wgmma's swizzled tiles); a
// static shared array and a zero-length global array elsewhere stay as
// they are.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
// CHECK: llvm.mlir.global internal @empty() {addr_space = 1 : i32} : !llvm.array<0 x i8>
gpu.module @kernels {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
  llvm.mlir.global internal @empty() {addr_space = 1 : i32} : !llvm.array<0 x i8>
}
