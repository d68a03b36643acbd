//===- FewRowsMatmul.cpp - projections of a few rows ----------------------===//
//
// A projection of a few rows (decode: a row a sequence; 8 or fewer by
// default, `few-rows`) reads
// each weight once for all its rows: its time is that of streaming B
// ([N, K]) from memory. On tensor-core tiles of 64 or 128 rows it would
// have N / 128 or N / 256 blocks, each streaming a strip of B through one
// multiprocessor (8 blocks for a 2048-wide projection). Here a warp
// computes a pair of columns for every row: its lanes load 16 bytes of
// each of B's two rows and of each row of A at a time, multiply-add them in
// f32, and the warp's sums are reduced by shuffles; lane 0 stores the pair
// of each row, or the epilogue's values. Where A is a norm's output that
// only projections read (RowPrologue.h), the kernel reads the norm's rows
// instead: each warp computes each row's values (its sums over K) first,
// then each chunk of A from the rows' chunks as it reads them, with the
// norm's own ops, lanewise.
//
//===----------------------------------------------------------------------===//

#include "KernelLaunch.h"
#include "Projection.h"
#include "RowPrologue.h"
#include "TensorCoreBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

constexpr int64_t kWarps = 4; // a block's warps, a pair of columns each
constexpr int64_t kChunk = 8; // elements of K a lane loads at a time
constexpr int64_t kSpan = 32 * kChunk; // elements of K a warp loads at a time
/// Steps whose weights are loaded before any is multiplied: 2·kUnroll
/// loads of 16 bytes in flight a lane.
constexpr int64_t kUnroll = 4;

/// Whether `value`, an operand of an op in `body`, is defined outside it.
bool isOutside(Value value, Block &body) {
  return value.getParentBlock() != &body;
}

class FewRowsBuilder : TensorCoreBuilder {
public:
  FewRowsBuilder(OpBuilder &b, Location loc, const Projection &p,
                 int64_t maxRows, const DenseMap<Value, Value> &views)
      : TensorCoreBuilder(b, loc,
                          cast<MemRefType>(p.b.getType()).getElementType()),
        p(p), maxRows(maxRows), views(views) {}

  void build(gpu::LaunchOp launch, ArrayRef<Value> operands);

private:
  /// The 8 elements of `memref` at [row, k..k + 7] (16 aligned bytes) as
  /// f32.
  Value loadChunk(Value memref, Value row, Value k);
  /// The kChunk elements of `memref` at `indices` (the last one k).
  Value loadVector(Value memref, ValueRange indices);
  /// Clones `op` with `map`; over vectors of kChunk where an operand is a
  /// vector (the others broadcast), which the prologue's checks allow.
  void cloneLanewise(Operation &op, IRMapping &map);

  // The prologue (p.prologue), when A is a norm's output.
  /// Which values of the norm's body are the same for a whole row (its row
  /// values and what it computes from them alone), and which of those its
  /// other ops use: `rowState[m]` maps them to row m's values.
  void classifyNormBody();
  /// Each row's values: the chain's row values, then the norm's ops of
  /// them alone, once per row before the main loop.
  void evaluateRowValues(Value lane);
  /// Row value `init` of row `m` (a reduction's or row map's, or its fill).
  Value chainValue(Operation *op, Value row, Value lane,
                   DenseMap<Value, Value> &rowValues);
  /// The norm's Column operands' chunks at `k`.
  DenseMap<Value, Value> columnChunks(Value k);
  /// A's chunk at [m, k..k + 7] as f32, computed by the norm's ops.
  Value normChunk(int64_t m, Value k, const DenseMap<Value, Value> &columns);
  /// `sums` ([row][weight row]) plus the products of the rows' chunks at
  /// `k` with `weights`, the chunks there of B's two rows (then the
  /// sibling's); rows past `rows` unchanged.
  SmallVector<Value> accumulate(ArrayRef<Value> weights, Value k,
                                ValueRange sums);
  /// The sum of `value` over the warp's lanes, in every lane.
  Value warpSum(Value value);

  const Projection &p;
  int64_t maxRows;
  /// The prologue's Element operands as [M, K], Column ones as they are.
  const DenseMap<Value, Value> &views;
  Value rows;
  DenseSet<Value> rowInvariant;
  SmallVector<Value> rowStateValues;
  SmallVector<IRMapping> rowState;
};

Value FewRowsBuilder::loadChunk(Value memref, Value row, Value k) {
  Value chunk = vector::LoadOp::create(
      b, loc, VectorType::get({kChunk}, element), memref, ValueRange{row, k},
      /*nontemporal=*/false, llvm::MaybeAlign(16));
  return arith::ExtFOp::create(
      b, loc, VectorType::get({kChunk}, b.getF32Type()), chunk);
}

Value FewRowsBuilder::loadVector(Value memref, ValueRange indices) {
  Type type = cast<MemRefType>(memref.getType()).getElementType();
  return vector::LoadOp::create(b, loc, VectorType::get({kChunk}, type), memref,
                                indices, /*nontemporal=*/false,
                                llvm::MaybeAlign(16));
}

void FewRowsBuilder::cloneLanewise(Operation &op, IRMapping &map) {
  SmallVector<Value> operands = llvm::to_vector(llvm::map_range(
      op.getOperands(), [&](Value v) { return map.lookupOrDefault(v); }));
  if (llvm::none_of(operands,
                    [](Value v) { return isa<VectorType>(v.getType()); })) {
    b.clone(op, map);
    return;
  }
  for (Value &operand : operands)
    if (!isa<VectorType>(operand.getType()))
      operand = vector::BroadcastOp::create(
          b, loc, VectorType::get({kChunk}, operand.getType()), operand);
  Type result = VectorType::get({kChunk}, op.getResult(0).getType());
  Operation *lanewise = b.create(loc, op.getName().getIdentifier(), operands,
                                 {result}, op.getAttrs());
  map.map(op.getResult(0), lanewise->getResult(0));
}

void FewRowsBuilder::classifyNormBody() {
  linalg::GenericOp norm = p.prologue->norm;
  Block &body = norm.getRegion().front();
  for (OpOperand *input : norm.getDpsInputOperands())
    if (rowOperandKind(*p.prologue, *input) == RowOperandKind::Row)
      rowInvariant.insert(norm.getMatchingBlockArgument(input));
  for (Operation &op : body.without_terminator())
    if (llvm::all_of(op.getOperands(), [&](Value v) {
          return isOutside(v, body) || rowInvariant.contains(v);
        }))
      rowInvariant.insert(op.getResult(0));
  // Those the lanewise ops read: the row's state.
  SetVector<Value> used;
  for (Operation &op : body) {
    if (!op.hasTrait<OpTrait::IsTerminator>() &&
        rowInvariant.contains(op.getResult(0)))
      continue;
    for (Value v : op.getOperands())
      if (rowInvariant.contains(v))
        used.insert(v);
  }
  rowStateValues = used.takeVector();
}

Value FewRowsBuilder::chainValue(Operation *op, Value row, Value lane,
                                 DenseMap<Value, Value> &rowValues) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getDpsInputs()[0];
  auto generic = cast<linalg::GenericOp>(op);
  Block &body = generic.getRegion().front();
  Value init = generic.getDpsInits()[0];
  IRMapping rowArguments;
  for (OpOperand *input : generic.getDpsInputOperands())
    if (rowOperandKind(*p.prologue, *input) == RowOperandKind::Row)
      rowArguments.map(generic.getMatchingBlockArgument(input),
                       rowValues.lookup(input->get()));
  auto yielded = body.getTerminator()->getOperand(0);
  if (generic.getNumReductionLoops() == 0) {
    // A row map: its body on the row's values.
    for (Operation &bodyOp : body.without_terminator())
      b.clone(bodyOp, rowArguments);
    return rowArguments.lookupOrDefault(yielded);
  }
  // A row reduction: `out + e`, e summed over the lanes' chunks of K.
  auto sum = yielded.getDefiningOp<arith::AddFOp>();
  Value out = body.getArguments().back();
  Value term = sum.getLhs() == out ? sum.getRhs() : sum.getLhs();
  int64_t steps = llvm::divideCeil(p.k, kSpan);
  auto chunkSum = [&](Value k) -> Value {
    IRMapping map = rowArguments;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      RowOperandKind kind = rowOperandKind(*p.prologue, *input);
      if (kind == RowOperandKind::Row)
        continue;
      Value view = views.lookup(input->get());
      map.map(generic.getMatchingBlockArgument(input),
              kind == RowOperandKind::Column ? loadVector(view, {k})
                                             : loadVector(view, {row, k}));
    }
    for (Operation &bodyOp : body.without_terminator())
      if (&bodyOp != sum.getOperation())
        cloneLanewise(bodyOp, map);
    Value terms = map.lookupOrDefault(term);
    if (!isa<VectorType>(terms.getType()))
      terms = vector::BroadcastOp::create(
          b, loc, VectorType::get({kChunk}, terms.getType()), terms);
    return vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                       terms);
  };
  auto loop = scf::ForOp::create(
      b, loc, index(0), index(steps), index(1), ValueRange{f32(0.0)},
      [&](OpBuilder &, Location, Value step, ValueRange partial) {
        Value k = add(mul(step, kSpan), mul(lane, kChunk));
        Value next;
        if (p.k % kSpan == 0) {
          next = arith::AddFOp::create(b, loc, partial[0], chunkSum(k));
        } else {
          auto within =
              scf::IfOp::create(b, loc, TypeRange{b.getF32Type()},
                                cmp(arith::CmpIPredicate::slt, k, index(p.k)),
                                /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(within.thenBlock());
          scf::YieldOp::create(b, loc,
                               ValueRange{arith::AddFOp::create(
                                   b, loc, partial[0], chunkSum(k))});
          b.setInsertionPointToStart(within.elseBlock());
          scf::YieldOp::create(b, loc, partial);
          b.setInsertionPointAfter(within);
          next = within.getResult(0);
        }
        scf::YieldOp::create(b, loc, next);
      });
  return arith::AddFOp::create(b, loc, rowValues.lookup(init),
                               warpSum(loop.getResult(0)));
}

void FewRowsBuilder::evaluateRowValues(Value lane) {
  classifyNormBody();
  linalg::GenericOp norm = p.prologue->norm;
  Block &body = norm.getRegion().front();
  SmallVector<Type> types = llvm::to_vector(
      llvm::map_range(rowStateValues, [](Value v) { return v.getType(); }));
  for (int64_t m = 0; m < maxRows; ++m) {
    auto exists = scf::IfOp::create(
        b, loc, types, cmp(arith::CmpIPredicate::slt, index(m), rows),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(exists.thenBlock());
      DenseMap<Value, Value> rowValues;
      for (Operation *op : p.prologue->chain)
        rowValues[cast<DestinationStyleOpInterface>(op).getDpsInits()[0]] =
            chainValue(op, index(m), lane, rowValues);
      IRMapping map;
      for (OpOperand *input : norm.getDpsInputOperands())
        if (rowOperandKind(*p.prologue, *input) == RowOperandKind::Row)
          map.map(norm.getMatchingBlockArgument(input),
                  rowValues.lookup(input->get()));
      for (Operation &op : body.without_terminator())
        if (rowInvariant.contains(op.getResult(0)))
          b.clone(op, map);
      scf::YieldOp::create(
          b, loc, llvm::to_vector(llvm::map_range(rowStateValues, [&](Value v) {
            return map.lookupOrDefault(v);
          })));
      b.setInsertionPointToStart(exists.elseBlock());
      scf::YieldOp::create(
          b, loc, llvm::to_vector(llvm::map_range(types, [&](Type type) {
            return arith::ConstantOp::create(
                       b, loc, type, cast<TypedAttr>(b.getZeroAttr(type)))
                .getResult();
          })));
    }
    IRMapping state;
    for (auto [value, result] : llvm::zip(rowStateValues, exists.getResults()))
      state.map(value, result);
    rowState.push_back(state);
  }
}

DenseMap<Value, Value> FewRowsBuilder::columnChunks(Value k) {
  DenseMap<Value, Value> chunks;
  if (!p.prologue)
    return chunks;
  linalg::GenericOp norm = p.prologue->norm;
  for (OpOperand *input : norm.getDpsInputOperands())
    if (rowOperandKind(*p.prologue, *input) == RowOperandKind::Column &&
        !chunks.count(input->get()))
      chunks[input->get()] = loadVector(views.lookup(input->get()), {k});
  return chunks;
}

Value FewRowsBuilder::normChunk(int64_t m, Value k,
                                const DenseMap<Value, Value> &columns) {
  linalg::GenericOp norm = p.prologue->norm;
  Block &body = norm.getRegion().front();
  IRMapping map = rowState[m];
  for (OpOperand *input : norm.getDpsInputOperands()) {
    RowOperandKind kind = rowOperandKind(*p.prologue, *input);
    if (kind == RowOperandKind::Row)
      continue;
    map.map(norm.getMatchingBlockArgument(input),
            kind == RowOperandKind::Column
                ? columns.lookup(input->get())
                : loadVector(views.lookup(input->get()), {index(m), k}));
  }
  for (Operation &op : body.without_terminator())
    if (!rowInvariant.contains(op.getResult(0)))
      cloneLanewise(op, map);
  Value chunk = map.lookupOrDefault(body.getTerminator()->getOperand(0));
  if (!isa<VectorType>(chunk.getType()))
    chunk = vector::BroadcastOp::create(
        b, loc, VectorType::get({kChunk}, chunk.getType()), chunk);
  return arith::ExtFOp::create(
      b, loc, VectorType::get({kChunk}, b.getF32Type()), chunk);
}

SmallVector<Value> FewRowsBuilder::accumulate(ArrayRef<Value> weights, Value k,
                                              ValueRange sums) {
  SmallVector<Value> next;
  int64_t count = weights.size();
  SmallVector<Type> types(count, b.getF32Type());
  DenseMap<Value, Value> columns = columnChunks(k);
  for (int64_t m = 0; m < maxRows; ++m) {
    auto exists = scf::IfOp::create(
        b, loc, types, cmp(arith::CmpIPredicate::slt, index(m), rows),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(exists.thenBlock());
      Value x =
          p.prologue ? normChunk(m, k, columns) : loadChunk(p.a, index(m), k);
      SmallVector<Value> products;
      for (int64_t c = 0; c < count; ++c)
        products.push_back(vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD,
            arith::MulFOp::create(b, loc, x, weights[c]), sums[count * m + c]));
      scf::YieldOp::create(b, loc, products);
      b.setInsertionPointToStart(exists.elseBlock());
      scf::YieldOp::create(b, loc, sums.slice(count * m, count));
    }
    next.append(exists.getResults().begin(), exists.getResults().end());
  }
  return next;
}

Value FewRowsBuilder::warpSum(Value value) {
  for (int32_t offset : {16, 8, 4, 2, 1}) {
    Value other = gpu::ShuffleOp::create(b, loc, value, offset, /*width=*/32,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = arith::AddFOp::create(b, loc, value, other);
  }
  return value;
}

void FewRowsBuilder::build(gpu::LaunchOp launch, ArrayRef<Value> operands) {
  Value tid = launch.getThreadIds().x;
  Value warp = div(tid, 32), lane = rem(tid, 32);
  int64_t columns = cast<MemRefType>(p.c.getType()).getDimSize(1);
  Value column = mul(add(mul(launch.getBlockIds().x, kWarps), warp), 2);
  rows = memref::DimOp::create(b, loc, p.a, 0);
  auto inside = scf::IfOp::create(
      b, loc, cmp(arith::CmpIPredicate::slt, column, index(columns)));
  b.setInsertionPointToStart(inside.thenBlock());
  if (p.prologue)
    evaluateRowValues(lane);

  // Lane l loads K elements [s·256 + 8l, s·256 + 8l + 8) at step s: the
  // whole steps kUnroll at a time, their weights loaded first, then the
  // rest one at a time, a last partial step's lanes past K adding nothing.
  // With a sibling, its two rows of weights too, half as many steps at a
  // time (as many loads in flight).
  Value laneK = mul(lane, kChunk);
  SmallVector<Value> weightMatrices = {p.b};
  if (p.sibling)
    weightMatrices.push_back(p.sibling->b);
  auto weightsAt = [&](Value k) -> SmallVector<Value> {
    SmallVector<Value> chunks;
    for (Value weights : weightMatrices) {
      chunks.push_back(loadChunk(weights, column, k));
      chunks.push_back(loadChunk(weights, add(column, 1), k));
    }
    return chunks;
  };
  int64_t weightRows = 2 * weightMatrices.size();
  int64_t unroll = kUnroll / weightMatrices.size();
  int64_t wholeSteps = p.k / kSpan, steps = llvm::divideCeil(p.k, kSpan);
  int64_t grouped = wholeSteps / unroll * unroll;
  SmallVector<Value> sums(weightRows * maxRows, f32(0.0));
  if (grouped > 0) {
    auto unrolled = scf::ForOp::create(
        b, loc, index(0), index(grouped), index(unroll), sums,
        [&](OpBuilder &, Location, Value step, ValueRange state) {
          SmallVector<Value> ks;
          SmallVector<SmallVector<Value>> weights;
          for (int64_t u = 0; u < unroll; ++u) {
            ks.push_back(add(mul(add(step, u), kSpan), laneK));
            weights.push_back(weightsAt(ks.back()));
          }
          SmallVector<Value> next(state);
          for (int64_t u = 0; u < unroll; ++u)
            next = accumulate(weights[u], ks[u], next);
          scf::YieldOp::create(b, loc, next);
        });
    sums.assign(unrolled.getResults().begin(), unrolled.getResults().end());
  }
  if (steps > grouped) {
    auto rest = scf::ForOp::create(
        b, loc, index(grouped), index(steps), index(1), sums,
        [&](OpBuilder &, Location, Value step, ValueRange state) {
          Value k = add(mul(step, kSpan), laneK);
          if (p.k % kSpan == 0) {
            scf::YieldOp::create(b, loc, accumulate(weightsAt(k), k, state));
            return;
          }
          auto within =
              scf::IfOp::create(b, loc, TypeRange(state),
                                cmp(arith::CmpIPredicate::slt, k, index(p.k)),
                                /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(within.thenBlock());
            scf::YieldOp::create(b, loc, accumulate(weightsAt(k), k, state));
            b.setInsertionPointToStart(within.elseBlock());
            scf::YieldOp::create(b, loc, state);
          }
          scf::YieldOp::create(b, loc, within.getResults());
        });
    sums.assign(rest.getResults().begin(), rest.getResults().end());
  }
  SmallVector<Value> totals;
  for (Value sum : sums)
    totals.push_back(warpSum(sum));

  // Lane 0 stores each row's pair: C's values (a bias) added where no fill
  // zeroed C, then the epilogue if any.
  auto first =
      scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, lane, index(0)));
  b.setInsertionPointToStart(first.thenBlock());
  auto pairType = VectorType::get({2}, b.getF32Type());
  Value out = p.epilogue ? operands.back() : p.c;
  for (int64_t m = 0; m < maxRows; ++m) {
    auto exists = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::slt, index(m), rows));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(exists.thenBlock());
    Value row = index(m);
    SmallVector<Value> rowSums = {totals[weightRows * m],
                                  totals[weightRows * m + 1]};
    if (!p.fill) {
      Value start = vector::LoadOp::create(b, loc, pairType, p.c,
                                           ValueRange{row, column});
      for (int64_t e = 0; e < 2; ++e)
        rowSums[e] = arith::AddFOp::create(
            b, loc, vector::ExtractOp::create(b, loc, start, e), rowSums[e]);
    }
    SmallVector<Value> siblingSums;
    if (p.sibling)
      siblingSums = {totals[weightRows * m + 2], totals[weightRows * m + 3]};
    Value pair =
        p.epilogue ? evaluateEpilogue(b, loc, p, operands, rowSums, row, column,
                                      siblingSums)
                   : vector::FromElementsOp::create(b, loc, pairType, rowSums);
    vector::StoreOp::create(b, loc, pair, out, ValueRange{row, column});
  }
}

} // namespace

int64_t mlir::tfm::fewRowsBlocks(int64_t columns) {
  return llvm::divideCeil(columns, 2 * kWarps);
}

void mlir::tfm::buildFewRowsKernel(OpBuilder &b, Location loc,
                                   const Projection &p, int64_t maxRows,
                                   Value blocks, ArrayRef<Value> operands) {
  OpBuilder::InsertionGuard guard(b);
  // The prologue's operands as the kernel reads them.
  DenseMap<Value, Value> views;
  if (p.prologue) {
    SmallVector<Operation *> ops(p.prologue->chain);
    ops.push_back(p.prologue->norm);
    for (Operation *op : ops) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (!generic)
        continue;
      for (OpOperand *input : generic.getDpsInputOperands()) {
        Value value = input->get();
        int64_t rank = cast<MemRefType>(value.getType()).getRank();
        if (views.count(value) ||
            rowOperandKind(*p.prologue, *input) == RowOperandKind::Row)
          continue;
        views[value] =
            rowOperandKind(*p.prologue, *input) == RowOperandKind::Element &&
                    rank > 2
                ? memref::CollapseShapeOp::create(
                      b, loc, value,
                      ArrayRef<ReassociationIndices>{
                          llvm::to_vector(llvm::seq<int64_t>(0, rank - 1)),
                          {rank - 1}})
                      .getResult()
                : value;
      }
    }
  }
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::LaunchOp launch =
      createLaunch(b, loc, {blocks, one, one},
                   arith::ConstantIndexOp::create(b, loc, 32 * kWarps));
  FewRowsBuilder(b, loc, p, maxRows, views).build(launch, operands);
}
