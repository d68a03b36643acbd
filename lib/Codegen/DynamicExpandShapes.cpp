//===- DynamicExpandShapes.cpp - expand_shape as reinterpret_cast ----------===//
//
// LLVM 22's expand-strided-metadata crashes on a memref.expand_shape with
// more than one dynamic dim in a reassociation group
// (llvm/llvm-project#186830, fixed for LLVM 23), such as the [M, N] ->
// [B, S, N] view of a projection's result. This pass rewrites exactly those
// into memref.reinterpret_cast from the source's strided metadata and the
// op's output_shape, and leaves every other expand_shape to upstream.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMRESOLVEDYNAMICEXPANDSHAPESPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// Whether a reassociation group of `op` has more than one dynamic dim.
bool hasMultiDynamicGroup(memref::ExpandShapeOp op) {
  MemRefType type = op.getResultType();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t dim) {
          return type.isDynamicDim(dim);
        }) > 1)
      return true;
  return false;
}

void rewrite(RewriterBase &rewriter, memref::ExpandShapeOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto metadata =
      memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
  SmallVector<OpFoldResult> outputShape = op.getMixedOutputShape();
  SmallVector<OpFoldResult> strides(outputShape.size());
  for (auto [source, group] : llvm::enumerate(op.getReassociationIndices())) {
    // Innermost dim of the group: the source dim's stride; each dim outward
    // steps over the dims inside it.
    OpFoldResult stride = getAsOpFoldResult(metadata.getStrides()[source]);
    for (int64_t i = group.size() - 1; i >= 0; --i) {
      strides[group[i]] = stride;
      if (i > 0) {
        Value next = arith::MulIOp::create(
            rewriter, loc,
            getValueOrCreateConstantIndexOp(rewriter, loc, stride),
            getValueOrCreateConstantIndexOp(rewriter, loc,
                                            outputShape[group[i]]));
        stride = getAsOpFoldResult(next);
      }
    }
  }
  // Where the result type states a size, stride or offset, the cast must
  // state it as a constant too.
  MemRefType type = op.getResultType();
  auto [typeStrides, typeOffset] = type.getStridesAndOffset();
  auto staticIfKnown = [&](int64_t known, OpFoldResult value) -> OpFoldResult {
    return ShapedType::isDynamic(known) ? value
                                        : rewriter.getIndexAttr(known);
  };
  for (auto [i, size] : llvm::enumerate(outputShape)) {
    size = staticIfKnown(type.getDimSize(i), size);
    strides[i] = staticIfKnown(typeStrides[i], strides[i]);
  }
  rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
      op, type, metadata.getBaseBuffer(),
      staticIfKnown(typeOffset, getAsOpFoldResult(metadata.getOffset())),
      outputShape, strides);
}

struct TfmResolveDynamicExpandShapesPass
    : tfm::impl::TfmResolveDynamicExpandShapesPassBase<
          TfmResolveDynamicExpandShapesPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> ops;
    getOperation()->walk([&](memref::ExpandShapeOp op) {
      if (hasMultiDynamicGroup(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (memref::ExpandShapeOp op : ops)
      rewrite(rewriter, op);
  }
};

} // namespace
