//===- HoistThreadScratch.cpp - per-thread scratch for OpenMP loops --------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUHOISTTHREADSCRATCHPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// The omp.parallel region an iteration-level alloca can move to: the
/// alloca sits directly in an alloca_scope that is the body of an
/// omp.loop_nest of an omp.wsloop of that omp.parallel.
omp::ParallelOp threadRegionOf(memref::AllocaOp alloca) {
  auto scope = dyn_cast<memref::AllocaScopeOp>(alloca->getParentOp());
  if (!scope || !alloca.getType().hasStaticShape())
    return {};
  auto nest = dyn_cast<omp::LoopNestOp>(scope->getParentOp());
  if (!nest)
    return {};
  auto wsloop = dyn_cast<omp::WsloopOp>(nest->getParentOp());
  if (!wsloop)
    return {};
  return dyn_cast<omp::ParallelOp>(wsloop->getParentOp());
}

/// The omp.parallel region a heap buffer of a parallel loop's iteration
/// can move to, with the dealloc that frees it: a memref.alloc anywhere in
/// the body of an omp.loop_nest of an omp.wsloop of that omp.parallel,
/// whose sizes are known before the region, freed by one memref.dealloc in
/// its own block (so it lives within one iteration of that block).
std::pair<omp::ParallelOp, memref::DeallocOp>
threadRegionOf(memref::AllocOp alloc) {
  auto nest = alloc->getParentOfType<omp::LoopNestOp>();
  auto wsloop = nest ? dyn_cast<omp::WsloopOp>(nest->getParentOp()) : nullptr;
  auto parallel =
      wsloop ? dyn_cast<omp::ParallelOp>(wsloop->getParentOp()) : nullptr;
  if (!parallel || alloc->getParentOfType<omp::ParallelOp>() != parallel)
    return {};
  if (llvm::any_of(alloc->getOperands(), [&](Value size) {
        return parallel.getRegion().isAncestor(size.getParentRegion());
      }))
    return {};
  std::optional<Operation *> free = memref::findDealloc(alloc);
  auto dealloc =
      free && *free ? dyn_cast<memref::DeallocOp>(*free) : memref::DeallocOp();
  if (!dealloc || dealloc->getBlock() != alloc->getBlock())
    return {};
  return {parallel, dealloc};
}

struct TfmCPUHoistThreadScratchPass
    : tfm::impl::TfmCPUHoistThreadScratchPassBase<
          TfmCPUHoistThreadScratchPass> {
  void runOnOperation() override {
    getOperation()->walk([](memref::AllocaOp alloca) {
      if (omp::ParallelOp parallel = threadRegionOf(alloca))
        alloca->moveBefore(&parallel.getRegion().front().front());
    });
    // Heap scratch of a run-time size (a projection's [M, NB] epilogue
    // blocks): once per thread and loop instead of once per iteration.
    // Collected first: moving an alloc's dealloc out of its block under the
    // walk would derail the walk. Moved last to first, so that the buffers
    // keep their order and are freed in reverse.
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : llvm::reverse(allocs)) {
      auto [parallel, dealloc] = threadRegionOf(alloc);
      if (!parallel)
        continue;
      Block &region = parallel.getRegion().front();
      alloc->moveBefore(&region.front());
      dealloc->moveBefore(region.getTerminator());
    }
  }
};

} // namespace
