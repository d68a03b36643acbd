//===- PromoteTileBuffers.cpp - tile scratch buffers on the stack ----------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUPROMOTETILEBUFFERSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

struct TfmCPUPromoteTileBuffersPass
    : tfm::impl::TfmCPUPromoteTileBuffersPassBase<
          TfmCPUPromoteTileBuffersPass> {
  using TfmCPUPromoteTileBuffersPassBase::TfmCPUPromoteTileBuffersPassBase;

  void runOnOperation() override {
    SmallVector<memref::AllocOp> scratch;
    getOperation()->walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      if (isa<scf::ForallOp>(alloc->getParentOp()) && type.hasStaticShape() &&
          type.getElementTypeBitWidth() % 8 == 0 &&
          type.getNumElements() * type.getElementTypeBitWidth() / 8 <=
              maxBytes)
        scratch.push_back(alloc);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocOp alloc : scratch) {
      rewriter.setInsertionPoint(alloc);
      rewriter.replaceOpWithNewOp<memref::AllocaOp>(
          alloc, alloc.getType(), alloc.getAlignmentAttr());
    }
  }
};

} // namespace
