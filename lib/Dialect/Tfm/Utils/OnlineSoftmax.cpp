//===- OnlineSoftmax.cpp - decomposing tfm.online_attention ----------------===//

#include "tfm/Dialect/Tfm/Utils/OnlineSoftmax.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

using Iter = utils::IteratorType;

namespace {

Value f32(OpBuilder &b, Location loc, double value) {
  return LinalgBuilder::constantF32(b, loc, value);
}

/// `exp(x - max)`, or 0 where `max` is -inf (a row that has seen no key).
Value expBelow(OpBuilder &b, Location loc, Value x, Value max) {
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max,
                                      f32(b, loc, -INFINITY));
  Value e = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, max));
  return arith::SelectOp::create(b, loc, empty, f32(b, loc, 0.0), e);
}

/// The op's body applied to every raw dot product of `dots` [M, N].
Value applyScoreBody(LinalgBuilder &lb, OnlineAttentionOp op, Value dots) {
  AffineMap identity = lb.map(2, {0, 1});
  return lb.generic(
      {dots}, {identity}, lb.empty(lb.sizesOf(dots), lb.f32()), identity,
      {Iter::parallel, Iter::parallel},
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        IRMapping mapping;
        mapping.map(op.getDotArgument(), args[0]);
        mapping.map(op.getRowArgument(), linalg::IndexOp::create(b, loc, 0));
        mapping.map(op.getKeyArgument(), linalg::IndexOp::create(b, loc, 1));
        for (Operation &inner : op.getBody()->without_terminator())
          b.clone(inner, mapping);
        return mapping.lookupOrDefault(op.getScore());
      });
}

} // namespace

OnlineAttentionProducts OnlineAttentionProducts::generic() {
  OnlineAttentionProducts products;
  products.scores = [](OpBuilder &b, Location loc, Value query, Value key) {
    LinalgBuilder lb(b, loc);
    SmallVector<OpFoldResult> sizes{lb.sizeOf(query, 0), lb.sizeOf(key, 0)};
    return lb.generic(
        {query, key}, {lb.map(3, {0, 2}), lb.map(3, {1, 2})},
        lb.filledF32(sizes, 0.0), lb.map(3, {0, 1}),
        {Iter::parallel, Iter::parallel, Iter::reduction},
        [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Value product = arith::MulFOp::create(
              nb, nl, LinalgBuilder::toF32(nb, nl, args[0]),
              LinalgBuilder::toF32(nb, nl, args[1]));
          return arith::AddFOp::create(nb, nl, args[2], product);
        });
  };
  products.accumulate = [](OpBuilder &b, Location loc, Value probs,
                           Value value, Value acc) {
    LinalgBuilder lb(b, loc);
    return lb.generic(
        {probs, value}, {lb.map(3, {0, 2}), lb.map(3, {2, 1})}, acc,
        lb.map(3, {0, 1}), {Iter::parallel, Iter::parallel, Iter::reduction},
        [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Value product = arith::MulFOp::create(
              nb, nl, args[0], LinalgBuilder::toF32(nb, nl, args[1]));
          return arith::AddFOp::create(nb, nl, args[2], product);
        });
  };
  return products;
}

/// m' = max(m, rowmax(s)); p = exp(s - m'); α = exp(m - m')
/// l' = α·l + rowsum(p);   acc' = α·acc + p · V
/// The state is updated in place (each result reuses its init's tensor), so
/// that bufferization keeps one m, l and acc per tile.
SmallVector<Value>
mlir::tfm::decomposeOnlineAttention(OpBuilder &b, OnlineAttentionOp op,
                                    const OnlineAttentionProducts &products) {
  Location loc = op.getLoc();
  LinalgBuilder lb(b, loc);
  Value m = op.getMax(), l = op.getSum(), acc = op.getAcc();
  Value scores = applyScoreBody(
      lb, op, products.scores(b, loc, op.getQuery(), op.getKey()));

  AffineMap tile2 = lb.map(2, {0, 1}), row2 = lb.map(2, {0});
  AffineMap row1 = lb.map(1, {0});
  SmallVector<Iter> rowIters{Iter::parallel, Iter::reduction};
  SmallVector<Iter> rowParallel{Iter::parallel};
  SmallVector<Iter> tileParallel(2, Iter::parallel);
  SmallVector<OpFoldResult> rowSizes = lb.sizesOf(m);
  SmallVector<OpFoldResult> scoreSizes = lb.sizesOf(scores);
  // rowmax(s)
  Value rowMax = lb.generic(
      {scores}, {tile2}, lb.filledF32(rowSizes, -INFINITY), row2, rowIters,
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return arith::MaximumFOp::create(nb, nl, args[0], args[1]);
      });
  // α = exp(m - max(m, rowmax)), 0 where both are -inf (then l = acc = 0)
  Value alpha = lb.elementwise(
      {m, rowMax}, {row1, row1}, rowSizes, lb.f32(),
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value newMax = arith::MaximumFOp::create(nb, nl, args[0], args[1]);
        return expBelow(nb, nl, args[0], newMax);
      });
  // m' = max(m, rowmax), in place
  Value newMax = lb.generic(
      {rowMax}, {row1}, m, row1, rowParallel,
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return arith::MaximumFOp::create(nb, nl, args[0], args[1]);
      });
  // p = exp(s - m'), 0 where m' = -inf
  Value probs = lb.elementwise(
      {scores, newMax}, {tile2, row2}, scoreSizes, lb.f32(),
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return expBelow(nb, nl, args[0], args[1]);
      });
  auto scaleInPlace = [&](Value state, AffineMap stateMap, AffineMap rowMap,
                          ArrayRef<Iter> iterators) {
    return lb.generic({alpha}, {rowMap}, state, stateMap, iterators,
                      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
                        return arith::MulFOp::create(nb, nl, args[1], args[0]);
                      });
  };
  // l' = α·l + rowsum(p)
  Value newSum = lb.generic(
      {probs}, {tile2}, scaleInPlace(l, row1, row1, rowParallel), row2,
      rowIters, [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return arith::AddFOp::create(nb, nl, args[1], args[0]);
      });
  // acc' = α·acc + p · V
  Value newAcc =
      products.accumulate(b, loc, probs, op.getValue(),
                          scaleInPlace(acc, tile2, row2, tileParallel));
  return {newMax, newSum, newAcc};
}
