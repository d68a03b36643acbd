//===- DynamicSchedule.cpp - dynamic schedule for OpenMP loops -------------===//

#include "tfm/Codegen/LoopSchedule.h"
#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUDYNAMICSCHEDULEPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

struct TfmCPUDynamicSchedulePass
    : tfm::impl::TfmCPUDynamicSchedulePassBase<TfmCPUDynamicSchedulePass> {
  void runOnOperation() override {
    getOperation()->walk([](omp::WsloopOp loop) {
      if (!loop.getScheduleKindAttr() && !tfm::hasStaticSchedule(loop.getLoc()))
        loop.setScheduleKindAttr(omp::ClauseScheduleKindAttr::get(
            loop.getContext(), omp::ClauseScheduleKind::Dynamic));
    });
  }
};

} // namespace
