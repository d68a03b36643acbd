//===- OnlineAttentionOp.cpp - the tile-level attention step ---------------===//

#include "ShapeChecks.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

void OnlineAttentionOp::build(
    OpBuilder &builder, OperationState &state, Value query, Value key,
    Value value, ValueRange runningState,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)>
        scoreBuilder) {
  state.addOperands({query, key, value});
  state.addOperands(runningState);
  state.addTypes(runningState.getTypes());
  Region *region = state.addRegion();
  OpBuilder::InsertionGuard guard(builder);
  Type index = builder.getIndexType();
  Block *block = builder.createBlock(
      region, {}, {builder.getF32Type(), index, index},
      SmallVector<Location>(3, state.location));
  Value score = scoreBuilder(builder, state.location, block->getArgument(0),
                             block->getArgument(1), block->getArgument(2));
  YieldOp::create(builder, state.location, score);
}

Value OnlineAttentionOp::getScore() {
  return cast<YieldOp>(getBody()->getTerminator()).getValues().front();
}

LogicalResult OnlineAttentionOp::verify() {
  Operation *op = getOperation();
  if (failed(checkRank(op, "query", getQuery(), 2, "[M, D]")) ||
      failed(checkRank(op, "key", getKey(), 2, "[N, D]")) ||
      failed(checkRank(op, "value", getValue(), 2, "[N, Dv]")) ||
      failed(checkRank(op, "max", getMax(), 1, "[M]")) ||
      failed(checkRank(op, "sum", getSum(), 1, "[M]")) ||
      failed(checkRank(op, "acc", getAcc(), 2, "[M, Dv]")))
    return failure();
  RankedTensorType query = getQuery().getType(), key = getKey().getType(),
                   value = getValue().getType(), acc = getAcc().getType();
  int64_t rows = query.getDimSize(0);
  return success(
      succeeded(checkSize(op, "key dim", key.getDimSize(1), "query dim",
                          query.getDimSize(1))) &&
      succeeded(checkSize(op, "value rows", value.getDimSize(0), "key rows",
                          key.getDimSize(0))) &&
      succeeded(checkSize(op, "max rows", getMax().getType().getDimSize(0),
                          "query rows", rows)) &&
      succeeded(checkSize(op, "sum rows", getSum().getType().getDimSize(0),
                          "query rows", rows)) &&
      succeeded(checkSize(op, "acc rows", acc.getDimSize(0), "query rows",
                          rows)) &&
      succeeded(checkSize(op, "acc width", acc.getDimSize(1), "value width",
                          value.getDimSize(1))));
}

LogicalResult OnlineAttentionOp::verifyRegions() {
  Block &block = getScoreBody().front();
  Type index = IndexType::get(getContext());
  SmallVector<Type> expected{Float32Type::get(getContext()), index, index};
  if (block.getArgumentTypes() != TypeRange(expected))
    return emitOpError("expected the body's arguments to be (f32, index, "
                       "index): the dot product, its row and its key");
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield || yield.getValues().size() != 1 ||
      !yield.getValues()[0].getType().isF32())
    return emitOpError("expected the body to yield one f32 score");
  return success();
}

//===----------------------------------------------------------------------===//
// TilingInterface: the iteration domain is the query rows.
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> OnlineAttentionOp::getLoopIteratorTypes() {
  return {utils::IteratorType::parallel};
}

SmallVector<Range> OnlineAttentionOp::getIterationDomain(OpBuilder &b) {
  Location loc = getLoc();
  OpFoldResult rows = tensor::getMixedSize(b, loc, getQuery(), 0);
  return {Range{b.getIndexAttr(0), rows, b.getIndexAttr(1)}};
}

LogicalResult OnlineAttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets.assign({offsets[0]});
  resultSizes.assign({sizes[0]});
  if (resultNumber == 2) { // acc: every column of the rows
    resultOffsets.push_back(b.getIndexAttr(0));
    resultSizes.push_back(tensor::getMixedSize(b, getLoc(), getAcc(), 1));
  }
  return success();
}

FailureOr<TilingResult>
OnlineAttentionOp::getTiledImplementation(OpBuilder &b,
                                          ArrayRef<OpFoldResult> offsets,
                                          ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  SmallVector<Operation *> slices;
  // Rows [offset, offset + size) of a rank-1 or rank-2 operand.
  auto rowsOf = [&](Value source) -> Value {
    auto type = cast<RankedTensorType>(source.getType());
    SmallVector<OpFoldResult> sliceOffsets{offsets[0]}, sliceSizes{sizes[0]};
    if (type.getRank() == 2) {
      sliceOffsets.push_back(b.getIndexAttr(0));
      sliceSizes.push_back(tensor::getMixedSize(b, loc, source, 1));
    }
    auto slice = tensor::ExtractSliceOp::create(
        b, loc, source, sliceOffsets, sliceSizes,
        SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
    slices.push_back(slice);
    return slice;
  };
  SmallVector<Value> operands{rowsOf(getQuery()), getKey(), getValue(),
                              rowsOf(getMax()), rowsOf(getSum()),
                              rowsOf(getAcc())};
  SmallVector<Type> resultTypes;
  for (Value init : ArrayRef<Value>(operands).drop_front(3))
    resultTypes.push_back(init.getType());
  Value offset = getValueOrCreateConstantIndexOp(b, loc, offsets[0]);
  Operation *tiled = mlir::clone(b, getOperation(), resultTypes, operands);
  // The body sees rows of the tile: shift them back to rows of this op.
  auto tiledOp = cast<OnlineAttentionOp>(tiled);
  Value row = tiledOp.getRowArgument();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tiledOp.getBody());
  Value shifted = arith::AddIOp::create(b, loc, row, offset);
  row.replaceAllUsesExcept(shifted, shifted.getDefiningOp());
  return TilingResult{{tiled}, SmallVector<Value>(tiled->getResults()),
                      slices};
}
