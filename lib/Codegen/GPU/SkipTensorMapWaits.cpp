//===- SkipTensorMapWaits.cpp - no host wait before a tensor map ----------===//
//
// gpu-async-region ends a stream's chain before every host op that may
// touch memory: `gpu.wait [%t]` (the host synchronizes the stream), then
// `%new = gpu.wait async` starts another stream. A tensor map
// (nvgpu.tma.create.descriptor) only reads a memref's descriptor on the
// host, so the chain can go on through it.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUSKIPTENSORMAPWAITSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// The `gpu.wait async` without dependencies that starts the next chain
/// after the host wait `wait`, when only tensor maps and ops free of memory
/// effects (at least one tensor map) lie between the two; else null.
gpu::WaitOp nextChainStart(gpu::WaitOp wait) {
  bool maps = false;
  for (Operation *op = wait->getNextNode(); op; op = op->getNextNode()) {
    if (auto start = dyn_cast<gpu::WaitOp>(op))
      return maps && start.getAsyncToken() &&
                     start.getAsyncDependencies().empty()
                 ? start
                 : nullptr;
    if (isa<nvgpu::TmaCreateDescriptorOp>(op))
      maps = true;
    else if (!isMemoryEffectFree(op))
      return nullptr;
  }
  return nullptr;
}

struct TfmGPUSkipTensorMapWaitsPass
    : tfm::impl::TfmGPUSkipTensorMapWaitsPassBase<
          TfmGPUSkipTensorMapWaitsPass> {
  void runOnOperation() override {
    SmallVector<gpu::WaitOp> hostWaits;
    getOperation().walk([&](gpu::WaitOp wait) {
      if (!wait.getAsyncToken() && wait.getAsyncDependencies().size() == 1)
        hostWaits.push_back(wait);
    });
    for (gpu::WaitOp wait : hostWaits) {
      gpu::WaitOp start = nextChainStart(wait);
      if (!start)
        continue;
      start.getAsyncToken().replaceAllUsesWith(wait.getAsyncDependencies()[0]);
      start.erase();
      wait.erase();
    }
  }
};

} // namespace
