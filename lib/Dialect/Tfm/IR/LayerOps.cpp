//===- LayerOps.cpp - norms, projections, FFN, RoPE, heads, embedding ------===//

#include "ShapeChecks.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

/// The size of the last (feature) dim of `value`.
static int64_t featureSize(Value value) {
  return tensorType(value).getShape().back();
}

/// Checks a norm over the last dim: `[..., n]` input, `[n]` weight and
/// bias, result of the input's type, non-negative eps.
static LogicalResult verifyNorm(Operation *op, Value input, Value weight,
                                Value bias, APFloat eps) {
  if (tensorType(input).getRank() < 1)
    return op->emitOpError() << "expected input to have rank at least 1";
  Type elementType = tensorType(input).getElementType();
  int64_t features = featureSize(input);
  if (failed(checkVector(op, "weight", weight, features,
                         "input feature size", elementType)) ||
      (bias && failed(checkVector(op, "bias", bias, features,
                                  "input feature size", elementType))) ||
      failed(checkResult(op, tensorType(input).getShape(), "input",
                         elementType)))
    return failure();
  return checkNonNegative(op, "eps", eps.convertToDouble());
}

LogicalResult RMSNormOp::verify() {
  return verifyNorm(getOperation(), getInput(), getWeight(), Value(),
                    getEps());
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(getOperation(), getInput(), getWeight(), getBias(),
                    getEps());
}

LogicalResult LinearOp::verify() {
  Operation *op = getOperation();
  RankedTensorType input = getInput().getType();
  if (input.getRank() < 1)
    return emitOpError() << "expected input to have rank at least 1";
  FailureOr<int64_t> outFeatures =
      checkProjectionWeight(op, "weight", getWeight(), featureSize(getInput()),
                            "input feature size", input.getElementType());
  if (failed(outFeatures))
    return failure();
  if (Value bias = getBias())
    if (failed(checkVector(op, "bias", bias, *outFeatures,
                           "output feature size", input.getElementType())))
      return failure();
  SmallVector<int64_t> resultShape(input.getShape());
  resultShape.back() = *outFeatures;
  return checkResult(op, resultShape, "input", input.getElementType());
}

LogicalResult FFNOp::verify() {
  RankedTensorType input = getInput().getType();
  if (input.getRank() < 1)
    return emitOpError() << "expected input to have rank at least 1";
  if (failed(checkFFNWeights(getOperation(), getKind(),
                             featureSize(getInput()), getGateWeight(),
                             getUpWeight(), getUpBias(), getDownWeight(),
                             getDownBias(), input.getElementType())))
    return failure();
  return checkResult(getOperation(), input.getShape(), "input",
                     input.getElementType());
}

LogicalResult RopeOp::verify() {
  Operation *op = getOperation();
  if (failed(checkRank(op, "input", getInput(), 4, "[B, H, S, D]")))
    return failure();
  RankedTensorType input = getInput().getType();
  int64_t headDim = input.getDimSize(3);
  if (failed(checkStatic(op, "head dim", headDim)))
    return failure();
  if (headDim % 2 != 0)
    return emitOpError() << "expected head dim (" << headDim
                         << ") to be even";
  RankedTensorType positions = getPositions().getType();
  if (positions.getRank() == 2) {
    if (failed(checkSize(op, "positions batch", positions.getDimSize(0),
                         "input batch", input.getDimSize(0))))
      return failure();
  } else if (positions.getRank() != 1) {
    return emitOpError() << "expected positions to have rank 1 [S] or 2 "
                            "[B, S], got rank "
                         << positions.getRank();
  }
  if (failed(checkSize(op, "positions length", positions.getShape().back(),
                       "input length", input.getDimSize(2))) ||
      failed(checkPositive(op, "theta", getTheta().convertToDouble())))
    return failure();
  return checkResult(op, input.getShape(), "input", input.getElementType());
}

/// Checks that `merged : [B, S, H·D]` and `split : [B, H, S, D]` describe
/// the same tensor with static `H` and `D`.
static LogicalResult verifyHeadLayout(Operation *op, Value merged,
                                      StringRef mergedName, Value split,
                                      StringRef splitName) {
  if (failed(checkRank(op, mergedName, merged, 3, "[B, S, H*D]")) ||
      failed(checkRank(op, splitName, split, 4, "[B, H, S, D]")) ||
      failed(checkElementType(op, "result", op->getResult(0), "input",
                              tensorType(op->getOperand(0)).getElementType())))
    return failure();
  ArrayRef<int64_t> m = tensorType(merged).getShape();
  ArrayRef<int64_t> s = tensorType(split).getShape();
  if (failed(checkStatic(op, "head count", s[1])) ||
      failed(checkStatic(op, "head dim", s[3])) ||
      failed(checkSize(op, (splitName + " batch").str(), s[0],
                       (mergedName + " batch").str(), m[0])) ||
      failed(checkSize(op, (splitName + " length").str(), s[2],
                       (mergedName + " length").str(), m[1])))
    return failure();
  if (!areCompatible(m[2], s[1] * s[3]))
    return op->emitOpError()
           << "expected head count x head dim (" << s[1] << " x " << s[3]
           << ") to match " << mergedName << " feature size (" << m[2]
           << ")";
  return success();
}

LogicalResult SplitHeadsOp::verify() {
  return verifyHeadLayout(getOperation(), getInput(), "input", getResult(),
                          "result");
}

LogicalResult MergeHeadsOp::verify() {
  return verifyHeadLayout(getOperation(), getResult(), "result", getInput(),
                          "input");
}

// split_heads(merge_heads(x)) -> x
OpFoldResult SplitHeadsOp::fold(FoldAdaptor) {
  auto merge = getInput().getDefiningOp<MergeHeadsOp>();
  if (merge && merge.getInput().getType() == getType())
    return merge.getInput();
  return {};
}

// merge_heads(split_heads(x)) -> x
OpFoldResult MergeHeadsOp::fold(FoldAdaptor) {
  auto split = getInput().getDefiningOp<SplitHeadsOp>();
  if (split && split.getInput().getType() == getType())
    return split.getInput();
  return {};
}

LogicalResult EmbeddingOp::verify() {
  Operation *op = getOperation();
  if (failed(checkRank(op, "ids", getIds(), 2, "[B, S]")) ||
      failed(checkRank(op, "table", getTable(), 2, "[V, Dmodel]")))
    return failure();
  ArrayRef<int64_t> ids = getIds().getType().getShape();
  RankedTensorType table = getTable().getType();
  return checkResult(op, {ids[0], ids[1], table.getDimSize(1)}, "table",
                     table.getElementType());
}
