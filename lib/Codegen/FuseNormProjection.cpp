//===- FuseNormProjection.cpp - norms folded into their projections --------===//
//
// A projection of RMSNorm'd rows, y[m, n] = Σ_k (x[m, k] · r[m] · g[k]) ·
// w[n, k], is r[m] · Σ_k x[m, k] · (g[k] · w[n, k]): the norm's row scale
// moves to the projection's epilogue and its weight into the weights as
// they are read (tfm-cpu-tile-projections packs g · w), so no normalized
// copy of the rows is stored and the statistics are computed once per row
// for every projection of them (q, k and v, gate and up). A LayerNorm'd
// row is normalized as the projection reads it instead (a row transform).
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"
#include "tfm/Codegen/Projection.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFUSENORMPROJECTIONPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

using Iter = utils::IteratorType;

/// The RMSNorm'd rows `n = x · r[rows] · g[last dim]` (convert-tfm-to-linalg's
/// form): (x, r, g), or nullopt.
std::optional<std::array<Value, 3>> matchNormalizedRows(Value n) {
  auto op = n.getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumDpsInputs() != 3 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  unsigned rank = op.getNumLoops();
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> rows;
  for (unsigned d = 0; d + 1 < rank; ++d)
    rows.push_back(getAffineDimExpr(d, context));
  SmallVector<AffineMap> expected{
      AffineMap::getMultiDimIdentityMap(rank, context),
      AffineMap::get(rank, 0, rows, context),
      AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, context), context)};
  if (ArrayRef<AffineMap>(op.getIndexingMapsArray()).take_front(3) !=
          ArrayRef<AffineMap>(expected) ||
      !getElementTypeOrSelf(op.getDpsInputs()[1].getType()).isF32())
    return std::nullopt;
  Block &body = op.getRegion().front();
  Value yielded = cast<linalg::YieldOp>(body.getTerminator()).getValues()[0];
  if (auto narrow = yielded.getDefiningOp<arith::TruncFOp>())
    yielded = narrow.getIn();
  if (!isProductOf(yielded, {body.getArgument(0), body.getArgument(1),
                             body.getArgument(2)}))
    return std::nullopt;
  return std::array<Value, 3>{op.getDpsInputs()[0], op.getDpsInputs()[1],
                              op.getDpsInputs()[2]};
}

/// The [M] view of per-row values over the rows of a collapsed [.., K].
Value collapsedRows(OpBuilder &b, Location loc, Value perRow) {
  auto type = cast<RankedTensorType>(perRow.getType());
  if (type.getRank() == 1)
    return perRow;
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::CollapseShapeOp::create(
      b, loc, perRow, SmallVector<ReassociationIndices>{all});
}

/// The rows a plain projection `op` (rows and weights, nothing else) reads,
/// as the norm's result to match: the rows themselves, or the source of the
/// [M, K] view it reads them through (`view`, which the rewrite applies to
/// the norm's input and per-row values alike); null for any other op.
Value normalizedRowsOf(linalg::GenericOp op, tensor::CollapseShapeOp &view) {
  if (!isProjection(op) || op.getNumDpsInputs() != 2)
    return Value();
  Value rows = op.getDpsInputs()[0];
  view = rows.getDefiningOp<tensor::CollapseShapeOp>();
  return view ? view.getSrc() : rows;
}

/// y = rows(n) · wᵀ with n RMSNorm'd rows ->
/// y = r · (rows(x) · (g ⊙ w)ᵀ): a projection with a column scale, whose
/// product the row scale multiplies (an epilogue).
struct FoldRMSNormIntoProjection : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    tensor::CollapseShapeOp collapse;
    Value rows = normalizedRowsOf(op, collapse);
    std::optional<std::array<Value, 3>> norm =
        rows ? matchNormalizedRows(rows) : std::nullopt;
    if (!norm)
      return failure();
    auto [x, rowScale, columnScale] = *norm;
    Location loc = op.getLoc();
    LinalgBuilder lb(rewriter, loc);
    if (collapse) {
      x = tensor::CollapseShapeOp::create(rewriter, loc, x,
                                          collapse.getReassociationIndices());
      rowScale = collapsedRows(rewriter, loc, rowScale);
    }
    // y[m, n] += x[m, k] · (w[n, k] · g[k]), in f32.
    Value weights = op.getDpsInputs()[1];
    Value product = lb.generic(
        {x, weights, columnScale},
        {lb.map(3, {0, 2}), lb.map(3, {1, 2}), lb.map(3, {2})},
        op.getDpsInits()[0], lb.map(3, {0, 1}),
        {Iter::parallel, Iter::parallel, Iter::reduction},
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value scaled = arith::MulFOp::create(
              b, l, LinalgBuilder::toF32(b, l, args[1]),
              LinalgBuilder::toF32(b, l, args[2]));
          Value term = arith::MulFOp::create(
              b, l, LinalgBuilder::toF32(b, l, args[0]), scaled);
          return arith::AddFOp::create(b, l, args[3], term);
        });
    // · r[m]
    Value scaled = lb.elementwise(
        {product, rowScale}, {lb.map(2, {0, 1}), lb.map(2, {0})},
        lb.sizesOf(product), lb.f32(),
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::MulFOp::create(b, l, args[0], args[1]);
        });
    rewriter.replaceOp(op, scaled);
    return success();
  }
};

/// `v` without the arith.extf that widens it, if any.
Value unwidened(Value v) {
  if (auto widen = v.getDefiningOp<arith::ExtFOp>())
    return widen.getIn();
  return v;
}

/// The LayerNorm'd rows `n = ((x - μ[rows]) · r[rows]) · g[last dim]
/// (+ b[last dim])` (convert-tfm-to-linalg's form): (x, μ, r, g, b or
/// null), or nullopt.
std::optional<std::array<Value, 5>> matchLayerNormRows(Value n) {
  auto op = n.getDefiningOp<linalg::GenericOp>();
  if (!op || (op.getNumDpsInputs() != 4 && op.getNumDpsInputs() != 5) ||
      op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  unsigned rank = op.getNumLoops();
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> rows;
  for (unsigned d = 0; d + 1 < rank; ++d)
    rows.push_back(getAffineDimExpr(d, context));
  AffineMap perRow = AffineMap::get(rank, 0, rows, context);
  AffineMap perStep =
      AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, context), context);
  SmallVector<AffineMap> expected{
      AffineMap::getMultiDimIdentityMap(rank, context), perRow, perRow,
      perStep, perStep};
  bool biased = op.getNumDpsInputs() == 5;
  if (ArrayRef<AffineMap>(op.getIndexingMapsArray())
              .take_front(op.getNumDpsInputs()) !=
          ArrayRef<AffineMap>(expected).take_front(op.getNumDpsInputs()) ||
      !getElementTypeOrSelf(op.getDpsInputs()[1].getType()).isF32() ||
      !getElementTypeOrSelf(op.getDpsInputs()[2].getType()).isF32())
    return std::nullopt;
  Block &body = op.getRegion().front();
  Value value = cast<linalg::YieldOp>(body.getTerminator()).getValues()[0];
  if (auto narrow = value.getDefiningOp<arith::TruncFOp>())
    value = narrow.getIn();
  if (biased) {
    auto add = value.getDefiningOp<arith::AddFOp>();
    if (!add || unwidened(add.getRhs()) != body.getArgument(4))
      return std::nullopt;
    value = add.getLhs();
  }
  auto byWeight = value.getDefiningOp<arith::MulFOp>();
  auto byScale =
      byWeight ? byWeight.getLhs().getDefiningOp<arith::MulFOp>() : nullptr;
  auto centered =
      byScale ? byScale.getLhs().getDefiningOp<arith::SubFOp>() : nullptr;
  if (!centered || unwidened(byWeight.getRhs()) != body.getArgument(3) ||
      byScale.getRhs() != body.getArgument(2) ||
      unwidened(centered.getLhs()) != body.getArgument(0) ||
      centered.getRhs() != body.getArgument(1))
    return std::nullopt;
  SmallVector<Value> inputs = op.getDpsInputs();
  return std::array<Value, 5>{inputs[0], inputs[1], inputs[2], inputs[3],
                              biased ? inputs[4] : Value()};
}

/// y = rows(n) · wᵀ with n LayerNorm'd rows -> y[m, n] += (((x[m, k] -
/// μ[m]) · r[m]) · g[k] + b[k]) · w[n, k]: the projection reads its rows
/// normalized (a row transform, which tfm-cpu-tile-projections applies to
/// each panel of rows as it reads them). Unlike RMSNorm, the mean keeps
/// the normalization in the rows: folding it into the weights would need
/// Σ_k g[k]·w[n, k] and Σ_k b[k]·w[n, k] per call (a second pass over the
/// weights) and cancel digits where the mean is large against the
/// deviation.
struct FoldLayerNormIntoProjection : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    tensor::CollapseShapeOp collapse;
    Value rows = normalizedRowsOf(op, collapse);
    std::optional<std::array<Value, 5>> norm =
        rows ? matchLayerNormRows(rows) : std::nullopt;
    if (!norm)
      return failure();
    auto [x, mean, scale, weight, biasOperand] = *norm;
    Value bias = biasOperand;
    Location loc = op.getLoc();
    LinalgBuilder lb(rewriter, loc);
    if (collapse) {
      x = tensor::CollapseShapeOp::create(rewriter, loc, x,
                                          collapse.getReassociationIndices());
      mean = collapsedRows(rewriter, loc, mean);
      scale = collapsedRows(rewriter, loc, scale);
    }
    SmallVector<Value> inputs{x, op.getDpsInputs()[1], mean, scale, weight};
    SmallVector<AffineMap> maps{lb.map(3, {0, 2}), lb.map(3, {1, 2}),
                                lb.map(3, {0}), lb.map(3, {0}), lb.map(3, {2})};
    if (bias) {
      inputs.push_back(bias);
      maps.push_back(lb.map(3, {2}));
    }
    Value product = lb.generic(
        inputs, maps, op.getDpsInits()[0], lb.map(3, {0, 1}),
        {Iter::parallel, Iter::parallel, Iter::reduction},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          auto f32 = [&](Value v) { return LinalgBuilder::toF32(b, l, v); };
          Value value = arith::SubFOp::create(b, l, f32(args[0]), args[2]);
          value = arith::MulFOp::create(b, l, value, args[3]);
          value = arith::MulFOp::create(b, l, value, f32(args[4]));
          if (bias)
            value = arith::AddFOp::create(b, l, value, f32(args[5]));
          Value term = arith::MulFOp::create(b, l, value, f32(args[1]));
          return arith::AddFOp::create(b, l, args.back(), term);
        });
    rewriter.replaceOp(op, product);
    return success();
  }
};

struct TfmFuseNormProjectionPass
    : tfm::impl::TfmFuseNormProjectionPassBase<TfmFuseNormProjectionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldRMSNormIntoProjection, FoldLayerNormIntoProjection>(
        &getContext());
    // Sizes read off the normalized rows (the projections' output sizes)
    // read off their sources instead, so that unread rows go.
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    tensor::DimOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
