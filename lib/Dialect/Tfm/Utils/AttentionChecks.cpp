//===- AttentionChecks.cpp - run-time size checks of attention ------------===//

#include "tfm/Dialect/Tfm/Utils/AttentionChecks.h"

#include "tfm/Dialect/Tfm/Utils/AttentionDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfm;

void mlir::tfm::assertSameDims(OpBuilder &b, Location loc, AttentionOp op) {
  auto require = [&](Value lhs, int64_t lhsDim, Value rhs, int64_t rhsDim) {
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    if (!lhsType.isDynamicDim(lhsDim) && !rhsType.isDynamicDim(rhsDim))
      return; // the verifier checked it
    Value equal = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        tensor::DimOp::create(b, loc, lhs, lhsDim),
        tensor::DimOp::create(b, loc, rhs, rhsDim));
    cf::AssertOp::create(b, loc, equal, "attention operand sizes differ");
  };
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  require(key, kBatch, query, kBatch);
  require(value, kBatch, query, kBatch);
  require(value, kSeq, key, kSeq);
  if (Value lengths = op.getKvLengths())
    require(lengths, 0, query, kBatch);
  // Dense mask and bias broadcast to [B, Hq, Sq, Skv]: every dim that is
  // not a static 1 must match.
  std::pair<Value, int64_t> scoreDims[] = {
      {query, kBatch}, {query, kHeads}, {query, kSeq}, {key, kSeq}};
  for (Value broadcast : {op.getDenseMask(), op.getBias()}) {
    if (!broadcast)
      continue;
    auto type = cast<RankedTensorType>(broadcast.getType());
    int64_t skip = 4 - type.getRank();
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.getDimSize(i) != 1)
        require(broadcast, i, scoreDims[skip + i].first,
                scoreDims[skip + i].second);
  }
}
