//===- KernelLaunch.h - gpu.launch ops the GPU passes build -----*- C++ -*-===//
//
// The launches every GPU kernel pass builds (tensor-core attention and
// projections, the few-rows kernel, tfm-gpu-map-to-kernels' kernels), and
// views of their dynamic shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_GPU_KERNELLAUNCH_H
#define TFM_LIB_CODEGEN_GPU_KERNELLAUNCH_H

#include "mlir/IR/Builders.h"

namespace mlir::gpu {
class LaunchOp;
} // namespace mlir::gpu

namespace mlir::tfm {

/// A gpu.launch of `grid` (x, y, z) blocks of `threads` (x) threads, with
/// `sharedBytes` (i32) of dynamic shared memory if given; `b` is left in its
/// body, before the terminator.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, ValueRange grid,
                           Value threads, Value sharedBytes = nullptr);

/// A gpu.launch of `grid` (x, y, z) blocks of `threads` threads with
/// `sharedBytes` of dynamic shared memory (a block's static shared memory
/// stops at 48 KiB); `b` is left in its body, before the terminator.
/// Returns the launch and its shared memory as bytes.
std::pair<gpu::LaunchOp, Value>
createSharedMemoryLaunch(OpBuilder &b, Location loc, ValueRange grid,
                         int64_t threads, int64_t sharedBytes);

/// The `shape` view of `element`s of createSharedMemoryLaunch's `shared`
/// bytes from byte `offset`.
Value sharedView(OpBuilder &b, Location loc, Value shared,
                 ArrayRef<int64_t> shape, Type element, int64_t offset);

} // namespace mlir::tfm

#endif // TFM_LIB_CODEGEN_GPU_KERNELLAUNCH_H
