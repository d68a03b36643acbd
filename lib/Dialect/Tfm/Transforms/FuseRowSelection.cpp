//===- FuseRowSelection.cpp - select rows before row-wise ops --------------===//
//
// A slice of rows of a row-wise op's result is the same op on the slice of
// its input rows: the LM head of a prompt's last position projects one row
// per sequence, not all of them.
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Transforms.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSEROWSELECTIONPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// Whether `slice` selects rows only: same rank, unit strides, the whole
/// last dim.
bool selectsRows(tensor::ExtractSliceOp slice) {
  RankedTensorType source = slice.getSourceType();
  RankedTensorType result = slice.getResultType();
  if (source.getRank() != result.getRank() || source.getRank() < 2 ||
      source.isDynamicDim(source.getRank() - 1) ||
      !llvm::all_of(slice.getMixedStrides(), [](OpFoldResult stride) {
        return isConstantIntValue(stride, 1);
      }))
    return false;
  return isConstantIntValue(slice.getMixedOffsets().back(), 0) &&
         isConstantIntValue(slice.getMixedSizes().back(),
                            source.getShape().back());
}

/// Whether two slices select the same rows.
bool sameSelection(tensor::ExtractSliceOp a, tensor::ExtractSliceOp b) {
  auto equal = [](ArrayRef<OpFoldResult> x, ArrayRef<OpFoldResult> y) {
    return llvm::all_of(llvm::zip_equal(x, y), [](auto pair) {
      return isEqualConstantIntOrValue(std::get<0>(pair), std::get<1>(pair));
    });
  };
  return a.getResultType() == b.getResultType() &&
         equal(a.getMixedOffsets(), b.getMixedOffsets()) &&
         equal(a.getMixedSizes(), b.getMixedSizes());
}

/// The same rows of `value`, whose leading dims are those of the sliced
/// tensor (its trailing dims, if any, are taken whole; `rank` leading dims
/// are selected).
Value selectRows(RewriterBase &rewriter, tensor::ExtractSliceOp slice,
                 Value value, unsigned rank) {
  Location loc = slice.getLoc();
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets, sizes;
  SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
  SmallVector<int64_t> shape;
  for (unsigned dim = 0; dim < type.getRank(); ++dim) {
    if (dim < rank) {
      offsets.push_back(slice.getMixedOffsets()[dim]);
      sizes.push_back(slice.getMixedSizes()[dim]);
      shape.push_back(slice.getResultType().getDimSize(dim));
    } else {
      offsets.push_back(rewriter.getIndexAttr(0));
      sizes.push_back(tensor::getMixedSize(rewriter, loc, value, dim));
      shape.push_back(type.getDimSize(dim));
    }
  }
  return tensor::ExtractSliceOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
      value, offsets, sizes, strides);
}

/// slice(op(x, ...)) -> op(slice(x), ...) for an op whose result row i
/// depends only on row i of its row-wise operands: tfm.linear, the norms,
/// tfm.ffn, tfm.embedding (its ids) and elementwise ops on tensors of the
/// result's shape. Every user of the result must select the same rows (the
/// op would be computed twice otherwise); all of them are replaced.
struct SelectRowsBeforeRowWiseOp : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    if (!selectsRows(slice))
      return failure();
    Operation *producer = slice.getSource().getDefiningOp();
    if (!producer || producer->getNumResults() != 1)
      return failure();
    // The operands that are row-wise, and how many leading dims they share
    // with the result.
    unsigned rank = slice.getResultType().getRank();
    SmallVector<std::pair<unsigned, unsigned>> rowOperands;
    if (isa<LinearOp, RMSNormOp, LayerNormOp, FFNOp>(producer)) {
      unsigned input = isa<FFNOp>(producer)
                           ? cast<FFNOp>(producer).getInputMutable()
                                 .getOperandNumber()
                           : 0;
      rowOperands.push_back({input, rank - 1});
    } else if (isa<EmbeddingOp>(producer)) {
      rowOperands.push_back({0, rank - 1});
    } else if (producer->hasTrait<OpTrait::Elementwise>()) {
      for (OpOperand &operand : producer->getOpOperands()) {
        if (operand.get().getType() != slice.getSourceType())
          return failure();
        rowOperands.push_back({operand.getOperandNumber(), rank});
      }
    } else {
      return failure();
    }

    // Every user selects the same rows; the new op goes before the first.
    SmallVector<tensor::ExtractSliceOp> slices;
    tensor::ExtractSliceOp first = slice;
    for (Operation *user : producer->getUsers()) {
      auto other = dyn_cast<tensor::ExtractSliceOp>(user);
      if (!other || other->getBlock() != slice->getBlock() ||
          !sameSelection(slice, other))
        return failure();
      slices.push_back(other);
      if (other->isBeforeInBlock(first))
        first = other;
    }

    rewriter.setInsertionPoint(first);
    IRMapping selectedOperands;
    for (auto [number, sharedRank] : rowOperands) {
      Value operand = producer->getOperand(number);
      selectedOperands.map(operand,
                           selectRows(rewriter, first, operand, sharedRank));
    }
    Operation *selected = rewriter.clone(*producer, selectedOperands);
    selected->getResult(0).setType(slice.getResultType());
    for (tensor::ExtractSliceOp other : slices)
      rewriter.replaceOp(other, selected->getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

struct TfmFuseRowSelectionPass
    : tfm::impl::TfmFuseRowSelectionPassBase<TfmFuseRowSelectionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateTfmRowSelectionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::tfm::populateTfmRowSelectionPatterns(RewritePatternSet &patterns) {
  patterns.add<SelectRowsBeforeRowWiseOp>(patterns.getContext());
}
