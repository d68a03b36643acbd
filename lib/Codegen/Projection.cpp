//===- Projection.cpp - the projection form the CPU blocks -----------------===//

#include "tfm/Codegen/Projection.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tfm;

bool mlir::tfm::isProductOf(Value value, ArrayRef<Value> factors) {
  SmallVector<Value> leaves, pending{value};
  while (!pending.empty()) {
    Value next = pending.pop_back_val();
    if (auto multiply = next.getDefiningOp<arith::MulFOp>()) {
      pending.push_back(multiply.getLhs());
      pending.push_back(multiply.getRhs());
    } else if (auto extend = next.getDefiningOp<arith::ExtFOp>()) {
      leaves.push_back(extend.getIn());
    } else {
      leaves.push_back(next);
    }
  }
  if (leaves.size() != factors.size())
    return false;
  return llvm::all_of(factors, [&](Value factor) {
    return llvm::count(leaves, factor) == llvm::count(factors, factor);
  });
}

bool mlir::tfm::isProjection(linalg::GenericOp op) {
  unsigned inputs = op.getNumDpsInputs();
  if (!op.hasPureTensorSemantics() || (inputs != 2 && inputs != 3) ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 3)
    return false;
  MLIRContext *context = op.getContext();
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  SmallVector<AffineMap> expected{AffineMap::get(3, 0, {m, k}, context),
                                  AffineMap::get(3, 0, {n, k}, context)};
  if (inputs == 3)
    expected.push_back(AffineMap::get(3, 0, {k}, context));
  expected.push_back(AffineMap::get(3, 0, {m, n}, context));
  auto weights = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto result = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  if (op.getIndexingMapsArray() != expected || !weights.hasStaticShape() ||
      !result.getElementType().isF32())
    return false;
  if (inputs == 2)
    return linalg::isaContractionOpInterface(op);
  // out + a · w · g
  Block &body = op.getRegion().front();
  auto sum = cast<linalg::YieldOp>(body.getTerminator())
                 .getValues()[0]
                 .getDefiningOp<arith::AddFOp>();
  if (!sum)
    return false;
  Value accumulator = body.getArgument(3);
  Value term = sum.getLhs() == accumulator   ? sum.getRhs()
               : sum.getRhs() == accumulator ? sum.getLhs()
                                             : Value();
  return term && isProductOf(term, {body.getArgument(0), body.getArgument(1),
                                    body.getArgument(2)});
}

Value mlir::tfm::columnScaleOf(linalg::GenericOp projection) {
  return projection.getNumDpsInputs() == 3 ? projection.getDpsInputs()[2]
                                           : Value();
}
