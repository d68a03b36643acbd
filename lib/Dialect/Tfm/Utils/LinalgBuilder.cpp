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

Value LinalgBuilder::projectF32(Value x, Value w) {
  auto xType = cast<RankedTensorType>(x.getType());
  unsigned outer = xType.getRank() - 1;
  // Loops: outer dims of x, then n, then the reduced k.
  unsigned numLoops = outer + 2, n = outer, k = outer + 1;
  SmallVector<unsigned> xDims, outDims;
  for (unsigned i = 0; i < outer; ++i) {
    xDims.push_back(i);
    outDims.push_back(i);
  }
  xDims.push_back(k);
  outDims.push_back(n);

  SmallVector<OpFoldResult> sizes = sizesOf(x);
  sizes.back() = sizeOf(w, 0);
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  iterators[k] = utils::IteratorType::reduction;
  return generic({x, w}, {map(numLoops, xDims), map(numLoops, {n, k})},
                 filledF32(sizes, 0.0), map(numLoops, outDims), iterators,
                 [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                   Value product = arith::MulFOp::create(
                       b, loc, toF32(b, loc, args[0]), toF32(b, loc, args[1]));
                   return arith::AddFOp::create(b, loc, args[2], product);
                 });
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
