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
struct TileContext {
  AttentionOp op;
  int64_t group;
  Value batch, kvHead;    // b, h
  Value queryBegin, rows; // q0, tq
  Value offset;           // Skv - Sq
  MaskAttr mask;
};

/// f32 constant `value` in a body.
Value f32(OpBuilder &b, Location loc, double value) {
  return LinalgBuilder::constantF32(b, loc, value);
}

/// The element of a dense mask or bias at score (b, h*G + g, q0 + i, k0 + j),
/// with NumPy broadcasting (a static 1 reads index 0).
Value readBroadcast(OpBuilder &b, Location loc, Value tensor,
                    ArrayRef<Value> scoreIndex) {
  auto type = cast<RankedTensorType>(tensor.getType());
  size_t skip = scoreIndex.size() - type.getRank();
  SmallVector<Value> indices;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    indices.push_back(size == 1 ? arith::ConstantIndexOp::create(b, loc, 0)
                                : scoreIndex[skip + i]);
  return tensor::ExtractOp::create(b, loc, tensor, indices);
}

/// scale, softcap and bias on a [G, tq, tk] tile of raw dot products; with
/// `applyMask`, also the structured and dense masks (-inf where masked).
Value scoreTile(LinalgBuilder &lb, const TileContext &ctx, Value dots,
                Value keyBegin, bool applyMask) {
  AttentionOp op = ctx.op;
  Value bias = op.getBias(), dense = op.getDenseMask();
  AffineMap identity = lb.map(3, {0, 1, 2});
  return lb.elementwise(
      {dots}, {identity}, lb.sizesOf(dots), lb.f32(),
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value score = buildScaledScore(b, loc, op, args[0]);
        if (!bias && !applyMask)
          return score;
        Value g = linalg::IndexOp::create(b, loc, 0);
        Value row = arith::AddIOp::create(
            b, loc, ctx.queryBegin, linalg::IndexOp::create(b, loc, 1));
        Value key = arith::AddIOp::create(b, loc, keyBegin,
                                          linalg::IndexOp::create(b, loc, 2));
        Value head = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(
                b, loc, ctx.kvHead,
                arith::ConstantIndexOp::create(b, loc, ctx.group)),
            g);
        SmallVector<Value> scoreIndex{ctx.batch, head, row, key};
        if (bias)
          score = arith::AddFOp::create(
              b, loc, score,
              LinalgBuilder::toF32(b, loc,
                                   readBroadcast(b, loc, bias, scoreIndex)));
        if (!applyMask)
          return score;
        Value visible = buildIsVisible(b, loc, ctx.mask, row, key, ctx.offset);
        if (dense)
          visible = arith::AndIOp::create(
              b, loc, visible, readBroadcast(b, loc, dense, scoreIndex));
        return arith::SelectOp::create(b, loc, visible, score,
                                       f32(b, loc, -INFINITY));
      });
}

/// One step of the online softmax over a key tile [k0, k0 + tk).
///   m' = max(m, rowmax(s)); p = exp(s - m'); α = exp(m - m')
///   l' = α·l + rowsum(p);   acc' = α·acc + p · V
/// (-inf maxima, i.e. rows that have seen no key, give p = 0 and α = 0.)
SmallVector<Value> onlineSoftmaxStep(LinalgBuilder &lb, const TileContext &ctx,
                                     Value queryTile, Value keyBegin,
                                     Value keys, ValueRange state,
                                     Value keyTile, Value valueTile) {
  OpBuilder &builder = lb.builder();
  Location loc = lb.location();
  AttentionOp op = ctx.op;
  Value m = state[0], l = state[1], acc = state[2];
  SmallVector<OpFoldResult> scoreSizes = lb.sizesOf(queryTile);
  scoreSizes.back() = keys;
  SmallVector<OpFoldResult> rowSizes(scoreSizes.begin(),
                                     scoreSizes.end() - 1);

  // Raw dot products, loops (g, i, j, d): one K tile serves all G heads.
  SmallVector<Iter> dotIters{Iter::parallel, Iter::parallel, Iter::parallel,
                             Iter::reduction};
  Value dots = lb.generic(
      {queryTile, keyTile}, {lb.map(4, {0, 1, 3}), lb.map(4, {2, 3})},
      lb.filledF32(scoreSizes, 0.0), lb.map(4, {0, 1, 2}), dotIters,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value product = arith::MulFOp::create(
            b, loc, LinalgBuilder::toF32(b, loc, args[0]),
            LinalgBuilder::toF32(b, loc, args[1]));
        return arith::AddFOp::create(b, loc, args[2], product);
      });

  // Only tiles the mask band cuts pay for the element mask.
  Value scores;
  bool masked = !ctx.mask.isNone() || op.getDenseMask();
  if (!masked) {
    scores = scoreTile(lb, ctx, dots, keyBegin, /*applyMask=*/false);
  } else {
    Value lastRow = arith::SubIOp::create(
        builder, loc, arith::AddIOp::create(builder, loc, ctx.queryBegin,
                                            ctx.rows),
        arith::ConstantIndexOp::create(builder, loc, 1));
    Value keyEnd = arith::AddIOp::create(
        builder, loc, keyBegin,
        getValueOrCreateConstantIndexOp(builder, loc, keys));
    Value full = op.getDenseMask()
                     ? arith::ConstantIntOp::create(builder, loc, 0, 1)
                           .getResult()
                     : buildIsTileFullyVisible(builder, loc, ctx.mask,
                                               ctx.queryBegin, lastRow,
                                               keyBegin, keyEnd, ctx.offset);
    auto branch = scf::IfOp::create(
        builder, loc, full,
        [&](OpBuilder &b, Location l) {
          LinalgBuilder inner(b, l);
          scf::YieldOp::create(
              b, l, scoreTile(inner, ctx, dots, keyBegin, false));
        },
        [&](OpBuilder &b, Location l) {
          LinalgBuilder inner(b, l);
          scf::YieldOp::create(
              b, l, scoreTile(inner, ctx, dots, keyBegin, true));
        });
    scores = branch.getResult(0);
  }

  // The running state is updated in place (each result reuses its loop
  // argument's buffer), so bufferization keeps one m, l and acc per tile.
  AffineMap tile3 = lb.map(3, {0, 1, 2}), row3 = lb.map(3, {0, 1});
  AffineMap row2 = lb.map(2, {0, 1});
  SmallVector<Iter> rowIters{Iter::parallel, Iter::parallel, Iter::reduction};
  SmallVector<Iter> rowParallel{Iter::parallel, Iter::parallel};
  SmallVector<Iter> tileParallel(3, Iter::parallel);
  // rowmax(s)
  Value rowMax = lb.generic(
      {scores}, {tile3}, lb.filledF32(rowSizes, -INFINITY), row3, rowIters,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::MaximumFOp::create(b, loc, args[0], args[1]);
      });
  // α = exp(m - max(m, rowmax)), 0 where m = -inf (then l = acc = 0)
  Value alpha = lb.elementwise(
      {m, rowMax}, {row2, row2}, rowSizes, lb.f32(),
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
      {rowMax}, {row2}, m, row2, rowParallel,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::MaximumFOp::create(b, loc, args[0], args[1]);
      });
  // p = exp(s - m'), 0 where m' = -inf
  Value probs = lb.elementwise(
      {scores, newMax}, {tile3, row3}, scoreSizes, lb.f32(),
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
      {probs}, {tile3}, scaleInPlace(l, row2, row2, rowParallel), row3,
      rowIters, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::AddFOp::create(b, loc, args[1], args[0]);
      });
  // acc' = α·acc + p · V, loops (g, i, e, j)
  SmallVector<Iter> pvIters{Iter::parallel, Iter::parallel, Iter::parallel,
                            Iter::reduction};
  Value newAcc = lb.generic(
      {probs, valueTile}, {lb.map(4, {0, 1, 3}), lb.map(4, {3, 2})},
      scaleInPlace(acc, tile3, row3, tileParallel), lb.map(4, {0, 1, 2}),
      pvIters, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value product = arith::MulFOp::create(
            b, loc, args[0], LinalgBuilder::toF32(b, loc, args[1]));
        return arith::AddFOp::create(b, loc, args[2], product);
      });
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

struct TileAttention : OpRewritePattern<AttentionOp> {
  TileAttention(MLIRContext *context, int64_t tileQ, int64_t tileKv)
      : OpRewritePattern(context), tileQ(tileQ), tileKv(tileKv) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LinalgBuilder lb(rewriter, loc);
    AttentionDims dims = AttentionDims::get(
        op.getQuery().getType(), op.getKey().getType(),
        op.getValue().getType());
    int64_t group = dims.groupSize();
    Type elementType = op.getType().getElementType();
    assertSameDims(rewriter, loc, op);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };

    // Query heads grouped under their key/value head: [B, Hkv, G, Sq, D].
    OpFoldResult batch = lb.sizeOf(op.getQuery(), kBatch);
    OpFoldResult querySeq = lb.sizeOf(op.getQuery(), kSeq);
    OpFoldResult kvSeq = lb.sizeOf(op.getKey(), kSeq);
    auto groupedType = RankedTensorType::get(
        {dims.batch, dims.kvHeads, group, dims.querySeq, dims.headDim},
        op.getQuery().getType().getElementType());
    Value grouped = tensor::ExpandShapeOp::create(
        rewriter, loc, groupedType, op.getQuery(),
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
        {batch, rewriter.getIndexAttr(dims.kvHeads),
         rewriter.getIndexAttr(group), querySeq,
         rewriter.getIndexAttr(dims.headDim)});
    Value out = lb.empty({batch, rewriter.getIndexAttr(dims.queryHeads),
                          querySeq, rewriter.getIndexAttr(dims.valueDim)},
                         elementType);

    Value sq = getValueOrCreateConstantIndexOp(rewriter, loc, querySeq);
    Value skv = getValueOrCreateConstantIndexOp(rewriter, loc, kvSeq);
    Value offset = arith::SubIOp::create(rewriter, loc, skv, sq);
    Value queryTiles = arith::CeilDivSIOp::create(rewriter, loc, sq,
                                                  index(tileQ));
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(dims.kvHeads),
                               queryTiles},
        ValueRange{out}, std::nullopt);

    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(forall.getBody()->getTerminator());
    SmallVector<Value> ivs(forall.getInductionVars());
    Value b = ivs[0], h = ivs[1], t = ivs[2];
    Value q0 = arith::MulIOp::create(rewriter, loc, t, index(tileQ));
    Value rows = arith::MinSIOp::create(
        rewriter, loc, index(tileQ),
        arith::SubIOp::create(rewriter, loc, sq, q0));
    TileContext ctx{op, group, b, h, q0, rows, offset, op.getMaskOrNone()};

    OpFoldResult one = rewriter.getIndexAttr(1),
                 zero = rewriter.getIndexAttr(0);
    auto queryTileType = RankedTensorType::get(
        {group, ShapedType::kDynamic, dims.headDim},
        groupedType.getElementType());
    Value queryTile = tensor::ExtractSliceOp::create(
        rewriter, loc, queryTileType, grouped,
        ArrayRef<OpFoldResult>{b, h, zero, q0, zero},
        ArrayRef<OpFoldResult>{one, one, rewriter.getIndexAttr(group), rows,
                               rewriter.getIndexAttr(dims.headDim)},
        SmallVector<OpFoldResult>(5, one));

    // Keys any row of this tile can see; tiles outside are never visited.
    Value kvLength = skv;
    if (Value lengths = op.getKvLengths()) {
      Value length = arith::IndexCastOp::create(
          rewriter, loc, rewriter.getIndexType(),
          tensor::ExtractOp::create(rewriter, loc, lengths, ValueRange{b}));
      kvLength = arith::MinSIOp::create(
          rewriter, loc,
          arith::MaxSIOp::create(rewriter, loc, length, index(0)), skv);
    }
    Value lastRow = arith::SubIOp::create(
        rewriter, loc, arith::AddIOp::create(rewriter, loc, q0, rows),
        index(1));
    Value keyBegin, keyEnd;
    std::tie(keyBegin, keyEnd) = buildVisibleKeyRange(
        rewriter, loc, ctx.mask, q0, lastRow, offset, kvLength);
    Value firstTile = arith::MulIOp::create(
        rewriter, loc,
        arith::DivSIOp::create(rewriter, loc, keyBegin, index(tileKv)),
        index(tileKv));

    SmallVector<OpFoldResult> rowSizes{rewriter.getIndexAttr(group), rows};
    SmallVector<OpFoldResult> accSizes{rewriter.getIndexAttr(group), rows,
                                       rewriter.getIndexAttr(dims.valueDim)};
    SmallVector<Value> init{lb.filledF32(rowSizes, -INFINITY),
                            lb.filledF32(rowSizes, 0.0),
                            lb.filledF32(accSizes, 0.0)};
    auto loop = scf::ForOp::create(
        rewriter, loc, firstTile, keyEnd, index(tileKv), init,
        [&](OpBuilder &nested, Location nestedLoc, Value k0,
            ValueRange state) {
          LinalgBuilder inner(nested, nestedLoc);
          Value keys = arith::MinSIOp::create(
              nested, nestedLoc, index(tileKv),
              arith::SubIOp::create(nested, nestedLoc, keyEnd, k0));
          auto slice = [&](Value source, int64_t width) -> Value {
            auto type = RankedTensorType::get(
                {ShapedType::kDynamic, width},
                cast<RankedTensorType>(source.getType()).getElementType());
            return tensor::ExtractSliceOp::create(
                nested, nestedLoc, type, source,
                ArrayRef<OpFoldResult>{b, h, k0, zero},
                ArrayRef<OpFoldResult>{one, one, keys,
                                       nested.getIndexAttr(width)},
                SmallVector<OpFoldResult>(4, one));
          };
          SmallVector<Value> next = onlineSoftmaxStep(
              inner, ctx, queryTile, k0, keys, state,
              slice(op.getKey(), dims.headDim),
              slice(op.getValue(), dims.valueDim));
          scf::YieldOp::create(nested, nestedLoc, next);
        });

    // out = l == 0 ? 0 : acc / l
    Value sum = loop.getResult(1), acc = loop.getResult(2);
    Value tile = lb.elementwise(
        {acc, sum}, {lb.map(3, {0, 1, 2}), lb.map(3, {0, 1})}, accSizes,
        elementType,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) -> Value {
          Value zeroF = f32(nested, nestedLoc, 0.0);
          Value empty = arith::CmpFOp::create(
              nested, nestedLoc, arith::CmpFPredicate::OEQ, args[1], zeroF);
          Value quotient =
              arith::DivFOp::create(nested, nestedLoc, args[0], args[1]);
          return LinalgBuilder::fromF32(
              nested, nestedLoc,
              arith::SelectOp::create(nested, nestedLoc, empty, zeroF,
                                      quotient),
              elementType);
        });
    // The group's query heads are rows h*G .. h*G+G-1 of the result.
    Value firstHead = arith::MulIOp::create(rewriter, loc, h, index(group));
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, tile, forall.getRegionIterArgs()[0],
        ArrayRef<OpFoldResult>{b, firstHead, q0, zero},
        ArrayRef<OpFoldResult>{one, rewriter.getIndexAttr(group), rows,
                               rewriter.getIndexAttr(dims.valueDim)},
        SmallVector<OpFoldResult>(4, one));
    LinalgBuilder::replaceOp(rewriter, op, forall.getResult(0));
    return success();
  }

  int64_t tileQ, tileKv;
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
    RewritePatternSet patterns(&getContext());
    populateTfmTileAttentionPatterns(patterns, tileSizeQ, tileSizeKv);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::tfm::populateTfmTileAttentionPatterns(RewritePatternSet &patterns,
                                                 int64_t tileSizeQ,
                                                 int64_t tileSizeKv) {
  patterns.add<TileAttention>(patterns.getContext(), tileSizeQ, tileSizeKv);
}
