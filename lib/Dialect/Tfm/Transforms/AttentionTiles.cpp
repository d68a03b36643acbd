//===- AttentionTiles.cpp - the tiles of tiled attention -------------------===//

#include "AttentionTiles.h"

#include "tfm/Dialect/Tfm/Utils/AttentionDims.h"
#include "tfm/Dialect/Tfm/Utils/AttentionScores.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::detail;

using Iter = utils::IteratorType;

namespace {

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// min(begin + i, last): the clamped source index of tile position i, so
/// padding reads valid memory.
Value clampedIndex(OpBuilder &b, Location loc, Value begin, Value i,
                   Value last) {
  return arith::MinSIOp::create(b, loc,
                                arith::AddIOp::create(b, loc, begin, i), last);
}

Value lastQueryRow(OpBuilder &b, Location loc, const TileContext &ctx) {
  return arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, ctx.queryBegin, ctx.rows),
      indexConstant(b, loc, 1));
}

/// The query head and (clamped) query row of tile row `m`.
std::pair<Value, Value> headAndRow(OpBuilder &b, Location loc,
                                   const TileContext &ctx, Value m) {
  Value perHead = indexConstant(b, loc, ctx.rowsPerHead);
  Value g = arith::DivUIOp::create(b, loc, m, perHead);
  Value i = arith::RemUIOp::create(b, loc, m, perHead);
  Value head = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, ctx.kvHead,
                            indexConstant(b, loc, ctx.group)),
      g);
  return {head, clampedIndex(b, loc, ctx.queryBegin, i,
                             lastQueryRow(b, loc, ctx))};
}

/// The element of a dense mask or bias at score (b, head, row, key), with
/// NumPy broadcasting (a static 1 reads index 0).
Value readBroadcast(OpBuilder &b, Location loc, Value tensor,
                    ArrayRef<Value> scoreIndex) {
  auto type = cast<RankedTensorType>(tensor.getType());
  size_t skip = scoreIndex.size() - type.getRank();
  SmallVector<Value> indices;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    indices.push_back(size == 1 ? indexConstant(b, loc, 0)
                                : scoreIndex[skip + i]);
  return tensor::ExtractOp::create(b, loc, tensor, indices);
}

/// Keys (or values) [k0, k0 + TK) of kv head h: a static slice [TK, W],
/// read in place.
Value keySlice(OpBuilder &b, Location loc, const TileContext &ctx,
               Value source, Value keyBegin) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  int64_t width = sourceType.getDimSize(kHead);
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({ctx.keysPerTile, width},
                            sourceType.getElementType()),
      source, ArrayRef<OpFoldResult>{ctx.batch, ctx.kvHead, keyBegin, zero},
      ArrayRef<OpFoldResult>{one, one, b.getIndexAttr(ctx.keysPerTile),
                             b.getIndexAttr(width)},
      SmallVector<OpFoldResult>(4, one));
}

/// The partial key (or value) tile at `keyBegin` [TK, W]: row j is key
/// min(k0 + j, keyEnd - 1), so the padding (masked) reads valid memory.
Value gatherPartialKeyTile(OpBuilder &b, Location loc, const TileContext &ctx,
                           Value source, Value keyBegin, Value keyEnd) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  LinalgBuilder lb(b, loc);
  SmallVector<OpFoldResult> sizes{
      b.getIndexAttr(ctx.keysPerTile),
      b.getIndexAttr(sourceType.getDimSize(kHead))};
  Value lastKey = arith::SubIOp::create(b, loc, keyEnd,
                                        indexConstant(b, loc, 1));
  return lb.generic(
      {}, {}, lb.empty(sizes, sourceType.getElementType()),
      lb.map(2, {0, 1}), {Iter::parallel, Iter::parallel},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        Value key = clampedIndex(nb, nl, keyBegin,
                                 linalg::IndexOp::create(nb, nl, 0), lastKey);
        return tensor::ExtractOp::create(
            nb, nl, source,
            ValueRange{ctx.batch, ctx.kvHead, key,
                       linalg::IndexOp::create(nb, nl, 1)});
      });
}

/// The score of raw dot product `dot` at tile row `m` and key `j` of the key
/// tile at `keyBegin`: scale, softcap and bias; with `applyMask`, also the
/// structured and dense masks and the key range (-inf where masked).
Value buildScore(OpBuilder &b, Location loc, const TileContext &ctx,
                 Value dot, Value m, Value j, Value keyBegin, Value keyEnd,
                 bool applyMask) {
  AttentionOp op = ctx.op;
  Value bias = op.getBias(), dense = op.getDenseMask();
  Value score = buildScaledScore(b, loc, op, dot);
  if (!bias && !applyMask)
    return score;
  auto [head, row] = headAndRow(b, loc, ctx, m);
  Value key = arith::AddIOp::create(b, loc, keyBegin, j);
  Value lastKey =
      arith::SubIOp::create(b, loc, keyEnd, indexConstant(b, loc, 1));
  SmallVector<Value> scoreIndex{ctx.batch, head, row,
                                arith::MinSIOp::create(b, loc, key, lastKey)};
  if (bias)
    score = arith::AddFOp::create(
        b, loc, score,
        LinalgBuilder::toF32(b, loc, readBroadcast(b, loc, bias, scoreIndex)));
  if (!applyMask)
    return score;
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, key, keyEnd);
  Value visible = arith::AndIOp::create(
      b, loc, inRange, buildIsVisible(b, loc, ctx.mask, row, key, ctx.offset));
  if (dense)
    visible = arith::AndIOp::create(b, loc, visible,
                                    readBroadcast(b, loc, dense, scoreIndex));
  return arith::SelectOp::create(
      b, loc, visible, score, LinalgBuilder::constantF32(b, loc, -INFINITY));
}

/// One tfm.online_attention step of the query tile over the key tile at
/// `keyBegin`.
ValueRange attendTile(OpBuilder &b, Location loc, const TileContext &ctx,
                      Value queryTile, Value keyTile, Value valueTile,
                      Value keyBegin, Value keyEnd, bool applyMask,
                      ValueRange state) {
  return OnlineAttentionOp::create(
             b, loc, queryTile, keyTile, valueTile, state,
             [&](OpBuilder &nb, Location nl, Value dot, Value m, Value j) {
               return buildScore(nb, nl, ctx, dot, m, j, keyBegin, keyEnd,
                                 applyMask);
             })
      .getResults();
}

/// One step over the complete key tile at `keyBegin`: the element mask only
/// where the mask band cuts the tile (or everywhere, with a dense mask).
ValueRange attendCompleteTile(OpBuilder &b, Location loc,
                              const TileContext &ctx, Value queryTile,
                              Value keyBegin, Value keyEnd, ValueRange state) {
  AttentionOp op = ctx.op;
  Value keyTile = keySlice(b, loc, ctx, op.getKey(), keyBegin);
  Value valueTile = keySlice(b, loc, ctx, op.getValue(), keyBegin);
  auto attend = [&](OpBuilder &nb, Location nl, bool applyMask) {
    return attendTile(nb, nl, ctx, queryTile, keyTile, valueTile, keyBegin,
                      keyEnd, applyMask, state);
  };
  if (op.getDenseMask() || ctx.mask.isNone())
    return attend(b, loc, /*applyMask=*/op.getDenseMask() != nullptr);
  Value tileEnd = arith::AddIOp::create(
      b, loc, keyBegin, indexConstant(b, loc, ctx.keysPerTile));
  Value full = buildIsTileFullyVisible(b, loc, ctx.mask, ctx.queryBegin,
                                       lastQueryRow(b, loc, ctx), keyBegin,
                                       tileEnd, ctx.offset);
  return scf::IfOp::create(
             b, loc, full,
             [&](OpBuilder &nb, Location nl) {
               scf::YieldOp::create(nb, nl, attend(nb, nl, false));
             },
             [&](OpBuilder &nb, Location nl) {
               scf::YieldOp::create(nb, nl, attend(nb, nl, true));
             })
      .getResults();
}

} // namespace

Value mlir::tfm::detail::gatherQueryTile(LinalgBuilder &lb,
                                         const TileContext &ctx) {
  AttentionOp op = ctx.op;
  Value query = op.getQuery();
  auto queryType = cast<RankedTensorType>(query.getType());
  int64_t headDim = queryType.getDimSize(kHead);
  OpBuilder &b = lb.builder();
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(ctx.group),
                                  b.getIndexAttr(ctx.rowsPerHead),
                                  b.getIndexAttr(headDim)};
  Value gathered = lb.generic(
      {}, {}, lb.empty(sizes, queryType.getElementType()), lb.map(3, {0, 1, 2}),
      SmallVector<Iter>(3, Iter::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange) -> Value {
        Value m = arith::AddIOp::create(
            nb, loc,
            arith::MulIOp::create(nb, loc, linalg::IndexOp::create(nb, loc, 0),
                                  indexConstant(nb, loc, ctx.rowsPerHead)),
            linalg::IndexOp::create(nb, loc, 1));
        auto [head, row] = headAndRow(nb, loc, ctx, m);
        return tensor::ExtractOp::create(
            nb, loc, query,
            ValueRange{ctx.batch, head, row,
                       linalg::IndexOp::create(nb, loc, 2)});
      });
  return tensor::CollapseShapeOp::create(
      b, lb.location(),
      RankedTensorType::get({ctx.tileRows(), headDim},
                            queryType.getElementType()),
      gathered, SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

SmallVector<Value> mlir::tfm::detail::attendKeyTiles(
    LinalgBuilder &lb, const TileContext &ctx, Value queryTile,
    Value firstTile, Value loopBegin, Value loopEnd, Value keyEnd,
    int64_t valueDim) {
  OpBuilder &b = lb.builder();
  Location loc = lb.location();
  SmallVector<OpFoldResult> rowSizes{b.getIndexAttr(ctx.tileRows())};
  SmallVector<OpFoldResult> accSizes{b.getIndexAttr(ctx.tileRows()),
                                     b.getIndexAttr(valueDim)};
  SmallVector<Value> state{lb.filledF32(rowSizes, -INFINITY),
                           lb.filledF32(rowSizes, 0.0),
                           lb.filledF32(accSizes, 0.0)};
  // Complete tiles end at fullEnd = firstTile + floor((keyEnd - firstTile)
  // / TK) * TK; a partial tile [fullEnd, keyEnd) may follow.
  Value tile = indexConstant(b, loc, ctx.keysPerTile);
  Value keys = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, keyEnd, firstTile),
      indexConstant(b, loc, 0));
  Value fullEnd = arith::AddIOp::create(
      b, loc, firstTile,
      arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, keys, tile),
                            tile));
  auto loop = scf::ForOp::create(
      b, loc, loopBegin, arith::MinSIOp::create(b, loc, loopEnd, fullEnd),
      tile, state,
      [&](OpBuilder &nb, Location nl, Value k0, ValueRange iterState) {
        scf::YieldOp::create(nb, nl,
                             attendCompleteTile(nb, nl, ctx, queryTile, k0,
                                                keyEnd, iterState));
      });
  // The partial tile, when this run of tiles holds it.
  auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
  };
  Value partial = arith::AndIOp::create(
      b, loc, cmp(arith::CmpIPredicate::slt, fullEnd, keyEnd),
      arith::AndIOp::create(b, loc,
                            cmp(arith::CmpIPredicate::sle, loopBegin, fullEnd),
                            cmp(arith::CmpIPredicate::slt, fullEnd, loopEnd)));
  AttentionOp op = ctx.op;
  auto peeled = scf::IfOp::create(
      b, loc, partial,
      [&](OpBuilder &nb, Location nl) {
        Value keyTile =
            gatherPartialKeyTile(nb, nl, ctx, op.getKey(), fullEnd, keyEnd);
        Value valueTile =
            gatherPartialKeyTile(nb, nl, ctx, op.getValue(), fullEnd, keyEnd);
        scf::YieldOp::create(nb, nl,
                             attendTile(nb, nl, ctx, queryTile, keyTile,
                                        valueTile, fullEnd, keyEnd,
                                        /*applyMask=*/true,
                                        loop.getResults()));
      },
      [&](OpBuilder &nb, Location nl) {
        scf::YieldOp::create(nb, nl, loop.getResults());
      });
  return peeled.getResults();
}

Value mlir::tfm::detail::normalize(OpBuilder &b, Location loc, Value acc,
                                   Value sum, Type elementType) {
  Value zero = LinalgBuilder::constantF32(b, loc, 0.0);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
  Value quotient = arith::DivFOp::create(b, loc, acc, sum);
  return LinalgBuilder::fromF32(
      b, loc, arith::SelectOp::create(b, loc, empty, zero, quotient),
      elementType);
}
