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
// of each row, or the epilogue's values.
//
//===----------------------------------------------------------------------===//

#include "Projection.h"
#include "KernelLaunch.h"
#include "TensorCoreBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

constexpr int64_t kWarps = 4; // a block's warps, a pair of columns each
constexpr int64_t kChunk = 8; // elements of K a lane loads at a time
constexpr int64_t kSpan = 32 * kChunk; // elements of K a warp loads at a time
/// Steps whose weights are loaded before any is multiplied: 2·kUnroll
/// loads of 16 bytes in flight a lane.
constexpr int64_t kUnroll = 4;

class FewRowsBuilder : TensorCoreBuilder {
public:
  FewRowsBuilder(OpBuilder &b, Location loc, const Projection &p,
                 int64_t maxRows)
      : TensorCoreBuilder(b, loc,
                          cast<MemRefType>(p.b.getType()).getElementType()),
        p(p), maxRows(maxRows) {}

  void build(gpu::LaunchOp launch, ArrayRef<Value> operands);

private:
  /// The 8 elements of `memref` at [row, k..k + 7] (16 aligned bytes) as
  /// f32.
  Value loadChunk(Value memref, Value row, Value k);
  /// `sums` ([row][column of the pair]) plus the products of the rows'
  /// chunks at `k` with `weights`, the two columns' chunks there; rows past
  /// `rows` unchanged.
  SmallVector<Value> accumulate(ArrayRef<Value> weights, Value k,
                                ValueRange sums);
  /// The sum of `value` over the warp's lanes, in every lane.
  Value warpSum(Value value);

  const Projection &p;
  int64_t maxRows;
  Value rows;
};

Value FewRowsBuilder::loadChunk(Value memref, Value row, Value k) {
  Value chunk = vector::LoadOp::create(
      b, loc, VectorType::get({kChunk}, element), memref, ValueRange{row, k},
      /*nontemporal=*/false, llvm::MaybeAlign(16));
  return arith::ExtFOp::create(
      b, loc, VectorType::get({kChunk}, b.getF32Type()), chunk);
}

SmallVector<Value> FewRowsBuilder::accumulate(ArrayRef<Value> weights, Value k,
                                              ValueRange sums) {
  SmallVector<Value> next;
  Type f32Type = b.getF32Type();
  for (int64_t m = 0; m < maxRows; ++m) {
    auto exists =
        scf::IfOp::create(b, loc, TypeRange{f32Type, f32Type},
                          cmp(arith::CmpIPredicate::slt, index(m), rows),
                          /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(exists.thenBlock());
      Value x = loadChunk(p.a, index(m), k);
      SmallVector<Value> pair;
      for (int64_t c = 0; c < 2; ++c)
        pair.push_back(vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD,
            arith::MulFOp::create(b, loc, x, weights[c]), sums[2 * m + c]));
      scf::YieldOp::create(b, loc, pair);
      b.setInsertionPointToStart(exists.elseBlock());
      scf::YieldOp::create(b, loc, sums.slice(2 * m, 2));
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

  // Lane l loads K elements [s·256 + 8l, s·256 + 8l + 8) at step s: the
  // whole steps kUnroll at a time, their weights loaded first, then the
  // rest one at a time, a last partial step's lanes past K adding nothing.
  Value laneK = mul(lane, kChunk);
  auto weightsAt = [&](Value k) -> SmallVector<Value> {
    return {loadChunk(p.b, column, k), loadChunk(p.b, add(column, 1), k)};
  };
  int64_t wholeSteps = p.k / kSpan, steps = llvm::divideCeil(p.k, kSpan);
  int64_t grouped = wholeSteps / kUnroll * kUnroll;
  SmallVector<Value> sums(2 * maxRows, f32(0.0));
  if (grouped > 0) {
    auto unrolled = scf::ForOp::create(
        b, loc, index(0), index(grouped), index(kUnroll), sums,
        [&](OpBuilder &, Location, Value step, ValueRange state) {
          SmallVector<Value> ks;
          SmallVector<SmallVector<Value>> weights;
          for (int64_t u = 0; u < kUnroll; ++u) {
            ks.push_back(add(mul(add(step, u), kSpan), laneK));
            weights.push_back(weightsAt(ks.back()));
          }
          SmallVector<Value> next(state);
          for (int64_t u = 0; u < kUnroll; ++u)
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
    SmallVector<Value> rowSums = {totals[2 * m], totals[2 * m + 1]};
    if (!p.fill) {
      Value start = vector::LoadOp::create(b, loc, pairType, p.c,
                                           ValueRange{row, column});
      for (int64_t e = 0; e < 2; ++e)
        rowSums[e] = arith::AddFOp::create(
            b, loc, vector::ExtractOp::create(b, loc, start, e), rowSums[e]);
    }
    Value pair =
        p.epilogue ? evaluateEpilogue(b, loc, p, operands, rowSums, row, column)
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
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::LaunchOp launch =
      createLaunch(b, loc, {blocks, one, one},
                   arith::ConstantIndexOp::create(b, loc, 32 * kWarps));
  FewRowsBuilder(b, loc, p, maxRows).build(launch, operands);
}
