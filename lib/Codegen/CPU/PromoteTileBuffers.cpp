//===- PromoteTileBuffers.cpp - tile scratch buffers on the stack ----------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUPROMOTETILEBUFFERSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// Whether a buffer with these aliases lives within one iteration of `loop`:
/// no alias is carried to the next iteration or out of the loop.
bool isIterationLocal(scf::ForOp loop,
                      const BufferViewFlowAnalysis::ValueSetT &aliases) {
  Operation *yield = loop.getBody()->getTerminator();
  return llvm::none_of(aliases, [&](Value alias) {
    if (alias.getDefiningOp() == loop ||
        llvm::is_contained(loop.getRegionIterArgs(), alias))
      return true;
    return llvm::is_contained(yield->getOperands(), alias);
  });
}

struct TfmCPUPromoteTileBuffersPass
    : tfm::impl::TfmCPUPromoteTileBuffersPassBase<
          TfmCPUPromoteTileBuffersPass> {
  using TfmCPUPromoteTileBuffersPassBase::TfmCPUPromoteTileBuffersPassBase;

  bool isSmallStatic(MemRefType type) {
    return type.hasStaticShape() && type.getElementTypeBitWidth() % 8 == 0 &&
           type.getNumElements() * type.getElementTypeBitWidth() / 8 <=
               maxBytes;
  }

  /// The block whose start gets the buffer's alloca: the enclosing
  /// scf.forall body (the tile), or the function body for a buffer inside a
  /// sequential loop. The buffer moves out of scf.if and scf.for regions as
  /// long as it lives within one iteration of each loop; null if it stays.
  Block *scratchBlock(memref::AllocOp alloc,
                      const BufferViewFlowAnalysis &analysis) {
    BufferViewFlowAnalysis::ValueSetT aliases =
        analysis.resolve(alloc.getResult());
    // A buffer freed by hand has its lifetime decided already.
    for (Value alias : aliases)
      if (llvm::any_of(alias.getUsers(), llvm::IsaPred<memref::DeallocOp>))
        return nullptr;
    bool leftLoop = false;
    for (Operation *parent = alloc->getParentOp(); parent;
         parent = parent->getParentOp()) {
      if (auto forall = dyn_cast<scf::ForallOp>(parent))
        return forall.getBody();
      if (auto func = dyn_cast<func::FuncOp>(parent))
        return leftLoop ? &func.getBody().front() : nullptr;
      if (auto loop = dyn_cast<scf::ForOp>(parent)) {
        if (!isIterationLocal(loop, aliases))
          return nullptr;
        leftLoop = true;
        continue;
      }
      if (!isa<scf::IfOp>(parent))
        return nullptr;
    }
    return nullptr;
  }

  void runOnOperation() override {
    BufferViewFlowAnalysis analysis(getOperation());
    SmallVector<std::pair<memref::AllocOp, Block *>> scratch;
    getOperation()->walk([&](memref::AllocOp alloc) {
      if (!isSmallStatic(alloc.getType()))
        return;
      if (Block *block = scratchBlock(alloc, analysis))
        scratch.emplace_back(alloc, block);
    });
    IRRewriter rewriter(&getContext());
    // In reverse, so that the allocas keep the buffers' order.
    for (auto [alloc, block] : llvm::reverse(scratch)) {
      rewriter.setInsertionPointToStart(block);
      auto alloca = memref::AllocaOp::create(rewriter, alloc.getLoc(),
                                             alloc.getType(),
                                             alloc.getAlignmentAttr());
      rewriter.replaceOp(alloc, alloca.getResult());
    }
  }
};

} // namespace
