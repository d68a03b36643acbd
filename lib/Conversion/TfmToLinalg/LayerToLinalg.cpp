//===- LayerToLinalg.cpp - norms, projections, FFN, RoPE, heads ------------===//
//
// Reference lowerings of the non-attention tfm ops to linalg on tensors. All
// arithmetic is f32 (f16/bf16 inputs are extended), results are rounded to
// the op's element type once.
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {

using Iter = utils::IteratorType;

/// Loop-dim list 0..n-1.
SmallVector<unsigned> iota(unsigned n) {
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i < n; ++i)
    dims.push_back(i);
  return dims;
}

/// Sums f(x) over the last dim of `x` in f32: [..., N] -> [...].
Value reduceLastDim(LinalgBuilder &lb, Value x, Value perRowOperand,
                    function_ref<Value(OpBuilder &, Location, Value, Value)>
                        term) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> sizes = lb.sizesOf(x);
  sizes.pop_back();
  SmallVector<Iter> iterators(rank, Iter::parallel);
  iterators.back() = Iter::reduction;
  SmallVector<unsigned> outer = iota(rank - 1);
  SmallVector<Value> inputs{x};
  SmallVector<AffineMap> maps{lb.map(rank, iota(rank))};
  if (perRowOperand) {
    inputs.push_back(perRowOperand);
    maps.push_back(lb.map(rank, outer));
  }
  return lb.generic(
      inputs, maps, lb.filledF32(sizes, 0.0), lb.map(rank, outer), iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value row = perRowOperand ? args[1] : Value();
        Value value = term(b, loc, LinalgBuilder::toF32(b, loc, args[0]), row);
        return arith::AddFOp::create(b, loc, args.back(), value);
      });
}

/// y = (x - mean) * rsqrt(meanSquare + eps) * w (+ b), with `mean` null for
/// RMSNorm. `sumSquares` is the per-row sum of (x - mean)^2.
Value normalize(LinalgBuilder &lb, Value x, Value mean, Value sumSquares,
                Value weight, Value bias, double eps, Type elementType) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  double n = static_cast<double>(type.getShape().back());
  SmallVector<unsigned> outer = iota(rank - 1);
  SmallVector<Value> inputs{x, sumSquares, weight};
  SmallVector<AffineMap> maps{lb.map(rank, iota(rank)), lb.map(rank, outer),
                              lb.map(rank, {rank - 1})};
  if (mean) {
    inputs.push_back(mean);
    maps.push_back(lb.map(rank, outer));
  }
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(lb.map(rank, {rank - 1}));
  }
  return lb.elementwise(
      inputs, maps, lb.sizesOf(x), elementType,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value value = LinalgBuilder::toF32(b, loc, args[0]);
        unsigned next = 3;
        if (mean)
          value = arith::SubFOp::create(b, loc, value, args[next++]);
        Value variance = arith::DivFOp::create(
            b, loc, args[1], LinalgBuilder::constantF32(b, loc, n));
        Value denominator = math::RsqrtOp::create(
            b, loc,
            arith::AddFOp::create(b, loc, variance,
                                  LinalgBuilder::constantF32(b, loc, eps)));
        value = arith::MulFOp::create(b, loc, value, denominator);
        value = arith::MulFOp::create(b, loc, value,
                                      LinalgBuilder::toF32(b, loc, args[2]));
        if (bias)
          value = arith::AddFOp::create(
              b, loc, value, LinalgBuilder::toF32(b, loc, args[next]));
        return LinalgBuilder::fromF32(b, loc, value, elementType);
      });
}

/// y = x · r · w with r = 1 / sqrt(mean(x^2) + eps) per row: the row scale
/// is its own op, computed once per row, and y a product of three factors,
/// the form tfm-fuse-norm-projection folds into a projection that reads y.
struct RMSNormLowering : OpConversionPattern<RMSNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RMSNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    unsigned rank = type.getRank();
    double n = static_cast<double>(type.getShape().back());
    double eps = op.getEps().convertToDouble();
    Value sumSquares = reduceLastDim(
        lb, x, Value(), [](OpBuilder &b, Location loc, Value v, Value) {
          return arith::MulFOp::create(b, loc, v, v).getResult();
        });
    unsigned rowRank = rank - 1;
    Value rowScale = lb.elementwise(
        {sumSquares}, {lb.map(rowRank, iota(rowRank))}, lb.sizesOf(sumSquares),
        lb.f32(), [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value meanSquare = arith::DivFOp::create(
              b, loc, args[0], LinalgBuilder::constantF32(b, loc, n));
          return math::RsqrtOp::create(
              b, loc,
              arith::AddFOp::create(b, loc, meanSquare,
                                    LinalgBuilder::constantF32(b, loc, eps)));
        });
    Type elementType = op.getType().getElementType();
    Value y = lb.elementwise(
        {x, rowScale, adaptor.getWeight()},
        {lb.map(rank, iota(rank)), lb.map(rank, iota(rowRank)),
         lb.map(rank, {rank - 1})},
        lb.sizesOf(x), elementType,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value scaled = arith::MulFOp::create(
              b, loc, LinalgBuilder::toF32(b, loc, args[0]), args[1]);
          Value value = arith::MulFOp::create(
              b, loc, scaled, LinalgBuilder::toF32(b, loc, args[2]));
          return LinalgBuilder::fromF32(b, loc, value, elementType);
        });
    LinalgBuilder::replaceOp(rewriter, op, y);
    return success();
  }
};

/// mean = sum(x)/n; var = sum((x - mean)^2)/n; y = (x - mean)/sqrt(var + eps)
/// * w + b (two passes for accuracy).
struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value x = adaptor.getInput();
    double n = static_cast<double>(op.getType().getShape().back());
    Value sum = reduceLastDim(lb, x, Value(),
                              [](OpBuilder &, Location, Value v, Value) {
                                return v;
                              });
    auto rowType = cast<RankedTensorType>(sum.getType());
    unsigned rowRank = rowType.getRank();
    Value mean = lb.elementwise(
        {sum}, {lb.map(rowRank, iota(rowRank))}, lb.sizesOf(sum), lb.f32(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return arith::DivFOp::create(b, loc, args[0],
                                       LinalgBuilder::constantF32(b, loc, n));
        });
    Value sumSquares = reduceLastDim(
        lb, x, mean, [](OpBuilder &b, Location loc, Value v, Value m) {
          Value centered = arith::SubFOp::create(b, loc, v, m);
          return arith::MulFOp::create(b, loc, centered, centered).getResult();
        });
    LinalgBuilder::replaceOp(rewriter, op, normalize(lb, x, mean, sumSquares,
                                     adaptor.getWeight(), adaptor.getBias(),
                                     op.getEps().convertToDouble(),
                                     op.getType().getElementType()));
    return success();
  }
};

/// Adds an optional bias to an f32 projection, applies `activation` and
/// rounds to `elementType`: y = round(act(acc + bias)).
Value finishProjection(LinalgBuilder &lb, Value acc, Value bias,
                       Type elementType,
                       function_ref<Value(OpBuilder &, Location, Value)>
                           activation = nullptr) {
  unsigned rank = cast<RankedTensorType>(acc.getType()).getRank();
  SmallVector<Value> inputs{acc};
  SmallVector<AffineMap> maps{lb.map(rank, iota(rank))};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(lb.map(rank, {rank - 1}));
  }
  return lb.elementwise(
      inputs, maps, lb.sizesOf(acc), elementType,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value value = args[0];
        if (bias)
          value = arith::AddFOp::create(b, loc, value,
                                        LinalgBuilder::toF32(b, loc, args[1]));
        if (activation)
          value = activation(b, loc, value);
        return LinalgBuilder::fromF32(b, loc, value, elementType);
      });
}

/// y = x · Wᵀ + b
struct LinearLowering : OpConversionPattern<LinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value acc = lb.projectF32(adaptor.getInput(), adaptor.getWeight());
    LinalgBuilder::replaceOp(rewriter, op, finishProjection(lb, acc, adaptor.getBias(),
                                            op.getType().getElementType()));
    return success();
  }
};

/// silu(x) = x / (1 + exp(-x))
Value silu(OpBuilder &b, Location loc, Value x) {
  Value negExp = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  Value denominator = arith::AddFOp::create(
      b, loc, LinalgBuilder::constantF32(b, loc, 1.0), negExp);
  return arith::DivFOp::create(b, loc, x, denominator);
}

/// gelu(x) = x/2 · (1 + erf(x/√2))
Value gelu(OpBuilder &b, Location loc, Value x) {
  Value scaled = arith::MulFOp::create(
      b, loc, x, LinalgBuilder::constantF32(b, loc, M_SQRT1_2));
  Value onePlusErf =
      arith::AddFOp::create(b, loc, LinalgBuilder::constantF32(b, loc, 1.0),
                            math::ErfOp::create(b, loc, scaled));
  Value half = arith::MulFOp::create(
      b, loc, x, LinalgBuilder::constantF32(b, loc, 0.5));
  return arith::MulFOp::create(b, loc, half, onePlusErf);
}

/// gelu_tanh(x) = x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))
Value geluTanh(OpBuilder &b, Location loc, Value x) {
  auto c = [&](double v) { return LinalgBuilder::constantF32(b, loc, v); };
  Value cube = arith::MulFOp::create(
      b, loc, x, arith::MulFOp::create(b, loc, x, x));
  Value inner = arith::AddFOp::create(
      b, loc, x, arith::MulFOp::create(b, loc, c(0.044715), cube));
  Value t = math::TanhOp::create(
      b, loc, arith::MulFOp::create(b, loc, c(std::sqrt(2.0 / M_PI)), inner));
  Value half = arith::MulFOp::create(b, loc, x, c(0.5));
  return arith::MulFOp::create(b, loc, half,
                               arith::AddFOp::create(b, loc, c(1.0), t));
}

/// relu(x) = max(x, 0)
Value relu(OpBuilder &b, Location loc, Value x) {
  return arith::MaximumFOp::create(b, loc, x,
                                   LinalgBuilder::constantF32(b, loc, 0.0));
}

Value activate(FFNKind kind, OpBuilder &b, Location loc, Value x) {
  switch (kind) {
  case FFNKind::swiglu:
  case FFNKind::silu:
    return silu(b, loc, x);
  case FFNKind::geglu:
  case FFNKind::gelu:
    return gelu(b, loc, x);
  case FFNKind::gelu_tanh:
    return geluTanh(b, loc, x);
  case FFNKind::relu:
    return relu(b, loc, x);
  }
  llvm_unreachable("unknown FFN kind");
}

/// gated: y = down(act(x · gateᵀ) ⊙ (x · upᵀ))
/// plain: y = down(act(x · upᵀ + up_bias)) + down_bias
/// The hidden activation stays f32 between the two projections.
struct FFNLowering : OpConversionPattern<FFNOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FFNOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    FFNKind kind = op.getKind();
    auto activation = [&](OpBuilder &b, Location loc, Value v) {
      return activate(kind, b, loc, v);
    };
    Value up = lb.projectF32(adaptor.getInput(), adaptor.getUpWeight());
    Value hidden;
    if (isGatedFFN(kind)) {
      Value gate = lb.projectF32(adaptor.getInput(), adaptor.getGateWeight());
      unsigned rank = cast<RankedTensorType>(up.getType()).getRank();
      AffineMap identity = lb.map(rank, iota(rank));
      hidden = lb.elementwise(
          {gate, up}, {identity, identity}, lb.sizesOf(up), lb.f32(),
          [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
            return arith::MulFOp::create(b, loc, activation(b, loc, args[0]),
                                         args[1]);
          });
    } else {
      hidden = finishProjection(lb, up, adaptor.getUpBias(), lb.f32(),
                                activation);
    }
    Value down = lb.projectF32(hidden, adaptor.getDownWeight());
    LinalgBuilder::replaceOp(rewriter, op, finishProjection(lb, down, adaptor.getDownBias(),
                                            op.getType().getElementType()));
    return success();
  }
};

/// y[d] = x[d]·cos(pos·θ^(-2k/D)) + sign(d)·x[partner(d)]·sin(...), where
/// half pairs (k, k + D/2) and interleaved pairs (2k, 2k + 1). Angles are
/// computed in f64: positions reach 1e5 and an f32 angle would cost digits.
struct RopeLowering : OpConversionPattern<RopeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RopeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value x = adaptor.getInput(), positions = adaptor.getPositions();
    RankedTensorType type = op.getType();
    int64_t headDim = type.getDimSize(3), half = headDim / 2;
    bool interleaved = op.getStyle() == RopeStyle::interleaved;
    double logTheta = std::log(op.getTheta().convertToDouble());
    bool batched =
        cast<RankedTensorType>(positions.getType()).getRank() == 2;
    AffineMap positionMap =
        batched ? lb.map(4, {0, 2}) : lb.map(4, {2});
    // Scaled frequencies (Llama 3) as a table computed here, in f64.
    Value frequencies;
    if (RopeScalingAttr scaling = op.getScalingAttr()) {
      double theta = op.getTheta().convertToDouble();
      SmallVector<double> table;
      for (int64_t pair = 0; pair < half; ++pair)
        table.push_back(scaling.inverseFrequency(pair, headDim, theta));
      auto tableType = RankedTensorType::get({half}, rewriter.getF64Type());
      frequencies = arith::ConstantOp::create(
          rewriter, op.getLoc(),
          DenseElementsAttr::get(tableType, ArrayRef<double>(table)));
    }

    Value result = lb.elementwise(
        {x, positions}, {lb.map(4, {0, 1, 2, 3}), positionMap},
        lb.sizesOf(x), type.getElementType(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          auto index = [&](int64_t v) {
            return arith::ConstantIndexOp::create(b, loc, v).getResult();
          };
          Value bIdx = linalg::IndexOp::create(b, loc, 0);
          Value hIdx = linalg::IndexOp::create(b, loc, 1);
          Value sIdx = linalg::IndexOp::create(b, loc, 2);
          Value dIdx = linalg::IndexOp::create(b, loc, 3);
          // Pair index k, partner feature and the sign of the sin term.
          Value pair, partner, isFirst;
          if (interleaved) {
            pair = arith::DivUIOp::create(b, loc, dIdx, index(2));
            Value parity = arith::RemUIOp::create(b, loc, dIdx, index(2));
            isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            parity, index(0));
            partner = arith::SelectOp::create(
                b, loc, isFirst, arith::AddIOp::create(b, loc, dIdx, index(1)),
                arith::SubIOp::create(b, loc, dIdx, index(1)));
          } else {
            isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            dIdx, index(half));
            pair = arith::SelectOp::create(
                b, loc, isFirst, dIdx,
                arith::SubIOp::create(b, loc, dIdx, index(half)));
            partner = arith::SelectOp::create(
                b, loc, isFirst,
                arith::AddIOp::create(b, loc, dIdx, index(half)),
                arith::SubIOp::create(b, loc, dIdx, index(half)));
          }
          Type f64 = b.getF64Type();
          auto f64c = [&](double v) {
            return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v))
                .getResult();
          };
          // angle = pos * exp(-2k/D * ln θ)
          Value k = arith::UIToFPOp::create(
              b, loc, f64,
              arith::IndexCastUIOp::create(b, loc, b.getI64Type(), pair));
          Value invFreq =
              frequencies
                  ? tensor::ExtractOp::create(b, loc, frequencies,
                                              ValueRange{pair})
                        .getResult()
                  : math::ExpOp::create(
                        b, loc,
                        arith::MulFOp::create(b, loc, k,
                                              f64c(-2.0 * logTheta / headDim)))
                        .getResult();
          Value pos = arith::SIToFPOp::create(b, loc, f64, args[1]);
          Value angle = arith::MulFOp::create(b, loc, pos, invFreq);
          Value cos = math::CosOp::create(b, loc, angle);
          Value sin = math::SinOp::create(b, loc, angle);
          Value sign = arith::SelectOp::create(b, loc, isFirst, f64c(-1.0),
                                               f64c(1.0));
          Value other = tensor::ExtractOp::create(
              b, loc, x, ValueRange{bIdx, hIdx, sIdx, partner});
          auto widen = [&](Value v) {
            return arith::ExtFOp::create(b, loc, f64, v).getResult();
          };
          Value rotated = arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, widen(args[0]), cos),
              arith::MulFOp::create(
                  b, loc, sign,
                  arith::MulFOp::create(b, loc, widen(other), sin)));
          // Through f32: f64 -> bf16 has no lowering without compiler-rt.
          Value single = arith::TruncFOp::create(b, loc, b.getF32Type(),
                                                 rotated);
          return LinalgBuilder::fromF32(b, loc, single,
                                        type.getElementType());
        });
    LinalgBuilder::replaceOp(rewriter, op, result);
    return success();
  }
};

/// [B, S, H·D] -> expand [B, S, H, D] -> transpose [B, H, S, D]
struct SplitHeadsLowering : OpConversionPattern<SplitHeadsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitHeadsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value x = adaptor.getInput();
    RankedTensorType type = op.getType();
    int64_t heads = type.getDimSize(1), headDim = type.getDimSize(3);
    SmallVector<OpFoldResult> sizes = lb.sizesOf(x);
    SmallVector<OpFoldResult> expandedSizes{sizes[0], sizes[1],
                                            rewriter.getIndexAttr(heads),
                                            rewriter.getIndexAttr(headDim)};
    auto inputType = cast<RankedTensorType>(x.getType());
    auto expandedType = RankedTensorType::get(
        {inputType.getDimSize(0), inputType.getDimSize(1), heads, headDim},
        type.getElementType());
    Value expanded = tensor::ExpandShapeOp::create(
        rewriter, op.getLoc(), expandedType, x,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}, expandedSizes);
    Value init = lb.empty({sizes[0], expandedSizes[2], sizes[1],
                           expandedSizes[3]},
                          type.getElementType());
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), expanded, init, ArrayRef<int64_t>{0, 2, 1, 3});
    LinalgBuilder::replaceOp(rewriter, op, transpose.getResult()[0]);
    return success();
  }
};

/// [B, H, S, D] -> transpose [B, S, H, D] -> collapse [B, S, H·D]
struct MergeHeadsLowering : OpConversionPattern<MergeHeadsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MergeHeadsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value x = adaptor.getInput();
    SmallVector<OpFoldResult> sizes = lb.sizesOf(x);
    Value init = lb.empty({sizes[0], sizes[2], sizes[1], sizes[3]},
                          op.getType().getElementType());
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), x, init, ArrayRef<int64_t>{0, 2, 1, 3});
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, op.getLoc(), transpose.getResult()[0],
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    LinalgBuilder::replaceOp(rewriter, op, collapsed);
    return success();
  }
};

/// y[b, s, :] = table[ids[b, s], :]. Ids are range-checked at the entry
/// point (docs/DESIGN.md, entry-point ABI) before this code runs.
struct EmbeddingLowering : OpConversionPattern<EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Value ids = adaptor.getIds(), table = adaptor.getTable();
    SmallVector<OpFoldResult> sizes = lb.sizesOf(ids);
    sizes.push_back(lb.sizeOf(table, 1));
    Value result = lb.elementwise(
        {ids}, {lb.map(3, {0, 1})}, sizes, op.getType().getElementType(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value row =
              arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]);
          Value column = linalg::IndexOp::create(b, loc, 2);
          return tensor::ExtractOp::create(b, loc, table,
                                           ValueRange{row, column});
        });
    LinalgBuilder::replaceOp(rewriter, op, result);
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmLayerToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RMSNormLowering, LayerNormLowering, LinearLowering, FFNLowering,
               RopeLowering, SplitHeadsLowering, MergeHeadsLowering,
               EmbeddingLowering>(patterns.getContext());
}
