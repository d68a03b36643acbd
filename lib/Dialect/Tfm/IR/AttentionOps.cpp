//===- AttentionOps.cpp - tfm.attention and the mask ops -------------------===//

#include "ShapeChecks.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Utils/AttentionDims.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

MaskAttr AttentionOp::getMaskOrNone() {
  if (MaskAttr mask = getMaskAttr())
    return mask;
  return MaskAttr::getNone(getContext());
}

double AttentionOp::getScaleOrDefault() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  int64_t headDim = getQuery().getType().getDimSize(kHead);
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

/// The checks on the dims of rank-4 query, key and value (and kv_lengths)
/// that tfm.attention and tfm.buffer_attention share.
static LogicalResult verifyAttentionDims(Operation *op, ShapedType key,
                                         ShapedType value,
                                         const AttentionDims &dims,
                                         ShapedType lengths) {
  if (failed(checkStatic(op, "query head count", dims.queryHeads)) ||
      failed(checkStatic(op, "key head count", dims.kvHeads)) ||
      failed(checkStatic(op, "query head dim", dims.headDim)) ||
      failed(checkStatic(op, "value head dim", dims.valueDim)) ||
      failed(checkSize(op, "key batch", key.getDimSize(kBatch), "query batch",
                       dims.batch)) ||
      failed(checkSize(op, "value batch", value.getDimSize(kBatch),
                       "query batch", dims.batch)) ||
      failed(checkSize(op, "value head count", value.getDimSize(kHeads),
                       "key head count", dims.kvHeads)) ||
      failed(checkSize(op, "value length", value.getDimSize(kSeq),
                       "key length", dims.kvSeq)) ||
      failed(checkSize(op, "key head dim", key.getDimSize(kHead),
                       "query head dim", dims.headDim)))
    return failure();
  for (auto [name, size] : {std::pair<StringRef, int64_t>{"key head count",
                                                          dims.kvHeads},
                            {"query head dim", dims.headDim}}) {
    if (size < 1)
      return op->emitOpError()
             << "expected " << name << " to be positive, got " << size;
  }
  if (dims.queryHeads % dims.kvHeads != 0)
    return op->emitOpError()
           << "expected key head count (" << dims.kvHeads
           << ") to divide query head count (" << dims.queryHeads << ")";
  if (lengths && failed(checkSize(op, "kv_lengths size",
                                  lengths.getDimSize(0), "batch", dims.batch)))
    return failure();
  return success();
}

/// `scale` and `softcap`, when present, are positive.
static LogicalResult verifyScales(Operation *op,
                                  std::optional<APFloat> scale,
                                  std::optional<APFloat> softcap) {
  if (scale && failed(checkPositive(op, "scale", scale->convertToDouble())))
    return failure();
  if (softcap &&
      failed(checkPositive(op, "softcap", softcap->convertToDouble())))
    return failure();
  return success();
}

LogicalResult AttentionOp::verify() {
  Operation *op = getOperation();
  if (failed(checkRank(op, "query", getQuery(), 4, "[B, Hq, Sq, D]")) ||
      failed(checkRank(op, "key", getKey(), 4, "[B, Hkv, Skv, D]")) ||
      failed(checkRank(op, "value", getValue(), 4, "[B, Hkv, Skv, Dv]")))
    return failure();
  Value lengths = getKvLengths();
  if (lengths && failed(checkRank(op, "kv_lengths", lengths, 1, "[B]")))
    return failure();

  RankedTensorType query = getQuery().getType(), key = getKey().getType(),
                   value = getValue().getType();
  AttentionDims dims = AttentionDims::get(query, key, value);
  ShapedType lengthsType; // null without kv_lengths
  if (lengths)
    lengthsType = tensorType(lengths);
  if (failed(verifyAttentionDims(op, key, value, dims, lengthsType)))
    return failure();

  Type elementType = query.getElementType();
  if (failed(checkElementType(op, "key", getKey(), "query", elementType)) ||
      failed(checkElementType(op, "value", getValue(), "query", elementType)) ||
      failed(checkResult(op, dims.resultShape(), "query", elementType)))
    return failure();

  static constexpr StringRef scoreDimNames[] = {
      "batch", "query head count", "query length", "key length"};
  if (Value mask = getDenseMask())
    if (failed(checkBroadcastable(op, "dense_mask", mask, dims.scoreShape(),
                                  scoreDimNames)))
      return failure();
  if (Value bias = getBias()) {
    if (failed(checkElementType(op, "bias", bias, "query", elementType)) ||
        failed(checkBroadcastable(op, "bias", bias, dims.scoreShape(),
                                  scoreDimNames)))
      return failure();
  }
  return verifyScales(op, getScale(), getSoftcap());
}

//===----------------------------------------------------------------------===//
// BufferAttentionOp
//===----------------------------------------------------------------------===//

MaskAttr BufferAttentionOp::getMaskOrNone() {
  if (MaskAttr mask = getMaskAttr())
    return mask;
  return MaskAttr::getNone(getContext());
}

double BufferAttentionOp::getScaleOrDefault() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  int64_t headDim = getQuery().getType().getDimSize(kHead);
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

LogicalResult BufferAttentionOp::verify() {
  Operation *op = getOperation();
  MemRefType key = getKey().getType(), value = getValue().getType(),
             result = getResult().getType();
  AttentionDims dims = AttentionDims::get(getQuery().getType(), key, value);
  ShapedType lengthsType; // null without kv_lengths
  if (Value lengths = getKvLengths())
    lengthsType = cast<ShapedType>(lengths.getType());
  if (failed(verifyAttentionDims(op, key, value, dims, lengthsType)))
    return failure();
  SmallVector<int64_t, 4> expected = dims.resultShape();
  static constexpr StringRef names[] = {"batch", "head count", "length",
                                        "head dim"};
  static constexpr StringRef references[] = {
      "query batch", "query head count", "query length", "value head dim"};
  for (int64_t d = 0; d < 4; ++d)
    if (failed(checkSize(op, ("result " + names[d]).str(),
                         result.getDimSize(d), references[d], expected[d])))
      return failure();
  return verifyScales(op, getScale(), getSoftcap());
}

//===----------------------------------------------------------------------===//
// Mask folding
//===----------------------------------------------------------------------===//

/// Whether dim `maskDim` of a mask op's result provably equals dim
/// `operandDim` of `operand`: both static and equal, or the mask's dynamic
/// size is `tensor.dim %operand, operandDim`.
static bool isSameSize(Value mask, ValueRange maskDynamicSizes,
                       unsigned maskDim, Value operand, unsigned operandDim) {
  RankedTensorType maskType = tensorType(mask);
  int64_t operandSize = tensorType(operand).getDimSize(operandDim);
  if (!maskType.isDynamicDim(maskDim))
    return maskType.getDimSize(maskDim) == operandSize;
  Value size = maskDynamicSizes[maskType.getDynamicDimIndex(maskDim)];
  auto dimOp = size.getDefiningOp<tensor::DimOp>();
  return dimOp && dimOp.getSource() == operand &&
         dimOp.getConstantIndex() == static_cast<int64_t>(operandDim);
}

/// Whether an `[Sq, Skv]` mask op result matches the attention's query and
/// key lengths, so that its bottom-right alignment is the attention's.
static bool coversScores(AttentionOp op, Value mask, ValueRange dynamicSizes) {
  return isSameSize(mask, dynamicSizes, 0, op.getQuery(), kSeq) &&
         isSameSize(mask, dynamicSizes, 1, op.getKey(), kSeq);
}

namespace {

/// attention(q, k, v) dense_mask(causal_mask | sliding_window_mask)
///   -> attention(q, k, v) {mask = mask ∩ causal | sliding_window<W>}
struct FoldStructuredDenseMask : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Value mask = op.getDenseMask();
    if (!mask)
      return failure();
    MaskAttr structured;
    if (auto causal = mask.getDefiningOp<CausalMaskOp>()) {
      if (coversScores(op, mask, causal.getDynamicSizes()))
        structured = MaskAttr::getCausal(op.getContext());
    } else if (auto window = mask.getDefiningOp<SlidingWindowMaskOp>()) {
      if (coversScores(op, mask, window.getDynamicSizes()))
        structured = MaskAttr::getSlidingWindow(
            op.getContext(), window.getWindowAttr().getInt());
    }
    if (!structured)
      return rewriter.notifyMatchFailure(op, "no structured mask producer");
    rewriter.modifyOpInPlace(op, [&] {
      op.setMaskAttr(op.getMaskOrNone().intersect(structured));
      op.getDenseMaskMutable().clear();
    });
    return success();
  }
};

/// attention(q, k, v) dense_mask(padding_mask(lengths))
///   -> attention(q, k, v) kv_lengths(lengths)
struct FoldPaddingDenseMask : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Value mask = op.getDenseMask();
    auto padding = mask ? mask.getDefiningOp<PaddingMaskOp>() : nullptr;
    if (!padding)
      return failure();
    Value lengths = padding.getLengths();
    if (op.getKvLengths() && op.getKvLengths() != lengths)
      return rewriter.notifyMatchFailure(op, "already has other kv_lengths");
    // The batch dim of the mask comes from `lengths`; a dynamic one must
    // match the attention's batch (only a static 1 broadcasts).
    int64_t maskBatch = tensorType(mask).getDimSize(0);
    int64_t batch = op.getQuery().getType().getDimSize(kBatch);
    bool sameBatch = maskBatch == batch || (ShapedType::isDynamic(maskBatch) &&
                                            ShapedType::isDynamic(batch));
    SmallVector<Value, 1> kvLength;
    if (padding.getKvLength())
      kvLength.push_back(padding.getKvLength());
    if (!sameBatch || !isSameSize(mask, kvLength, 3, op.getKey(), kSeq))
      return rewriter.notifyMatchFailure(op, "padding mask shape differs");
    rewriter.modifyOpInPlace(op, [&] {
      op.getKvLengthsMutable().assign(lengths);
      op.getDenseMaskMutable().clear();
    });
    return success();
  }
};

/// attention(q, k, v) dense_mask(dense<true>) -> attention(q, k, v)
struct DropAllTrueDenseMask : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Value mask = op.getDenseMask();
    if (!mask || !matchPattern(mask, m_One()))
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getDenseMaskMutable().clear(); });
    return success();
  }
};

} // namespace

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<FoldStructuredDenseMask, FoldPaddingDenseMask,
               DropAllTrueDenseMask>(context);
}

//===----------------------------------------------------------------------===//
// Mask ops
//===----------------------------------------------------------------------===//

/// Checks an `[Sq, Skv]` mask result and its dynamic size operands.
static LogicalResult verifySquareMask(Operation *op,
                                      ValueRange dynamicSizes) {
  Value result = op->getResult(0);
  if (failed(checkRank(op, "result", result, 2, "[Sq, Skv]")))
    return failure();
  int64_t numDynamic = tensorType(result).getNumDynamicDims();
  if (static_cast<int64_t>(dynamicSizes.size()) != numDynamic)
    return op->emitOpError()
           << "expected one size operand per dynamic dim (" << numDynamic
           << "), got " << dynamicSizes.size();
  return success();
}

LogicalResult CausalMaskOp::verify() {
  return verifySquareMask(getOperation(), getDynamicSizes());
}

LogicalResult SlidingWindowMaskOp::verify() {
  // The attribute is signless: read it as signed.
  int64_t window = getWindowAttr().getInt();
  if (window < 1)
    return emitOpError() << "expected window to be at least 1, got " << window;
  return verifySquareMask(getOperation(), getDynamicSizes());
}

LogicalResult PaddingMaskOp::verify() {
  Operation *op = getOperation();
  if (failed(checkRank(op, "lengths", getLengths(), 1, "[B]")) ||
      failed(checkRank(op, "result", getResult(), 4, "[B, 1, 1, Skv]")))
    return failure();
  RankedTensorType result = getResult().getType();
  if (result.getDimSize(1) != 1 || result.getDimSize(2) != 1)
    return emitOpError() << "expected result dims 1 and 2 to be 1, got "
                         << formatSize(result.getDimSize(1)) << " and "
                         << formatSize(result.getDimSize(2));
  if (failed(checkSize(op, "result batch", result.getDimSize(0),
                       "lengths size", getLengths().getType().getDimSize(0))))
    return failure();
  if (result.isDynamicDim(3) != static_cast<bool>(getKvLength()))
    return emitOpError() << "expected a kv_length operand exactly when the "
                            "key length is dynamic";
  return success();
}
