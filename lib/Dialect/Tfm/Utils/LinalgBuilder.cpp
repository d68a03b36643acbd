//===- LinalgBuilder.cpp - helpers to build linalg on tensors --------------===//

#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfm;

SmallVector<OpFoldResult> LinalgBuilder::sizesOf(Value value) {
  return tensor::getMixedSizes(b, loc, value);
}

OpFoldResult LinalgBuilder::sizeOf(Value value, int64_t dim) {
  return tensor::getMixedSize(b, loc, value, dim);
}

Value LinalgBuilder::empty(ArrayRef<OpFoldResult> sizes, Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value LinalgBuilder::filledF32(ArrayRef<OpFoldResult> sizes, double value) {
  Value init = empty(sizes, f32());
  Value scalar = constantF32(b, loc, value);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{init})
      .getResult(0);
}

Value LinalgBuilder::generic(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                             Value init, AffineMap initMap,
                             ArrayRef<utils::IteratorType> iterators,
                             ScalarBody body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(initMap);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc,
                                ValueRange{body(nested, nestedLoc, args)});
      });
  return op.getResult(0);
}

Value LinalgBuilder::elementwise(ValueRange inputs,
                                 ArrayRef<AffineMap> inputMaps,
                                 ArrayRef<OpFoldResult> sizes,
                                 Type elementType, ScalarBody body) {
  unsigned rank = sizes.size();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return generic(inputs, inputMaps, empty(sizes, elementType),
                 b.getMultiDimIdentityMap(rank), iterators, body);
}

Value LinalgBuilder::tileF32(Value tile, bool transpose) {
  auto type = cast<RankedTensorType>(tile.getType());
  if (type.getElementType().isF32() && !transpose)
    return tile;
  SmallVector<OpFoldResult> sizes = sizesOf(tile);
  if (transpose)
    std::swap(sizes[0], sizes[1]);
  return generic({tile}, {transpose ? map(2, {1, 0}) : map(2, {0, 1})},
                 empty(sizes, f32()), map(2, {0, 1}),
                 {utils::IteratorType::parallel, utils::IteratorType::parallel},
                 [](OpBuilder &nb, Location nl, ValueRange args) {
                   return toF32(nb, nl, args[0]);
                 });
}

Value LinalgBuilder::projectF32(Value x, Value w) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t rank = xType.getRank();
  // Leading dims flattened into one row dim M: y[m, n] = sum_k x[m, k] *
  // w[n, k], the one form the targets block (the collapse is a view).
  Value rows = x;
  if (rank > 2) {
    SmallVector<ReassociationIndices> leading(1);
    for (int64_t i = 0; i < rank - 1; ++i)
      leading[0].push_back(i);
    leading.push_back({rank - 1});
    rows = tensor::CollapseShapeOp::create(b, loc, x, leading);
  }
  if (rank == 1)
    rows = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1, xType.getDimSize(0)},
                                      xType.getElementType()),
        x, SmallVector<ReassociationIndices>{{0, 1}});
  SmallVector<OpFoldResult> sizes{sizeOf(rows, 0), sizeOf(w, 0)};
  Value product = generic(
      {rows, w}, {map(3, {0, 2}), map(3, {1, 2})}, filledF32(sizes, 0.0),
      map(3, {0, 1}),
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction},
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value product = arith::MulFOp::create(
            b, loc, toF32(b, loc, args[0]), toF32(b, loc, args[1]));
        return arith::AddFOp::create(b, loc, args[2], product);
      });
  if (rank == 2)
    return product;
  if (rank == 1)
    return tensor::CollapseShapeOp::create(
        b, loc, product, SmallVector<ReassociationIndices>{{0, 1}});
  // Back to the leading dims of x.
  SmallVector<OpFoldResult> outSizes = sizesOf(x);
  outSizes.back() = sizeOf(w, 0);
  SmallVector<int64_t> outShape(xType.getShape());
  outShape.back() = cast<RankedTensorType>(w.getType()).getDimSize(0);
  SmallVector<ReassociationIndices> reassociation(1);
  for (int64_t i = 0; i < rank - 1; ++i)
    reassociation[0].push_back(i);
  reassociation.push_back({rank - 1});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(outShape, b.getF32Type()), product,
      reassociation, outSizes);
}

AffineMap LinalgBuilder::map(unsigned numLoops, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned dim : dims)
    exprs.push_back(b.getAffineDimExpr(dim));
  return AffineMap::get(numLoops, 0, exprs, b.getContext());
}

AffineMap LinalgBuilder::broadcastMap(unsigned numLoops,
                                      ArrayRef<AffineExpr> loopDims,
                                      Value value) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(value.getType()).getShape();
  size_t offset = loopDims.size() - shape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, size] : llvm::enumerate(shape))
    exprs.push_back(size == 1 ? b.getAffineConstantExpr(0)
                              : loopDims[offset + i]);
  return AffineMap::get(numLoops, 0, exprs, b.getContext());
}

Value LinalgBuilder::toF32(OpBuilder &b, Location loc, Value scalar) {
  if (scalar.getType().isF32())
    return scalar;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), scalar);
}

Value LinalgBuilder::fromF32(OpBuilder &b, Location loc, Value scalar,
                             Type type) {
  if (type.isF32())
    return scalar;
  return arith::TruncFOp::create(b, loc, type, scalar);
}

Value LinalgBuilder::constantF32(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

void LinalgBuilder::replaceOp(RewriterBase &rewriter, Operation *op,
                              Value value) {
  Type type = op->getResult(0).getType();
  if (value.getType() != type)
    value = tensor::CastOp::create(rewriter, op->getLoc(), type, value);
  rewriter.replaceOp(op, value);
}
