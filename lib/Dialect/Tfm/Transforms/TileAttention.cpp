//===- TileAttention.cpp - FlashAttention-2 style tiling -------------------===//
//
// The loops of tiled attention: (batch, kv head, query tile) work items, or
// (batch, kv head, key split) ones with a log-sum-exp merge for a short
// query; each attends to the key tiles it can see through the
// tfm.online_attention steps of AttentionTiles.h.
//
//===----------------------------------------------------------------------===//

#include "AttentionTiles.h"

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Dialect/Tfm/Transforms/Transforms.h"
#include "tfm/Dialect/Tfm/Utils/AttentionChecks.h"
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
using namespace mlir::tfm::detail;

namespace {

using Iter = utils::IteratorType;

Value f32(OpBuilder &b, Location loc, double value) {
  return LinalgBuilder::constantF32(b, loc, value);
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

struct TileAttention : OpRewritePattern<AttentionOp> {
  TileAttention(MLIRContext *context, const AttentionTilingOptions &options)
      : OpRewritePattern(context), tileQ(options.tileSizeQ),
        tileKv(options.tileSizeKv), kvSplits(options.kvSplits),
        workItems(options.workItems) {}

  /// Splits of the key range; 1 unless the query is static and fits one
  /// tile (decode, short prompts), where (batch, kv head) alone may leave
  /// threads idle.
  int64_t splitsFor(const AttentionDims &dims) const {
    if (ShapedType::isDynamic(dims.querySeq) || dims.querySeq < 1 ||
        dims.querySeq > tileQ)
      return 1;
    if (kvSplits > 0)
      return kvSplits;
    int64_t splits = llvm::divideCeil(workItems, dims.kvHeads);
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
    Value queryTile = gatherQueryTile(lb, ctx);
    // Keys any row of this tile can see; tiles outside are never visited.
    KeyRange keys = visibleKeys(rewriter, loc, ctx, skv);
    SmallVector<Value> state =
        attendKeyTiles(lb, ctx, queryTile, keys.firstTile, keys.firstTile,
                       keys.keyEnd, keys.keyEnd, dims.valueDim);

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
      Value queryTile = gatherQueryTile(lb, ctx);
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
          attendKeyTiles(lb, ctx, queryTile, keys.firstTile, splitBegin,
                         splitEnd, keys.keyEnd, dims.valueDim);

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

  int64_t tileQ, tileKv, kvSplits, workItems;
};

struct TfmTileAttentionPass
    : tfm::impl::TfmTileAttentionPassBase<TfmTileAttentionPass> {
  TfmTileAttentionPass() = default;
  TfmTileAttentionPass(const TfmTileAttentionPass &other)
      : TfmTileAttentionPassBase(other) {}

  explicit TfmTileAttentionPass(const AttentionTilingOptions &options) {
#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)           \
  field = options.field;
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"
  }

  void runOnOperation() override {
    AttentionTilingOptions options;
#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)           \
  options.field = field;
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"
    if (std::string error = options.validate(); !error.empty()) {
      getOperation()->emitError(error);
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateTfmTileAttentionPatterns(patterns, options);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }

#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)           \
  Option<int64_t> field{*this, flag, llvm::cl::desc(description),              \
                        llvm::cl::init(value)};
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"
};

} // namespace

std::string AttentionTilingOptions::validate() const {
  auto message = [](const char *flag, const char *requirement,
                    int64_t value) {
    return std::string(flag) + " must be " + requirement + ", got " +
           std::to_string(value);
  };
  if (tileSizeQ < 1)
    return message("tile-size-q", "positive", tileSizeQ);
  if (tileSizeKv < 1)
    return message("tile-size-kv", "positive", tileSizeKv);
  if (kvSplits < 0)
    return message("kv-splits", "0 (auto) or positive", kvSplits);
  if (workItems < 1)
    return message("work-items", "positive", workItems);
  return "";
}

void mlir::tfm::populateTfmTileAttentionPatterns(
    RewritePatternSet &patterns, const AttentionTilingOptions &options) {
  patterns.add<TileAttention>(patterns.getContext(), options);
}

std::unique_ptr<Pass>
mlir::tfm::createTfmTileAttentionPass(const AttentionTilingOptions &options) {
  return std::make_unique<TfmTileAttentionPass>(options);
}
