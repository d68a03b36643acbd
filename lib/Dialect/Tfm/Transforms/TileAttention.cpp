//===- TileAttention.cpp - FlashAttention-2 style tiling -------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Transforms.h"
#include "tfm/Dialect/Tfm/Utils/AttentionDims.h"
#include "tfm/Dialect/Tfm/Utils/AttentionScores.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMTILEATTENTIONPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

using Iter = utils::IteratorType;

/// Everything the tile computations need, for one (b, h, query tile).
///
/// A tile has static shapes: its M = G * TQ rows stack the TQ query rows of
/// each of the G heads of kv head h (row m is head g = m / TQ, query row
/// i = m % TQ), and its key tiles have TK columns. Rows past the query
/// sequence and keys past the visible range are padding: padded rows repeat
/// the last valid row and are never written out; padded keys are masked.
struct TileContext {
  AttentionOp op;
  int64_t group;          // G
  int64_t rowsPerHead;    // TQ
  int64_t keysPerTile;    // TK
  Value batch, kvHead;    // b, h
  Value queryBegin, rows; // q0, valid rows per head (<= TQ)
  Value offset;           // Skv - Sq
  MaskAttr mask;
};

/// f32 constant `value` in a body.
Value f32(OpBuilder &b, Location loc, double value) {
  return LinalgBuilder::constantF32(b, loc, value);
}

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
  Value lastRow = arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, ctx.queryBegin, ctx.rows),
      indexConstant(b, loc, 1));
  return {head, clampedIndex(b, loc, ctx.queryBegin, i, lastRow)};
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

/// The query rows of the tile as f32 [M, D], read once per query tile.
Value packQueryTile(LinalgBuilder &lb, const TileContext &ctx) {
  Value query = AttentionOp(ctx.op).getQuery();
  int64_t headDim = cast<RankedTensorType>(query.getType()).getDimSize(3);
  SmallVector<OpFoldResult> sizes{lb.builder().getIndexAttr(ctx.group),
                                  lb.builder().getIndexAttr(ctx.rowsPerHead),
                                  lb.builder().getIndexAttr(headDim)};
  Value packed = lb.generic(
      {}, {}, lb.empty(sizes, lb.f32()), lb.map(3, {0, 1, 2}),
      SmallVector<Iter>(3, Iter::parallel),
      [&](OpBuilder &b, Location loc, ValueRange) -> Value {
        Value perHead = indexConstant(b, loc, ctx.rowsPerHead);
        Value m = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, linalg::IndexOp::create(b, loc, 0),
                                  perHead),
            linalg::IndexOp::create(b, loc, 1));
        auto [head, row] = headAndRow(b, loc, ctx, m);
        Value element = tensor::ExtractOp::create(
            b, loc, query,
            ValueRange{ctx.batch, head, row,
                       linalg::IndexOp::create(b, loc, 2)});
        return LinalgBuilder::toF32(b, loc, element);
      });
  int64_t rows = ctx.group * ctx.rowsPerHead;
  return tensor::CollapseShapeOp::create(
      lb.builder(), lb.location(),
      RankedTensorType::get({rows, headDim}, lb.f32()), packed,
      SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

/// Keys (or values) [k0, k0 + TK) of kv head h: a static slice [TK, W].
Value keySlice(OpBuilder &b, Location loc, const TileContext &ctx,
               Value source, Value keyBegin) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  int64_t width = sourceType.getDimSize(3);
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({ctx.keysPerTile, width},
                            sourceType.getElementType()),
      source, ArrayRef<OpFoldResult>{ctx.batch, ctx.kvHead, keyBegin, zero},
      ArrayRef<OpFoldResult>{one, one, b.getIndexAttr(ctx.keysPerTile),
                             b.getIndexAttr(width)},
      SmallVector<OpFoldResult>(4, one));
}

/// An empty f32 tile for keys (or values) of `source`: [TK, W], or [W, TK]
/// with `transpose`.
Value emptyKeyTile(OpBuilder &b, Location loc, const TileContext &ctx,
                   Value source, bool transpose) {
  int64_t width = cast<RankedTensorType>(source.getType()).getDimSize(3);
  int64_t keys = ctx.keysPerTile;
  return tensor::EmptyOp::create(
      b, loc,
      transpose ? ArrayRef<int64_t>{width, keys} : ArrayRef<int64_t>{keys, width},
      b.getF32Type());
}

/// Keys (or values) [k0, k0 + TK) of kv head h converted to f32 into `init`
/// (from emptyKeyTile). With `keyEnd`, the tile is the last, partial one and
/// column j reads key min(k0 + j, keyEnd - 1) (padding is masked out);
/// without, it is a copy of the full slice.
Value packKeyTile(OpBuilder &b, Location loc, const TileContext &ctx,
                  Value source, Value init, Value keyBegin, Value keyEnd,
                  bool transpose) {
  LinalgBuilder lb(b, loc);
  SmallVector<Iter> iterators(2, Iter::parallel);
  if (!keyEnd) {
    AffineMap read = transpose ? lb.map(2, {1, 0}) : lb.map(2, {0, 1});
    return lb.generic({keySlice(b, loc, ctx, source, keyBegin)}, {read}, init,
                      lb.map(2, {0, 1}), iterators,
                      [](OpBuilder &nb, Location nl, ValueRange args) {
                        return LinalgBuilder::toF32(nb, nl, args[0]);
                      });
  }
  unsigned keyLoop = transpose ? 1 : 0;
  Value lastKey = arith::SubIOp::create(b, loc, keyEnd,
                                        indexConstant(b, loc, 1));
  return lb.generic(
      {}, {}, init, lb.map(2, {0, 1}), iterators,
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        Value key = clampedIndex(nb, nl, keyBegin,
                                 linalg::IndexOp::create(nb, nl, keyLoop),
                                 lastKey);
        Value w = linalg::IndexOp::create(nb, nl, 1 - keyLoop);
        Value element = tensor::ExtractOp::create(
            nb, nl, source, ValueRange{ctx.batch, ctx.kvHead, key, w});
        return LinalgBuilder::toF32(nb, nl, element);
      });
}

/// Raw dot products [M, TK] of the query tile with keys [k0, k0 + TK),
/// through a packed Kᵀ [D, TK] in f32, so that the product is a plain matmul
/// whose packing cost is shared by the M rows.
Value packedScores(LinalgBuilder &lb, const TileContext &ctx, Value queryTile,
                   Value keyBegin, Value keyEnd, Value complete) {
  OpBuilder &builder = lb.builder();
  Location loc = lb.location();
  Value key = AttentionOp(ctx.op).getKey();
  // Both branches (and those of the caller) write one destination created
  // outside them, so each tile buffer is allocated once and has one layout.
  Value keyInit = emptyKeyTile(builder, loc, ctx, key, /*transpose=*/true);
  Value keyTile =
      scf::IfOp::create(
          builder, loc, complete,
          [&](OpBuilder &b, Location l) {
            scf::YieldOp::create(b, l,
                                 packKeyTile(b, l, ctx, key, keyInit, keyBegin,
                                             Value(), /*transpose=*/true));
          },
          [&](OpBuilder &b, Location l) {
            scf::YieldOp::create(b, l,
                                 packKeyTile(b, l, ctx, key, keyInit, keyBegin,
                                             keyEnd, /*transpose=*/true));
          })
          .getResult(0);
  // One K tile serves all G heads.
  SmallVector<OpFoldResult> sizes{
      builder.getIndexAttr(ctx.group * ctx.rowsPerHead),
      builder.getIndexAttr(ctx.keysPerTile)};
  return linalg::MatmulOp::create(builder, loc,
                                  ValueRange{queryTile, keyTile},
                                  ValueRange{lb.filledF32(sizes, 0.0)})
      .getResult(0);
}

/// Lanes of a key-row dot product: a 64-byte line of f32.
constexpr int64_t kDotLanes = 16;
/// Query tiles of at most this many rows (decode: G·Sq) read key rows in
/// place; taller ones pack Kᵀ.
constexpr int64_t kMaxKeyRowTileRows = 8;

/// Whether the tile's scores are dot products along key rows. Packing Kᵀ
/// reads the key tile 16 rows at a time, which streams from memory at about
/// two thirds of the rate of reading rows in order (bench/kv_streams.sh);
/// that matters only where the scores are cheap next to the key reads.
bool readsKeyRows(const TileContext &ctx) {
  auto keyType = cast<RankedTensorType>(AttentionOp(ctx.op).getKey().getType());
  int64_t headDim = keyType.getDimSize(3);
  return ctx.group * ctx.rowsPerHead <= kMaxKeyRowTileRows &&
         !ShapedType::isDynamic(headDim) && headDim % kDotLanes == 0;
}

/// Raw dot products [M, TK] of the query tile with keys [k0, k0 + TK), each
/// key row read once, front to back, where it lies: lane-wise products
/// p[m, j, l] = Σ_c q[m, cL + l]·k[j, cL + l] over chunks of L lanes, then
/// s[m, j] = Σ_l p[m, j, l]. Only the last, partial tile is gathered into a
/// (clamped) f32 copy first.
Value rowDotScores(LinalgBuilder &lb, const TileContext &ctx, Value queryTile,
                   Value keyBegin, Value keyEnd, Value complete) {
  OpBuilder &builder = lb.builder();
  Location loc = lb.location();
  Value key = AttentionOp(ctx.op).getKey();
  int64_t rows = ctx.group * ctx.rowsPerHead;
  int64_t chunks =
      cast<RankedTensorType>(key.getType()).getDimSize(3) / kDotLanes;
  auto lanes = [&](OpBuilder &b, Location l, Value tile, int64_t tileRows) {
    return tensor::ExpandShapeOp::create(
        b, l,
        RankedTensorType::get(
            {tileRows, chunks, kDotLanes},
            cast<RankedTensorType>(tile.getType()).getElementType()),
        tile, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  };
  Value queryLanes = lanes(builder, loc, queryTile, rows);
  SmallVector<OpFoldResult> partialSizes{
      builder.getIndexAttr(rows), builder.getIndexAttr(ctx.keysPerTile),
      builder.getIndexAttr(kDotLanes)};
  SmallVector<OpFoldResult> scoreSizes{builder.getIndexAttr(rows),
                                       builder.getIndexAttr(ctx.keysPerTile)};
  Value partialInit = lb.filledF32(partialSizes, 0.0);
  Value scoreInit = lb.filledF32(scoreSizes, 0.0);
  Value keyInit = emptyKeyTile(builder, loc, ctx, key, /*transpose=*/false);
  // The branches hold the whole product so that the in-place key slice's
  // layout never has to be merged with the packed copy's.
  auto dotProducts = [&](OpBuilder &b, Location l, Value keyTile) {
    LinalgBuilder inner(b, l);
    Value partial = inner.generic(
        {queryLanes, lanes(b, l, keyTile, ctx.keysPerTile)},
        {inner.map(4, {0, 2, 3}), inner.map(4, {1, 2, 3})}, partialInit,
        inner.map(4, {0, 1, 3}),
        {Iter::parallel, Iter::parallel, Iter::reduction, Iter::parallel},
        [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Value product = arith::MulFOp::create(
              nb, nl, args[0], LinalgBuilder::toF32(nb, nl, args[1]));
          return arith::AddFOp::create(nb, nl, args[2], product);
        });
    Value scores = inner.generic(
        {partial}, {inner.map(3, {0, 1, 2})}, scoreInit, inner.map(3, {0, 1}),
        {Iter::parallel, Iter::parallel, Iter::reduction},
        [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          return arith::AddFOp::create(nb, nl, args[1], args[0]);
        });
    scf::YieldOp::create(b, l, scores);
  };
  return scf::IfOp::create(
             builder, loc, complete,
             [&](OpBuilder &b, Location l) {
               dotProducts(b, l, keySlice(b, l, ctx, key, keyBegin));
             },
             [&](OpBuilder &b, Location l) {
               dotProducts(b, l,
                           packKeyTile(b, l, ctx, key, keyInit, keyBegin,
                                       keyEnd, /*transpose=*/false));
             })
      .getResult(0);
}

/// scale, softcap and bias on the [M, TK] tile of raw dot products, into
/// `init`; with `applyMask`, also the structured and dense masks and the key
/// range (-inf where masked).
Value scoreTile(LinalgBuilder &lb, const TileContext &ctx, Value dots,
                Value init, Value keyBegin, Value keyEnd, bool applyMask) {
  AttentionOp op = ctx.op;
  Value bias = op.getBias(), dense = op.getDenseMask();
  AffineMap identity = lb.map(2, {0, 1});
  return lb.generic(
      {dots}, {identity}, init, identity, {Iter::parallel, Iter::parallel},
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value score = buildScaledScore(b, loc, op, args[0]);
        if (!bias && !applyMask)
          return score;
        auto [head, row] =
            headAndRow(b, loc, ctx, linalg::IndexOp::create(b, loc, 0));
        Value key = arith::AddIOp::create(b, loc, keyBegin,
                                          linalg::IndexOp::create(b, loc, 1));
        Value inRange = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, key, keyEnd);
        Value lastKey =
            arith::SubIOp::create(b, loc, keyEnd, indexConstant(b, loc, 1));
        SmallVector<Value> scoreIndex{
            ctx.batch, head, row,
            arith::MinSIOp::create(b, loc, key, lastKey)};
        if (bias)
          score = arith::AddFOp::create(
              b, loc, score,
              LinalgBuilder::toF32(b, loc,
                                   readBroadcast(b, loc, bias, scoreIndex)));
        if (!applyMask)
          return score;
        Value visible = arith::AndIOp::create(
            b, loc, inRange,
            buildIsVisible(b, loc, ctx.mask, row, key, ctx.offset));
        if (dense)
          visible = arith::AndIOp::create(
              b, loc, visible, readBroadcast(b, loc, dense, scoreIndex));
        return arith::SelectOp::create(b, loc, visible, score,
                                       f32(b, loc, -INFINITY));
      });
}

/// One step of the online softmax over the key tile [k0, k0 + TK).
///   m' = max(m, rowmax(s)); p = exp(s - m'); α = exp(m - m')
///   l' = α·l + rowsum(p);   acc' = α·acc + p · V
/// (-inf maxima, i.e. rows that have seen no key, give p = 0 and α = 0.)
SmallVector<Value> onlineSoftmaxStep(LinalgBuilder &lb, const TileContext &ctx,
                                     Value queryTile, Value keyBegin,
                                     Value keyEnd, ValueRange state) {
  OpBuilder &builder = lb.builder();
  Location loc = lb.location();
  AttentionOp op = ctx.op;
  Value m = state[0], l = state[1], acc = state[2];
  int64_t rows = ctx.group * ctx.rowsPerHead;

  // Only the last key tile is partial; only tiles the mask band cuts (or
  // every tile, with a dense mask) pay for the element mask.
  Value tileEnd = arith::AddIOp::create(
      builder, loc, keyBegin, indexConstant(builder, loc, ctx.keysPerTile));
  Value complete = arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::sle, tileEnd, keyEnd);
  auto scoresOf = readsKeyRows(ctx) ? rowDotScores : packedScores;
  Value dots = scoresOf(lb, ctx, queryTile, keyBegin, keyEnd, complete);
  SmallVector<OpFoldResult> scoreSizes{builder.getIndexAttr(rows),
                                       builder.getIndexAttr(ctx.keysPerTile)};

  Value full = complete;
  if (op.getDenseMask()) {
    full = arith::ConstantIntOp::create(builder, loc, 0, 1);
  } else if (!ctx.mask.isNone()) {
    Value lastRow = arith::SubIOp::create(
        builder, loc,
        arith::AddIOp::create(builder, loc, ctx.queryBegin, ctx.rows),
        indexConstant(builder, loc, 1));
    full = arith::AndIOp::create(
        builder, loc, complete,
        buildIsTileFullyVisible(builder, loc, ctx.mask, ctx.queryBegin,
                                lastRow, keyBegin, tileEnd, ctx.offset));
  }
  Value scoreInit = lb.empty(scoreSizes, lb.f32());
  auto branch = scf::IfOp::create(
      builder, loc, full,
      [&](OpBuilder &b, Location l) {
        LinalgBuilder inner(b, l);
        scf::YieldOp::create(
            b, l, scoreTile(inner, ctx, dots, scoreInit, keyBegin, keyEnd,
                            false));
      },
      [&](OpBuilder &b, Location l) {
        LinalgBuilder inner(b, l);
        scf::YieldOp::create(
            b, l, scoreTile(inner, ctx, dots, scoreInit, keyBegin, keyEnd,
                            true));
      });
  Value scores = branch.getResult(0);

  // The running state is updated in place (each result reuses its loop
  // argument's buffer), so bufferization keeps one m, l and acc per tile.
  AffineMap tile2 = lb.map(2, {0, 1}), row2 = lb.map(2, {0});
  AffineMap row1 = lb.map(1, {0});
  SmallVector<Iter> rowIters{Iter::parallel, Iter::reduction};
  SmallVector<Iter> rowParallel{Iter::parallel};
  SmallVector<Iter> tileParallel(2, Iter::parallel);
  SmallVector<OpFoldResult> rowSizes{builder.getIndexAttr(rows)};
  // rowmax(s)
  Value rowMax = lb.generic(
      {scores}, {tile2}, lb.filledF32(rowSizes, -INFINITY), row2, rowIters,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::MaximumFOp::create(b, loc, args[0], args[1]);
      });
  // α = exp(m - max(m, rowmax)), 0 where m = -inf (then l = acc = 0)
  Value alpha = lb.elementwise(
      {m, rowMax}, {row1, row1}, rowSizes, lb.f32(),
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value newMax = arith::MaximumFOp::create(b, loc, args[0], args[1]);
        Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            args[0], f32(b, loc, -INFINITY));
        Value a = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, args[0], newMax));
        return arith::SelectOp::create(b, loc, empty, f32(b, loc, 0.0), a);
      });
  // m' = max(m, rowmax), in place
  Value newMax = lb.generic(
      {rowMax}, {row1}, m, row1, rowParallel,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::MaximumFOp::create(b, loc, args[0], args[1]);
      });
  // p = exp(s - m'), 0 where m' = -inf
  Value probs = lb.elementwise(
      {scores, newMax}, {tile2, row2}, scoreSizes, lb.f32(),
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            args[1], f32(b, loc, -INFINITY));
        Value p = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, args[0], args[1]));
        return arith::SelectOp::create(b, loc, empty, f32(b, loc, 0.0), p);
      });
  auto scaleInPlace = [&](Value state, AffineMap stateMap, AffineMap rowMap,
                          ArrayRef<Iter> iterators) {
    return lb.generic({alpha}, {rowMap}, state, stateMap, iterators,
                      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                        return arith::MulFOp::create(b, loc, args[1], args[0]);
                      });
  };
  // l' = α·l + rowsum(p)
  Value newSum = lb.generic(
      {probs}, {tile2}, scaleInPlace(l, row1, row1, rowParallel), row2,
      rowIters, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::AddFOp::create(b, loc, args[1], args[0]);
      });
  // acc' = α·acc + p · V. A full f32 V tile is read in place; the branches
  // hold the whole product so that the tile's layout never has to be
  // merged with a packed copy's.
  Value scaledAcc = scaleInPlace(acc, tile2, row2, tileParallel);
  auto accumulate = [&](OpBuilder &b, Location l, Value valueTile) {
    scf::YieldOp::create(b, l,
                         linalg::MatmulOp::create(b, l,
                                                  ValueRange{probs, valueTile},
                                                  ValueRange{scaledAcc})
                             .getResult(0));
  };
  Value value = op.getValue();
  Value valueInit = emptyKeyTile(builder, loc, ctx, value, false);
  bool valueIsF32 =
      cast<RankedTensorType>(value.getType()).getElementType().isF32();
  Value newAcc =
      scf::IfOp::create(
          builder, loc, complete,
          [&](OpBuilder &b, Location l) {
            accumulate(b, l,
                       valueIsF32 ? keySlice(b, l, ctx, value, keyBegin)
                                  : packKeyTile(b, l, ctx, value, valueInit,
                                                keyBegin, Value(), false));
          },
          [&](OpBuilder &b, Location l) {
            accumulate(b, l,
                       packKeyTile(b, l, ctx, value, valueInit, keyBegin,
                                   keyEnd, false));
          })
          .getResult(0);
  return {newMax, newSum, newAcc};
}

/// The tiled loops read K, V, masks and bias through slices sized from the
/// query and key: the sizes the verifier could only check for compatibility
/// must agree at run time. Each requirement becomes `cf.assert(dim == dim)`,
/// which tfm-insert-runtime-checks turns into a status check at the entry
/// point.
void assertSameDims(OpBuilder &b, Location loc, AttentionOp op) {
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

/// The online-softmax state (m, l, acc) of a query tile after the key tiles
/// starting at [loopBegin, loopEnd) (TK apart); keys at or past `keyEnd` are
/// masked.
SmallVector<Value> attendKeyTiles(LinalgBuilder &lb, const TileContext &ctx,
                                  Value queryTile, Value loopBegin,
                                  Value loopEnd, Value keyEnd,
                                  int64_t valueDim) {
  OpBuilder &builder = lb.builder();
  int64_t tileRows = ctx.group * ctx.rowsPerHead;
  SmallVector<OpFoldResult> rowSizes{builder.getIndexAttr(tileRows)};
  SmallVector<OpFoldResult> accSizes{builder.getIndexAttr(tileRows),
                                     builder.getIndexAttr(valueDim)};
  SmallVector<Value> init{lb.filledF32(rowSizes, -INFINITY),
                          lb.filledF32(rowSizes, 0.0),
                          lb.filledF32(accSizes, 0.0)};
  auto loop = scf::ForOp::create(
      builder, lb.location(), loopBegin, loopEnd,
      indexConstant(builder, lb.location(), ctx.keysPerTile), init,
      [&](OpBuilder &nested, Location nestedLoc, Value k0, ValueRange state) {
        LinalgBuilder inner(nested, nestedLoc);
        scf::YieldOp::create(
            nested, nestedLoc,
            onlineSoftmaxStep(inner, ctx, queryTile, k0, keyEnd, state));
      });
  return loop.getResults();
}

/// `l == 0 ? 0 : acc / l`, converted to the result's element type.
Value normalize(OpBuilder &b, Location loc, Value acc, Value sum,
                Type elementType) {
  Value zero = f32(b, loc, 0.0);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
  Value quotient = arith::DivFOp::create(b, loc, acc, sum);
  return LinalgBuilder::fromF32(
      b, loc, arith::SelectOp::create(b, loc, empty, zero, quotient),
      elementType);
}

struct TileAttention : OpRewritePattern<AttentionOp> {
  TileAttention(MLIRContext *context, int64_t tileQ, int64_t tileKv,
                int64_t kvSplits)
      : OpRewritePattern(context), tileQ(tileQ), tileKv(tileKv),
        kvSplits(kvSplits) {}

  /// With auto splits, short queries get enough key-range splits for this
  /// many (batch, kv head, split) work items at batch 1.
  static constexpr int64_t kMinWorkItems = 16;

  /// Splits of the key range; 1 unless the query is static and fits one
  /// tile (decode, short prompts), where (batch, kv head) alone may leave
  /// threads idle.
  int64_t splitsFor(const AttentionDims &dims) const {
    if (ShapedType::isDynamic(dims.querySeq) || dims.querySeq < 1 ||
        dims.querySeq > tileQ)
      return 1;
    if (kvSplits > 0)
      return kvSplits;
    int64_t splits = llvm::divideCeil(kMinWorkItems, dims.kvHeads);
    if (!ShapedType::isDynamic(dims.kvSeq))
      splits = std::min<int64_t>(splits, llvm::divideCeil(dims.kvSeq, tileKv));
    return std::max<int64_t>(splits, 1);
  }

  /// The visible keys of one query tile: the loops start at `firstTile`
  /// (TK-aligned) and end at `keyEnd`.
  struct KeyRange {
    Value firstTile, keyEnd;
  };

  KeyRange visibleKeys(OpBuilder &b, Location loc, const TileContext &ctx,
                       Value kvSeq) const {
    Value kvLength = kvSeq;
    if (Value lengths = AttentionOp(ctx.op).getKvLengths()) {
      Value length = arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          tensor::ExtractOp::create(b, loc, lengths, ValueRange{ctx.batch}));
      kvLength = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, length, indexConstant(b, loc, 0)),
          kvSeq);
    }
    Value lastRow = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, ctx.queryBegin, ctx.rows),
        indexConstant(b, loc, 1));
    auto [keyBegin, keyEnd] = buildVisibleKeyRange(
        b, loc, ctx.mask, ctx.queryBegin, lastRow, ctx.offset, kvLength);
    Value tile = indexConstant(b, loc, tileKv);
    Value firstTile = arith::MulIOp::create(
        b, loc, arith::DivSIOp::create(b, loc, keyBegin, tile), tile);
    return {firstTile, keyEnd};
  }

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LinalgBuilder lb(rewriter, loc);
    AttentionDims dims = AttentionDims::get(
        op.getQuery().getType(), op.getKey().getType(),
        op.getValue().getType());
    assertSameDims(rewriter, loc, op);

    OpFoldResult batch = lb.sizeOf(op.getQuery(), kBatch);
    OpFoldResult querySeq = lb.sizeOf(op.getQuery(), kSeq);
    Value sq = getValueOrCreateConstantIndexOp(rewriter, loc, querySeq);
    Value skv = getValueOrCreateConstantIndexOp(
        rewriter, loc, lb.sizeOf(op.getKey(), kSeq));
    Value offset = arith::SubIOp::create(rewriter, loc, skv, sq);
    int64_t splits = splitsFor(dims);
    Value result =
        splits > 1
            ? tileSplitKeys(lb, op, dims, splits, batch, sq, skv, offset)
            : tileQueries(lb, op, dims, batch, querySeq, sq, skv, offset);
    LinalgBuilder::replaceOp(rewriter, op, result);
    return success();
  }

  /// One scf.forall iteration per (b, kv head h, query tile t), each
  /// attending to all its visible keys and writing its normalized rows.
  Value tileQueries(LinalgBuilder &lb, AttentionOp op,
                    const AttentionDims &dims, OpFoldResult batch,
                    OpFoldResult querySeq, Value sq, Value skv,
                    Value offset) const {
    OpBuilder &rewriter = lb.builder();
    Location loc = lb.location();
    int64_t group = dims.groupSize();
    Type elementType = op.getType().getElementType();
    Value out = lb.empty({batch, rewriter.getIndexAttr(dims.queryHeads),
                          querySeq, rewriter.getIndexAttr(dims.valueDim)},
                         elementType);
    // A short static query (decode) gets a tile of its own size.
    int64_t rowsPerHead = ShapedType::isDynamic(dims.querySeq)
                              ? tileQ
                              : std::max<int64_t>(
                                    1, std::min(tileQ, dims.querySeq));
    Value queryTiles = arith::CeilDivSIOp::create(
        rewriter, loc, sq, indexConstant(rewriter, loc, rowsPerHead));
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(dims.kvHeads),
                               queryTiles},
        ValueRange{out}, std::nullopt);

    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(forall.getBody()->getTerminator());
    SmallVector<Value> ivs(forall.getInductionVars());
    Value b = ivs[0], h = ivs[1], t = ivs[2];
    Value q0 = arith::MulIOp::create(rewriter, loc, t,
                                     indexConstant(rewriter, loc, rowsPerHead));
    Value rows = arith::MinSIOp::create(
        rewriter, loc, indexConstant(rewriter, loc, rowsPerHead),
        arith::SubIOp::create(rewriter, loc, sq, q0));
    TileContext ctx{op, group, rowsPerHead, tileKv, b,
                    h,  q0,    rows,        offset, op.getMaskOrNone()};
    Value queryTile = packQueryTile(lb, ctx);
    // Keys any row of this tile can see; tiles outside are never visited.
    KeyRange keys = visibleKeys(rewriter, loc, ctx, skv);
    SmallVector<Value> state =
        attendKeyTiles(lb, ctx, queryTile, keys.firstTile, keys.keyEnd,
                       keys.keyEnd, dims.valueDim);

    // out[g, i] = l == 0 ? 0 : acc / l, for the valid rows of each head.
    AffineExpr g, i, e;
    bindDims(rewriter.getContext(), g, i, e);
    AffineExpr row = g * rowsPerHead + i;
    SmallVector<OpFoldResult> outSizes{rewriter.getIndexAttr(group), rows,
                                       rewriter.getIndexAttr(dims.valueDim)};
    Value tile = lb.elementwise(
        {state[2], state[1]},
        {AffineMap::get(3, 0, {row, e}, rewriter.getContext()),
         AffineMap::get(3, 0, {row}, rewriter.getContext())},
        outSizes, elementType,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) -> Value {
          return normalize(nested, nestedLoc, args[0], args[1], elementType);
        });
    // The group's query heads are rows h*G .. h*G+G-1 of the result.
    OpFoldResult one = rewriter.getIndexAttr(1),
                 zero = rewriter.getIndexAttr(0);
    Value firstHead = arith::MulIOp::create(rewriter, loc, h,
                                            indexConstant(rewriter, loc, group));
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, tile, forall.getRegionIterArgs()[0],
        ArrayRef<OpFoldResult>{b, firstHead, q0, zero},
        ArrayRef<OpFoldResult>{one, rewriter.getIndexAttr(group), rows,
                               rewriter.getIndexAttr(dims.valueDim)},
        SmallVector<OpFoldResult>(4, one));
    return forall.getResult(0);
  }

  /// Flash-decoding for a static query that fits one tile: one scf.forall
  /// iteration per (b, kv head h, split s) attends to the s-th run of the
  /// visible key tiles and writes its normalized rows o_s and their
  /// log-sum-exp lse_s = m_s + log(l_s) (-inf for a split that saw no key);
  /// the splits are then merged:
  ///   M = max_s lse_s,  w_s = exp(lse_s - M) (0 where lse_s = -inf),
  ///   out = Σ_s w_s·o_s / Σ_s w_s  (0 where the sum is 0).
  Value tileSplitKeys(LinalgBuilder &lb, AttentionOp op,
                      const AttentionDims &dims, int64_t splits,
                      OpFoldResult batch, Value sq, Value skv,
                      Value offset) const {
    OpBuilder &rewriter = lb.builder();
    Location loc = lb.location();
    MLIRContext *context = rewriter.getContext();
    int64_t group = dims.groupSize();
    int64_t rowsPerHead = dims.querySeq, rows = group * rowsPerHead;
    auto attr = [&](int64_t v) -> OpFoldResult {
      return rewriter.getIndexAttr(v);
    };
    // Per-split results [B, Hkv, splits, G*Sq (, Dv)].
    SmallVector<OpFoldResult> lseSizes{batch, attr(dims.kvHeads),
                                       attr(splits), attr(rows)};
    SmallVector<OpFoldResult> partSizes(lseSizes);
    partSizes.push_back(attr(dims.valueDim));
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, attr(dims.kvHeads), attr(splits)},
        ValueRange{lb.empty(lseSizes, lb.f32()),
                   lb.empty(partSizes, lb.f32())},
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(forall.getBody()->getTerminator());
      SmallVector<Value> ivs(forall.getInductionVars());
      Value b = ivs[0], h = ivs[1], s = ivs[2];
      Value q0 = indexConstant(rewriter, loc, 0);
      TileContext ctx{op, group, rowsPerHead, tileKv, b,
                      h,  q0,    sq,          offset, op.getMaskOrNone()};
      Value queryTile = packQueryTile(lb, ctx);
      // Split s takes tiles [s*n, (s+1)*n) of the visible ones, n =
      // ceil(tiles / splits); a split past the last tile stays empty.
      KeyRange keys = visibleKeys(rewriter, loc, ctx, skv);
      Value tileKeys = indexConstant(rewriter, loc, tileKv);
      Value tiles = arith::CeilDivSIOp::create(
          rewriter, loc,
          arith::SubIOp::create(rewriter, loc, keys.keyEnd, keys.firstTile),
          tileKeys);
      Value splitKeys = arith::MulIOp::create(
          rewriter, loc,
          arith::CeilDivSIOp::create(rewriter, loc, tiles,
                                     indexConstant(rewriter, loc, splits)),
          tileKeys);
      Value splitBegin = arith::AddIOp::create(
          rewriter, loc, keys.firstTile,
          arith::MulIOp::create(rewriter, loc, s, splitKeys));
      Value splitEnd = arith::MinSIOp::create(
          rewriter, loc,
          arith::AddIOp::create(rewriter, loc, splitBegin, splitKeys),
          keys.keyEnd);
      SmallVector<Value> state =
          attendKeyTiles(lb, ctx, queryTile, splitBegin, splitEnd,
                         keys.keyEnd, dims.valueDim);

      AffineMap row1 = lb.map(1, {0}), tile2 = lb.map(2, {0, 1}),
                row2 = lb.map(2, {0});
      Value lse = lb.elementwise(
          {state[0], state[1]}, {row1, row1}, {attr(rows)}, lb.f32(),
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            Value empty = arith::CmpFOp::create(
                nb, nl, arith::CmpFPredicate::OEQ, args[1], f32(nb, nl, 0.0));
            Value sum = arith::AddFOp::create(
                nb, nl, args[0], math::LogOp::create(nb, nl, args[1]));
            return arith::SelectOp::create(nb, nl, empty,
                                           f32(nb, nl, -INFINITY), sum);
          });
      Value part = lb.elementwise(
          {state[2], state[1]}, {tile2, row2},
          {attr(rows), attr(dims.valueDim)}, lb.f32(),
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return normalize(nb, nl, args[0], args[1], nb.getF32Type());
          });

      rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
      OpFoldResult one = attr(1), zero = attr(0);
      Value results[] = {lse, part};
      for (auto [value, shared] :
           llvm::zip(results, forall.getRegionIterArgs())) {
        SmallVector<OpFoldResult> offsets{b, h, s}, sizes{one, one, one};
        for (int64_t size : cast<RankedTensorType>(value.getType()).getShape()) {
          offsets.push_back(zero);
          sizes.push_back(attr(size));
        }
        tensor::ParallelInsertSliceOp::create(
            rewriter, loc, value, shared, offsets, sizes,
            SmallVector<OpFoldResult>(offsets.size(), one));
      }
    }
    Value partLse = forall.getResult(0), partOut = forall.getResult(1);

    // Loops (b, h, m, s) and (b, h, m, e, s): s is the reduction.
    SmallVector<Iter> rowReduction{Iter::parallel, Iter::parallel,
                                   Iter::parallel, Iter::reduction};
    SmallVector<OpFoldResult> mergedRows{batch, attr(dims.kvHeads),
                                         attr(rows)};
    AffineMap splitRow = lb.map(4, {0, 1, 3, 2}),
              mergedRow = lb.map(4, {0, 1, 2});
    Value maxLse = lb.generic(
        {partLse}, {splitRow}, lb.filledF32(mergedRows, -INFINITY), mergedRow,
        rowReduction, [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::MaximumFOp::create(b, l, args[0], args[1]);
        });
    Value weights = lb.elementwise(
        {partLse, maxLse}, {lb.map(4, {0, 1, 2, 3}), lb.map(4, {0, 1, 3})},
        lseSizes, lb.f32(),
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value empty = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OEQ, args[0], f32(b, l, -INFINITY));
          Value w = math::ExpOp::create(
              b, l, arith::SubFOp::create(b, l, args[0], args[1]));
          return arith::SelectOp::create(b, l, empty, f32(b, l, 0.0), w);
        });
    Value sum = lb.generic(
        {weights}, {splitRow}, lb.filledF32(mergedRows, 0.0), mergedRow,
        rowReduction, [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::AddFOp::create(b, l, args[1], args[0]);
        });
    SmallVector<OpFoldResult> mergedSizes(mergedRows);
    mergedSizes.push_back(attr(dims.valueDim));
    SmallVector<Iter> outReduction(4, Iter::parallel);
    outReduction.push_back(Iter::reduction);
    Value weighted = lb.generic(
        {weights, partOut},
        {lb.map(5, {0, 1, 4, 2}), lb.map(5, {0, 1, 4, 2, 3})},
        lb.filledF32(mergedSizes, 0.0), lb.map(5, {0, 1, 2, 3}), outReduction,
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::AddFOp::create(
              b, l, args[2], arith::MulFOp::create(b, l, args[0], args[1]));
        });

    // out[b, h*G + g, i] = weighted / sum at row g*Sq + i of kv head h.
    Type elementType = op.getType().getElementType();
    AffineExpr b, h, g, i, e;
    bindDims(context, b, h, g, i, e);
    AffineExpr row = g * rowsPerHead + i;
    Value grouped = lb.elementwise(
        {weighted, sum},
        {AffineMap::get(5, 0, {b, h, row, e}, context),
         AffineMap::get(5, 0, {b, h, row}, context)},
        {batch, attr(dims.kvHeads), attr(group), attr(rowsPerHead),
         attr(dims.valueDim)},
        elementType,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) -> Value {
          return normalize(nested, nestedLoc, args[0], args[1], elementType);
        });
    return tensor::CollapseShapeOp::create(
        rewriter, loc, grouped,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  }

  int64_t tileQ, tileKv, kvSplits;
};

struct TfmTileAttentionPass
    : tfm::impl::TfmTileAttentionPassBase<TfmTileAttentionPass> {
  using TfmTileAttentionPassBase::TfmTileAttentionPassBase;
  void runOnOperation() override {
    if (tileSizeQ < 1 || tileSizeKv < 1) {
      getOperation()->emitError()
          << "tile sizes must be positive, got tile-size-q="
          << tileSizeQ.getValue() << " tile-size-kv=" << tileSizeKv.getValue();
      return signalPassFailure();
    }
    if (kvSplits < 0) {
      getOperation()->emitError()
          << "kv-splits must be 0 (auto) or positive, got "
          << kvSplits.getValue();
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateTfmTileAttentionPatterns(patterns, tileSizeQ, tileSizeKv,
                                     kvSplits);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::tfm::populateTfmTileAttentionPatterns(RewritePatternSet &patterns,
                                                 int64_t tileSizeQ,
                                                 int64_t tileSizeKv,
                                                 int64_t kvSplits) {
  patterns.add<TileAttention>(patterns.getContext(), tileSizeQ, tileSizeKv,
                              kvSplits);
}
