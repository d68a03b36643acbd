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

/// r = 1 / sqrt(sumSquares / n + eps) per row, f32: a norm's row scale, its
/// own op (computed once per row).
Value rowScale(LinalgBuilder &lb, Value sumSquares, double n, double eps) {
  unsigned rowRank = cast<RankedTensorType>(sumSquares.getType()).getRank();
  return lb.elementwise(
      {sumSquares}, {lb.map(rowRank, iota(rowRank))}, lb.sizesOf(sumSquares),
      lb.f32(), [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value meanSquare = arith::DivFOp::create(
            b, loc, args[0], LinalgBuilder::constantF32(b, loc, n));
        return math::RsqrtOp::create(
            b, loc,
            arith::AddFOp::create(b, loc, meanSquare,
                                  LinalgBuilder::constantF32(b, loc, eps)));
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
    Value scale = rowScale(lb, sumSquares, n, eps);
    Type elementType = op.getType().getElementType();
    Value y = lb.elementwise(
        {x, scale, adaptor.getWeight()},
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

/// mean = sum(x)/n; var = sum((x - mean)^2)/n (two passes for accuracy);
/// y = ((x - mean) · r) · w + b with r = 1/sqrt(var + eps) its own per-row
/// op, the form tfm-fuse-norm-projection folds into a projection that
/// reads y.
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
    Value scale = rowScale(lb, sumSquares, n, op.getEps().convertToDouble());
    unsigned rank = rowRank + 1;
    AffineMap identity = lb.map(rank, iota(rank)),
              perRow = lb.map(rank, iota(rowRank)),
              perStep = lb.map(rank, {rowRank});
    SmallVector<Value> inputs{x, mean, scale, adaptor.getWeight()};
    SmallVector<AffineMap> maps{identity, perRow, perRow, perStep};
    Value bias = adaptor.getBias();
    if (bias) {
      inputs.push_back(bias);
      maps.push_back(perStep);
    }
    Type elementType = op.getType().getElementType();
    Value y = lb.elementwise(
        inputs, maps, lb.sizesOf(x), elementType,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value value = arith::SubFOp::create(
              b, loc, LinalgBuilder::toF32(b, loc, args[0]), args[1]);
          value = arith::MulFOp::create(b, loc, value, args[2]);
          value = arith::MulFOp::create(b, loc, value,
                                        LinalgBuilder::toF32(b, loc, args[3]));
          if (bias)
            value = arith::AddFOp::create(b, loc, value,
                                          LinalgBuilder::toF32(b, loc, args[4]));
          return LinalgBuilder::fromF32(b, loc, value, elementType);
        });
    LinalgBuilder::replaceOp(rewriter, op, y);
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

/// x [B, S, H, D] as [B, H, S, D] (or back: the permutation is its own
/// inverse), a linalg.transpose into a fresh tensor.
Value transposeHeads(LinalgBuilder &lb, Value x, Type elementType) {
  SmallVector<OpFoldResult> sizes = lb.sizesOf(x);
  Value init =
      lb.empty({sizes[0], sizes[2], sizes[1], sizes[3]}, elementType);
  return linalg::TransposeOp::create(lb.builder(), lb.location(), x, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

/// cos and sin of the angle pos · θ^(-2k/D) of every position and pair k
/// (or of Llama 3's scaled frequencies), [B, S, D/2] in f32 for positions
/// [S] or [B, S], sized [batch, length] as the rotated tensor (so that
/// the positions' sizes are checked against it): computed in f64 (positions reach
/// 1e5, where an f32 angle would cost digits) once per position and pair,
/// not again for every head of q and k.
std::pair<Value, Value> ropeTables(LinalgBuilder &lb, RopeOp op,
                                   Value positions, OpFoldResult batch,
                                   OpFoldResult length, int64_t headDim) {
  OpBuilder &b = lb.builder();
  Location loc = lb.location();
  int64_t half = headDim / 2;
  double theta = op.getTheta().convertToDouble();
  auto positionType = cast<RankedTensorType>(positions.getType());
  bool batched = positionType.getRank() == 2;
  // Scaled frequencies (Llama 3) as a table computed here, in f64.
  Value frequencies;
  if (RopeScalingAttr scaling = op.getScalingAttr()) {
    SmallVector<double> table;
    for (int64_t pair = 0; pair < half; ++pair)
      table.push_back(scaling.inverseFrequency(pair, headDim, theta));
    auto tableType = RankedTensorType::get({half}, b.getF64Type());
    frequencies = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(tableType, ArrayRef<double>(table)));
  }
  SmallVector<OpFoldResult> sizes{batch, length, b.getIndexAttr(half)};
  Value cosInit = lb.empty(sizes, lb.f32()), sinInit = lb.empty(sizes, lb.f32());
  AffineMap identity = lb.map(3, {0, 1, 2});
  auto tables = linalg::GenericOp::create(
      b, loc, TypeRange{cosInit.getType(), sinInit.getType()},
      ValueRange{positions}, ValueRange{cosInit, sinInit},
      ArrayRef<AffineMap>{batched ? lb.map(3, {0, 1}) : lb.map(3, {1}),
                          identity, identity},
      SmallVector<Iter>(3, Iter::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Type f64 = nb.getF64Type();
        Value pair = linalg::IndexOp::create(nb, nl, 2);
        Value inverseFrequency;
        if (frequencies) {
          inverseFrequency =
              tensor::ExtractOp::create(nb, nl, frequencies, ValueRange{pair});
        } else {
          // θ^(-2k/D) = exp(k · (-2 ln θ / D))
          Value k = arith::UIToFPOp::create(
              nb, nl, f64,
              arith::IndexCastUIOp::create(nb, nl, nb.getI64Type(), pair));
          Value exponent = arith::ConstantOp::create(
              nb, nl, nb.getF64FloatAttr(-2.0 * std::log(theta) / headDim));
          inverseFrequency = math::ExpOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, k, exponent));
        }
        Value angle = arith::MulFOp::create(
            nb, nl, arith::SIToFPOp::create(nb, nl, f64, args[0]),
            inverseFrequency);
        auto single = [&](Value v) -> Value {
          return arith::TruncFOp::create(nb, nl, nb.getF32Type(), v);
        };
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{single(math::CosOp::create(nb, nl, angle)),
                       single(math::SinOp::create(nb, nl, angle))});
      });
  return {tables.getResult(0), tables.getResult(1)};
}

/// `x` [..., D] with each pair of its last dim rotated: the pair (a, b) of
/// pair k becomes (a·cos - b·sin, b·cos + a·sin), with cos and sin
/// [..., D/2] read at the dims `tableDims` of x and k. Half pairs (k,
/// k + D/2) and interleaved pairs (2k, 2k + 1) are both a view of x with a
/// dim of the two members, [..., 2, D/2] or [..., D/2, 2], and the op reads
/// each member through its slice of that view: no gathers, the members'
/// lanes line up.
Value rotatePairs(LinalgBuilder &lb, Value x, Value cos, Value sin,
                  ArrayRef<unsigned> tableDims, bool interleaved,
                  Type elementType) {
  OpBuilder &b = lb.builder();
  Location loc = lb.location();
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  int64_t half = type.getShape().back() / 2;
  // The pair's dim (size 2) and the pair index's dim of the view.
  unsigned member = interleaved ? rank : rank - 1;
  unsigned pairIndex = interleaved ? rank - 1 : rank;
  SmallVector<int64_t> shape(type.getShape().drop_back());
  SmallVector<OpFoldResult> sizes = lb.sizesOf(x);
  sizes.pop_back();
  SmallVector<ReassociationIndices> reassociation;
  for (unsigned d = 0; d + 1 < rank; ++d)
    reassociation.push_back({d});
  reassociation.push_back({rank - 1, rank});
  std::array<int64_t, 2> memberSizes{2, half};
  if (interleaved)
    std::swap(memberSizes[0], memberSizes[1]);
  for (int64_t size : memberSizes) {
    shape.push_back(size);
    sizes.push_back(b.getIndexAttr(size));
  }
  Value pairs = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), x,
      reassociation, sizes);
  auto memberSlice = [&](int64_t which) -> Value {
    SmallVector<OpFoldResult> offsets(rank + 1, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sliceSizes(sizes);
    offsets[member] = b.getIndexAttr(which);
    sliceSizes[member] = b.getIndexAttr(1);
    return tensor::ExtractSliceOp::create(
        b, loc, pairs, offsets, sliceSizes,
        SmallVector<OpFoldResult>(rank + 1, b.getIndexAttr(1)));
  };
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> memberExprs;
  for (unsigned d = 0; d <= rank; ++d)
    memberExprs.push_back(d == member ? getAffineConstantExpr(0, context)
                                      : getAffineDimExpr(d, context));
  AffineMap memberMap = AffineMap::get(rank + 1, 0, memberExprs, context);
  SmallVector<unsigned> tableLoops(tableDims);
  tableLoops.push_back(pairIndex);
  AffineMap tableMap = lb.map(rank + 1, tableLoops);
  Value rotated = lb.elementwise(
      {memberSlice(0), memberSlice(1), cos, sin},
      {memberMap, memberMap, tableMap, tableMap}, sizes, elementType,
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value isFirst = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::eq,
            linalg::IndexOp::create(nb, nl, member),
            arith::ConstantIndexOp::create(nb, nl, 0));
        Value first = LinalgBuilder::toF32(nb, nl, args[0]);
        Value second = LinalgBuilder::toF32(nb, nl, args[1]);
        auto mul = [&](Value u, Value v) -> Value {
          return arith::MulFOp::create(nb, nl, u, v);
        };
        Value newFirst = arith::SubFOp::create(nb, nl, mul(first, args[2]),
                                               mul(second, args[3]));
        Value newSecond = arith::AddFOp::create(nb, nl, mul(second, args[2]),
                                                mul(first, args[3]));
        return LinalgBuilder::fromF32(
            nb, nl, arith::SelectOp::create(nb, nl, isFirst, newFirst, newSecond),
            elementType);
      });
  return tensor::CollapseShapeOp::create(b, loc, type.clone(elementType),
                                         rotated, reassociation);
}

/// x [B, H, S, D] with its pairs rotated by ropeTables' angles. Where x is
/// split_heads(rows) (q and k from their projections), the rotation runs on
/// the rows before the heads are transposed, as [B·S, H, D]: the layout the
/// projection writes, so that tfm-cpu-tile-projections can rotate each
/// column block as it finishes it.
struct RopeLowering : OpConversionPattern<RopeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RopeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinalgBuilder lb(rewriter, op.getLoc());
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType type = op.getType();
    Type elementType = type.getElementType();
    int64_t heads = type.getDimSize(1), headDim = type.getDimSize(3);
    bool interleaved = op.getStyle() == RopeStyle::interleaved;
    // Nothing to rotate (a static size 0, where a member's slice would not
    // verify).
    if (llvm::is_contained(type.getShape(), 0)) {
      LinalgBuilder::replaceOp(rewriter, op, lb.empty(lb.sizesOf(x), elementType));
      return success();
    }
    auto [cos, sin] = ropeTables(lb, op, adaptor.getPositions(),
                                 lb.sizeOf(x, 0), lb.sizeOf(x, 2), headDim);
    auto split = op.getInput().getDefiningOp<SplitHeadsOp>();
    if (!split) {
      LinalgBuilder::replaceOp(
          rewriter, op,
          rotatePairs(lb, x, cos, sin, {0, 2}, interleaved, elementType));
      return success();
    }
    // rows [B, S, H·D] -> [B·S, H, D], rotated, -> [B, S, H, D] ->
    // transposed [B, H, S, D].
    Value rows = rewriter.getRemappedValue(split.getInput());
    SmallVector<OpFoldResult> rowSizes = lb.sizesOf(rows);
    auto rowType = cast<RankedTensorType>(rows.getType());
    auto collapseRows = [&](Value v) -> Value {
      return tensor::CollapseShapeOp::create(
          rewriter, loc, v, SmallVector<ReassociationIndices>{{0, 1}, {2}});
    };
    Value flat = collapseRows(rows);
    int64_t flatRows = cast<RankedTensorType>(flat.getType()).getDimSize(0);
    OpFoldResult flatSize = lb.sizeOf(flat, 0);
    Value byHead = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({flatRows, heads, headDim},
                              rowType.getElementType()),
        flat, SmallVector<ReassociationIndices>{{0}, {1, 2}},
        SmallVector<OpFoldResult>{flatSize, rewriter.getIndexAttr(heads),
                                  rewriter.getIndexAttr(headDim)});
    Value rotated = rotatePairs(lb, byHead, collapseRows(cos),
                                collapseRows(sin), {0}, interleaved,
                                elementType);
    Value unflat = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({rowType.getDimSize(0), rowType.getDimSize(1),
                               heads, headDim},
                              elementType),
        rotated, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}},
        SmallVector<OpFoldResult>{rowSizes[0], rowSizes[1],
                                  rewriter.getIndexAttr(heads),
                                  rewriter.getIndexAttr(headDim)});
    LinalgBuilder::replaceOp(rewriter, op,
                             transposeHeads(lb, unflat, elementType));
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
    LinalgBuilder::replaceOp(
        rewriter, op, transposeHeads(lb, expanded, type.getElementType()));
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
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, op.getLoc(),
        transposeHeads(lb, x, op.getType().getElementType()),
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
