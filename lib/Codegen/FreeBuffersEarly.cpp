//===- FreeBuffersEarly.cpp - free each buffer after its last use ----------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFREEBUFFERSEARLYPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

struct TfmFreeBuffersEarlyPass
    : tfm::impl::TfmFreeBuffersEarlyPassBase<TfmFreeBuffersEarlyPass> {
  void runOnOperation() override {
    BufferViewFlowAnalysis analysis(getOperation());
    SmallVector<memref::DeallocOp> deallocs;
    getOperation()->walk([&](memref::DeallocOp dealloc) {
      auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
      if (alloc && alloc->getBlock() == dealloc->getBlock())
        deallocs.push_back(dealloc);
    });
    for (memref::DeallocOp dealloc : deallocs) {
      Block *block = dealloc->getBlock();
      Operation *last = dealloc.getMemref().getDefiningOp();
      bool usedElsewhere = false;
      for (Value alias : analysis.resolve(dealloc.getMemref()))
        for (Operation *user : alias.getUsers()) {
          if (user == dealloc)
            continue;
          Operation *ancestor = block->findAncestorOpInBlock(*user);
          if (!ancestor) {
            usedElsewhere = true; // outside this block: leave the free
            continue;
          }
          if (last->isBeforeInBlock(ancestor))
            last = ancestor;
        }
      if (!usedElsewhere && last->isBeforeInBlock(dealloc))
        dealloc->moveAfter(last);
    }
  }
};

} // namespace
