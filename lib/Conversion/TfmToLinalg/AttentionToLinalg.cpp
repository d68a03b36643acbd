//===- AttentionToLinalg.cpp - tfm.attention and masks to linalg -----------===//
//
// The reference (untiled) attention lowering: it materializes the
// [B, Hkv, G, Sq, Skv] score tensor and is the baseline the tiled path is
// checked and benchmarked against.
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Utils/AttentionScores.h"
#include "tfm/Dialect/Tfm/Utils/AttentionDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {

using Iter = utils::IteratorType;

/// Query heads are grouped by the key/value head they read:
///   q [B, Hq, Sq, D] -> [B, Hkv, G, Sq, D]
///   s[b,h,g,i,j] = scale * sum_d q[b,h,g,i,d] * k[b,h,j,d]   (+ softcap, bias)
///   s = visible(i, j) ? s : -inf
///   m = max_j s;  p = exp(s - (m == -inf ? 0 : m));  l = sum_j p
///   o[b,h,g,i,e] = sum_j p * v[b,h,j,e];  out = l == 0 ? 0 : o / l
struct AttentionLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LinalgBuilder lb(rewriter, loc);
    Value query = adaptor.getQuery(), key = adaptor.getKey(),
          value = adaptor.getValue();
    AttentionDims dims = AttentionDims::get(
        op.getQuery().getType(), op.getKey().getType(),
        op.getValue().getType());
    int64_t group = dims.groupSize();
    Type elementType = op.getType().getElementType();

    OpFoldResult batch = lb.sizeOf(query, kBatch);
    OpFoldResult querySeq = lb.sizeOf(query, kSeq);
    OpFoldResult kvSeq = lb.sizeOf(key, kSeq);
    OpFoldResult kvHeads = rewriter.getIndexAttr(dims.kvHeads);
    OpFoldResult groupSize = rewriter.getIndexAttr(group);

    auto groupedType = RankedTensorType::get(
        {dims.batch, dims.kvHeads, group, dims.querySeq, dims.headDim},
        op.getQuery().getType().getElementType());
    Value grouped = tensor::ExpandShapeOp::create(
        rewriter, loc, groupedType, query,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
        {batch, kvHeads, groupSize, querySeq,
         rewriter.getIndexAttr(dims.headDim)});

    // Scores: loops (b, h, g, i, j, d).
    SmallVector<OpFoldResult> scoreSizes{batch, kvHeads, groupSize, querySeq,
                                         kvSeq};
    SmallVector<Iter> scoreIters(6, Iter::parallel);
    scoreIters[5] = Iter::reduction;
    Value dots = lb.generic(
        {grouped, key}, {lb.map(6, {0, 1, 2, 3, 5}), lb.map(6, {0, 1, 4, 5})},
        lb.filledF32(scoreSizes, 0.0), lb.map(6, {0, 1, 2, 3, 4}), scoreIters,
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value product =
              arith::MulFOp::create(b, loc, LinalgBuilder::toF32(b, loc, args[0]),
                                    LinalgBuilder::toF32(b, loc, args[1]));
          return arith::AddFOp::create(b, loc, args[2], product);
        });

    Value scores = buildMaskedScores(lb, op, adaptor, dots, scoreSizes,
                                     getValueOrCreateConstantIndexOp(
                                         rewriter, loc, querySeq),
                                     getValueOrCreateConstantIndexOp(
                                         rewriter, loc, kvSeq));

    // Row statistics over j: loops (b, h, g, i, j).
    SmallVector<OpFoldResult> rowSizes(scoreSizes.begin(),
                                       scoreSizes.end() - 1);
    SmallVector<Iter> rowIters(5, Iter::parallel);
    rowIters[4] = Iter::reduction;
    AffineMap scoreMap = lb.map(5, {0, 1, 2, 3, 4});
    AffineMap rowMap = lb.map(5, {0, 1, 2, 3});
    Value rowMax = lb.generic(
        {scores}, {scoreMap}, lb.filledF32(rowSizes, -INFINITY), rowMap,
        rowIters, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return arith::MaximumFOp::create(b, loc, args[0], args[1]);
        });
    Value probs = lb.elementwise(
        {scores, rowMax}, {scoreMap, rowMap}, scoreSizes, lb.f32(),
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          // A fully masked row has max -inf: subtract 0 so exp gives 0.
          Value negInf = LinalgBuilder::constantF32(b, loc, -INFINITY);
          Value isEmpty = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, args[1], negInf);
          Value shift = arith::SelectOp::create(
              b, loc, isEmpty, LinalgBuilder::constantF32(b, loc, 0.0),
              args[1]);
          return math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, args[0], shift));
        });
    Value rowSum = lb.generic(
        {probs}, {scoreMap}, lb.filledF32(rowSizes, 0.0), rowMap, rowIters,
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return arith::AddFOp::create(b, loc, args[1], args[0]);
        });

    // Weighted values: loops (b, h, g, i, e, j).
    SmallVector<OpFoldResult> outSizes{batch, kvHeads, groupSize, querySeq,
                                       rewriter.getIndexAttr(dims.valueDim)};
    Value weighted = lb.generic(
        {probs, value}, {lb.map(6, {0, 1, 2, 3, 5}), lb.map(6, {0, 1, 5, 4})},
        lb.filledF32(outSizes, 0.0), lb.map(6, {0, 1, 2, 3, 4}), scoreIters,
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          // A key of probability 0 adds nothing, whatever its value: a
          // cache's rows past kv_lengths may be unwritten (NaN, and 0·NaN
          // is NaN).
          Value product = arith::MulFOp::create(
              b, loc, args[0], LinalgBuilder::toF32(b, loc, args[1]));
          Value sum = arith::AddFOp::create(b, loc, args[2], product);
          Value unseen = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, args[0],
              LinalgBuilder::constantF32(b, loc, 0.0));
          return arith::SelectOp::create(b, loc, unseen, args[2], sum);
        });
    Value normalized = lb.elementwise(
        {weighted, rowSum}, {lb.map(5, {0, 1, 2, 3, 4}), rowMap}, outSizes,
        elementType,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value zero = LinalgBuilder::constantF32(b, loc, 0.0);
          Value isEmpty = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, args[1], zero);
          Value quotient = arith::DivFOp::create(b, loc, args[0], args[1]);
          Value result = arith::SelectOp::create(b, loc, isEmpty, zero,
                                                 quotient);
          return LinalgBuilder::fromF32(b, loc, result, elementType);
        });
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, loc, normalized,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    LinalgBuilder::replaceOp(rewriter, op, collapsed);
    return success();
  }

private:
  /// scale, softcap, bias and every mask applied to the raw dot products:
  /// loops (b, h, g, i, j); masked scores are -inf.
  Value buildMaskedScores(LinalgBuilder &lb, AttentionOp op,
                          OpAdaptor adaptor, Value dots,
                          ArrayRef<OpFoldResult> sizes, Value querySeq,
                          Value kvSeq) const {
    OpBuilder &builder = lb.builder();
    Location loc = lb.location();
    int64_t group = op.getQuery().getType().getDimSize(kHeads) /
                    op.getKey().getType().getDimSize(kHeads);
    // The [B, Hq, Sq, Skv] index of loop (b, h, g, i, j) is (b, h*G+g, i, j).
    SmallVector<AffineExpr> fullDims{
        builder.getAffineDimExpr(0),
        builder.getAffineDimExpr(1) * group + builder.getAffineDimExpr(2),
        builder.getAffineDimExpr(3), builder.getAffineDimExpr(4)};

    SmallVector<Value> inputs{dots};
    SmallVector<AffineMap> maps{lb.map(5, {0, 1, 2, 3, 4})};
    auto addInput = [&](Value input, AffineMap map) -> int {
      if (!input)
        return -1;
      inputs.push_back(input);
      maps.push_back(map);
      return inputs.size() - 1;
    };
    int biasArg = addInput(adaptor.getBias(),
                           adaptor.getBias()
                               ? lb.broadcastMap(5, fullDims, adaptor.getBias())
                               : AffineMap());
    int maskArg = addInput(
        adaptor.getDenseMask(),
        adaptor.getDenseMask()
            ? lb.broadcastMap(5, fullDims, adaptor.getDenseMask())
            : AffineMap());
    int lengthsArg = addInput(adaptor.getKvLengths(), lb.map(5, {0}));

    MaskAttr mask = op.getMaskOrNone();
    Value offset = arith::SubIOp::create(builder, loc, kvSeq, querySeq);

    return lb.elementwise(
        inputs, maps, sizes, lb.f32(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value score = buildScaledScore(b, loc, op, args[0]);
          if (biasArg >= 0)
            score = arith::AddFOp::create(
                b, loc, score, LinalgBuilder::toF32(b, loc, args[biasArg]));

          Value row = linalg::IndexOp::create(b, loc, 3);
          Value keyIndex = linalg::IndexOp::create(b, loc, 4);
          Value visible = buildIsVisible(b, loc, mask, row, keyIndex, offset);
          if (lengthsArg >= 0) {
            Value length = arith::IndexCastOp::create(
                b, loc, b.getIndexType(), args[lengthsArg]);
            visible = arith::AndIOp::create(
                b, loc, visible,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                      keyIndex, length));
          }
          if (maskArg >= 0)
            visible = arith::AndIOp::create(b, loc, visible, args[maskArg]);
          return arith::SelectOp::create(
              b, loc, visible, score,
              LinalgBuilder::constantF32(b, loc, -INFINITY));
        });
  }
};

/// Sizes of a mask op's result: static dims from the type, dynamic ones
/// from the op's size operands in order.
SmallVector<OpFoldResult> maskSizes(OpBuilder &b, RankedTensorType type,
                                    ValueRange dynamicSizes) {
  SmallVector<OpFoldResult> sizes;
  unsigned next = 0;
  for (int64_t size : type.getShape())
    sizes.push_back(ShapedType::isDynamic(size)
                        ? OpFoldResult(dynamicSizes[next++])
                        : OpFoldResult(b.getIndexAttr(size)));
  return sizes;
}

/// Materializes a structured [Sq, Skv] mask: element (i, j) is visible(i, j).
Value materializeSquareMask(ConversionPatternRewriter &rewriter, Location loc,
                            RankedTensorType type, ValueRange dynamicSizes,
                            MaskAttr mask) {
  LinalgBuilder lb(rewriter, loc);
  SmallVector<OpFoldResult> sizes = maskSizes(rewriter, type, dynamicSizes);
  Value offset = arith::SubIOp::create(
      rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, sizes[1]),
      getValueOrCreateConstantIndexOp(rewriter, loc, sizes[0]));
  return lb.elementwise(
      {}, {}, sizes, rewriter.getI1Type(),
      [&](OpBuilder &b, Location loc, ValueRange) -> Value {
        return buildIsVisible(b, loc, mask, linalg::IndexOp::create(b, loc, 0),
                         linalg::IndexOp::create(b, loc, 1), offset);
      });
}

/// The structured mask a mask op materializes.
MaskAttr structuredMaskOf(CausalMaskOp op) {
  return MaskAttr::getCausal(op.getContext());
}
MaskAttr structuredMaskOf(SlidingWindowMaskOp op) {
  return MaskAttr::getSlidingWindow(op.getContext(),
                                    op.getWindowAttr().getInt());
}

/// causal_mask / sliding_window_mask -> visible(i, j) over [Sq, Skv]
template <typename MaskOpTy>
struct SquareMaskLowering : OpConversionPattern<MaskOpTy> {
  using OpConversionPattern<MaskOpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaskOpTy op, typename MaskOpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder::replaceOp(
        rewriter, op,
        materializeSquareMask(rewriter, op.getLoc(), op.getType(),
                              adaptor.getDynamicSizes(),
                              structuredMaskOf(op)));
    return success();
  }
};

/// mask[b, 0, 0, j] = j < lengths[b]
struct PaddingMaskLowering : OpConversionPattern<PaddingMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PaddingMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value lengths = adaptor.getLengths();
    OpFoldResult keys =
        adaptor.getKvLength()
            ? OpFoldResult(adaptor.getKvLength())
            : OpFoldResult(rewriter.getIndexAttr(op.getType().getDimSize(3)));
    OpFoldResult one = rewriter.getIndexAttr(1);
    Value result = lb.elementwise(
        {lengths}, {lb.map(4, {0})}, {lb.sizeOf(lengths, 0), one, one, keys},
        rewriter.getI1Type(),
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value length =
              arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]);
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       linalg::IndexOp::create(b, loc, 3),
                                       length);
        });
    LinalgBuilder::replaceOp(rewriter, op, result);
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AttentionLowering, SquareMaskLowering<CausalMaskOp>,
               SquareMaskLowering<SlidingWindowMaskOp>, PaddingMaskLowering>(
      patterns.getContext());
}
