//===- CompositeOps.cpp - tfm.self_attention and tfm.decoder_block ---------===//

#include "ShapeChecks.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

/// rows(q_weight) / num_heads; the verifier guarantees it divides.
template <typename OpTy>
static int64_t headDimOf(OpTy op) {
  return op.getQWeight().getType().getDimSize(0) / op.getNumHeads();
}

int64_t SelfAttentionOp::getHeadDim() { return headDimOf(*this); }
int64_t DecoderBlockOp::getHeadDim() { return headDimOf(*this); }

/// Checks the attention sublayer shared by self_attention and decoder_block
/// (both name their operands alike): `x : [B, S, Dmodel]`, q/k/v/o weights
/// and biases, head counts, positions and kv lengths.
template <typename OpTy>
static LogicalResult verifyAttentionSublayer(OpTy op) {
  Operation *operation = op.getOperation();
  Value input = op.getInput();
  if (failed(checkRank(operation, "input", input, 3, "[B, S, Dmodel]")))
    return failure();
  RankedTensorType inputType = tensorType(input);
  Type elementType = inputType.getElementType();
  int64_t batch = inputType.getDimSize(0), length = inputType.getDimSize(1),
          dModel = inputType.getDimSize(2);
  if (failed(checkStatic(operation, "model width", dModel)))
    return failure();

  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads();
  if (heads < 1 || kvHeads < 1)
    return op.emitOpError() << "expected positive head counts, got ("
                            << heads << ", " << kvHeads << ")";
  if (heads % kvHeads != 0)
    return op.emitOpError() << "expected key head count (" << kvHeads
                            << ") to divide query head count (" << heads
                            << ")";

  auto weightRows = [&](StringRef name, Value weight) {
    return checkProjectionWeight(operation, name, weight, dModel,
                                 "model width", elementType);
  };
  FailureOr<int64_t> qRows = weightRows("q_weight", op.getQWeight());
  if (failed(qRows) || failed(checkStatic(operation, "q_weight rows", *qRows)))
    return failure();
  if (*qRows % heads != 0)
    return op.emitOpError() << "expected q_weight rows (" << *qRows
                            << ") to be a multiple of query head count ("
                            << heads << ")";
  int64_t headDim = *qRows / heads;
  int64_t kvRows = kvHeads * headDim;
  for (auto [name, weight] : {std::pair<StringRef, Value>{"k_weight",
                                                          op.getKWeight()},
                              {"v_weight", op.getVWeight()}}) {
    FailureOr<int64_t> rows = weightRows(name, weight);
    if (failed(rows))
      return failure();
    if (*rows != kvRows)
      return op.emitOpError()
             << "expected " << name << " rows (" << formatSize(*rows)
             << ") to match key head count x head dim (" << kvHeads << " x "
             << headDim << ")";
  }
  FailureOr<int64_t> oRows = checkProjectionWeight(
      operation, "o_weight", op.getOWeight(), heads * headDim,
      "query head count x head dim", elementType);
  if (failed(oRows) ||
      failed(checkSize(operation, "o_weight rows", *oRows, "model width",
                       dModel)))
    return failure();

  for (auto [name, bias, size, sizeName] :
       {std::tuple<StringRef, Value, int64_t, StringRef>{
            "q_bias", op.getQBias(), *qRows, "q_weight rows"},
        {"k_bias", op.getKBias(), kvRows, "k_weight rows"},
        {"v_bias", op.getVBias(), kvRows, "v_weight rows"},
        {"o_bias", op.getOBias(), dModel, "model width"}}) {
    if (bias && failed(checkVector(operation, name, bias, size, sizeName,
                                   elementType)))
      return failure();
  }

  if (Value positions = op.getPositions()) {
    if (!op.getRopeAttr())
      return op.emitOpError() << "expected a rope attribute when positions "
                                 "are given";
    RankedTensorType type = tensorType(positions);
    if (type.getRank() == 2) {
      if (failed(checkSize(operation, "positions batch", type.getDimSize(0),
                           "input batch", batch)))
        return failure();
    } else if (type.getRank() != 1) {
      return op.emitOpError() << "expected positions to have rank 1 [S] or "
                                 "2 [B, S], got rank "
                              << type.getRank();
    }
    if (failed(checkSize(operation, "positions length",
                         type.getShape().back(), "input length", length)))
      return failure();
  } else if (op.getRopeAttr()) {
    return op.emitOpError() << "expected positions when rope is set";
  }
  if (op.getRopeAttr() && headDim % 2 != 0)
    return op.emitOpError() << "expected head dim (" << headDim
                            << ") to be even for rope";

  if (Value lengths = op.getKvLengths())
    if (failed(checkRank(operation, "kv_lengths", lengths, 1, "[B]")) ||
        failed(checkSize(operation, "kv_lengths size",
                         tensorType(lengths).getDimSize(0), "batch", batch)))
      return failure();
  return checkResult(operation, inputType.getShape(), "input", elementType);
}

LogicalResult SelfAttentionOp::verify() {
  return verifyAttentionSublayer(*this);
}

LogicalResult DecoderBlockOp::verify() {
  if (failed(verifyAttentionSublayer(*this)))
    return failure();
  Operation *op = getOperation();
  RankedTensorType input = getInput().getType();
  int64_t dModel = input.getDimSize(2);
  Type elementType = input.getElementType();
  bool isLayerNorm = getNorm() == NormKind::layer_norm;
  for (auto [name, weight, bias] :
       {std::tuple<StringRef, Value, Value>{"attn_norm", getAttnNormWeight(),
                                            getAttnNormBias()},
        {"ffn_norm", getFfnNormWeight(), getFfnNormBias()}}) {
    if (failed(checkVector(op, (name + " weight").str(), weight, dModel,
                           "model width", elementType)))
      return failure();
    if (!bias)
      continue;
    if (!isLayerNorm)
      return emitOpError() << "expected no " << name << " bias with rms_norm";
    if (failed(checkVector(op, (name + " bias").str(), bias, dModel,
                           "model width", elementType)))
      return failure();
  }
  if (failed(checkNonNegative(op, "eps", getEps().convertToDouble())))
    return failure();
  return checkFFNWeights(op, getFfn(), dModel, getGateWeight(), getUpWeight(),
                         getUpBias(), getDownWeight(), getDownBias(),
                         elementType);
}
