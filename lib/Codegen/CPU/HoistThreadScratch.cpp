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

struct TfmCPUHoistThreadScratchPass
    : tfm::impl::TfmCPUHoistThreadScratchPassBase<
          TfmCPUHoistThreadScratchPass> {
  void runOnOperation() override {
    getOperation()->walk([](memref::AllocaOp alloca) {
      if (omp::ParallelOp parallel = threadRegionOf(alloca))
        alloca->moveBefore(&parallel.getRegion().front().front());
    });
  }
};

} // namespace
