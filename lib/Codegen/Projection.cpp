//===- Projection.cpp - the projection form the CPU blocks -----------------===//

#include "tfm/Codegen/Projection.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

namespace {

/// The term a projection's body adds to its accumulator, or null.
Value termOf(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto sum = cast<linalg::YieldOp>(body.getTerminator())
                 .getValues()[0]
                 .getDefiningOp<arith::AddFOp>();
  if (!sum)
    return Value();
  Value accumulator = body.getArguments().back();
  return sum.getLhs() == accumulator   ? sum.getRhs()
         : sum.getRhs() == accumulator ? sum.getLhs()
                                       : Value();
}

/// The t of a projection term t · w (w widened to f32 or not), where t
/// reads neither w nor the accumulator; or null.
Value rowTermOf(linalg::GenericOp op) {
  Value term = termOf(op);
  auto product = term ? term.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!product)
    return Value();
  Block &body = op.getRegion().front();
  auto isWeight = [&](Value v) {
    if (auto widen = v.getDefiningOp<arith::ExtFOp>())
      v = widen.getIn();
    return v == body.getArgument(1);
  };
  Value t = isWeight(product.getRhs())   ? product.getLhs()
            : isWeight(product.getLhs()) ? product.getRhs()
                                         : Value();
  if (!t || !t.getType().isF32())
    return Value();
  // t's operations, back to block arguments: none is w or the accumulator.
  SmallVector<Value> pending{t};
  while (!pending.empty()) {
    Value next = pending.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(next)) {
      if (argument.getOwner() == &body &&
          (argument.getArgNumber() == 1 ||
           argument.getArgNumber() == body.getNumArguments() - 1))
        return Value();
      continue;
    }
    Operation *producer = next.getDefiningOp();
    if (producer->getBlock() != &body)
      continue; // a value from outside (a constant)
    if (!isPure(producer) || producer->getNumRegions() != 0 ||
        isa<linalg::IndexOp>(producer))
      return Value();
    llvm::append_range(pending, producer->getOperands());
  }
  return t;
}

} // namespace

bool mlir::tfm::isProjection(linalg::GenericOp op) {
  unsigned inputs = op.getNumDpsInputs();
  if (!op.hasPureTensorSemantics() || inputs < 2 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 3)
    return false;
  MLIRContext *context = op.getContext();
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto is = [&](AffineMap map, ArrayRef<AffineExpr> results) {
    return map == AffineMap::get(3, 0, results, context);
  };
  if (!is(maps[0], {m, k}) || !is(maps[1], {n, k}) || !is(maps.back(), {m, n}))
    return false;
  // Other operands: per row or per step.
  for (AffineMap map : ArrayRef<AffineMap>(maps).slice(2, inputs - 2))
    if (!is(map, {m}) && !is(map, {k}))
      return false;
  auto weights = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto result = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  if (!weights.hasStaticShape() || !result.getElementType().isF32())
    return false;
  if (inputs == 2)
    return linalg::isaContractionOpInterface(op);
  return columnScaleOf(op) || rowTermOf(op);
}

Value mlir::tfm::columnScaleOf(linalg::GenericOp projection) {
  // out + a · w · g, g per step
  if (projection.getNumDpsInputs() != 3 ||
      projection.getIndexingMapsArray()[2] !=
          AffineMap::get(3, 0, getAffineDimExpr(2, projection.getContext())))
    return Value();
  Block &body = projection.getRegion().front();
  Value term = termOf(projection);
  if (!term || !isProductOf(term, {body.getArgument(0), body.getArgument(1),
                                   body.getArgument(2)}))
    return Value();
  return projection.getDpsInputs()[2];
}

bool mlir::tfm::transformsRows(linalg::GenericOp projection) {
  return projection.getNumDpsInputs() > 2 && !columnScaleOf(projection) &&
         rowTermOf(projection);
}

Value mlir::tfm::transformedRows(OpBuilder &b, Location loc,
                                 linalg::GenericOp projection,
                                 OpFoldResult row0, OpFoldResult rows,
                                 OpFoldResult k0, int64_t depth) {
  OpFoldResult one = b.getIndexAttr(1);
  OpFoldResult steps = b.getIndexAttr(depth);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  MLIRContext *context = b.getContext();
  AffineExpr m = getAffineDimExpr(0, context), k = getAffineDimExpr(1, context);
  SmallVector<Value> operands = projection.getDpsInputs();
  inputs.push_back(tensor::ExtractSliceOp::create(
      b, loc, operands[0], ArrayRef<OpFoldResult>{row0, k0},
      ArrayRef<OpFoldResult>{rows, steps}, ArrayRef<OpFoldResult>{one, one}));
  maps.push_back(AffineMap::get(2, 0, {m, k}, context));
  SmallVector<AffineMap> projectionMaps = projection.getIndexingMapsArray();
  for (unsigned i = 2; i < operands.size(); ++i) {
    bool perRow = projectionMaps[i].getResult(0) == getAffineDimExpr(0, context);
    inputs.push_back(tensor::ExtractSliceOp::create(
        b, loc, operands[i], ArrayRef<OpFoldResult>{perRow ? row0 : k0},
        ArrayRef<OpFoldResult>{perRow ? rows : steps},
        ArrayRef<OpFoldResult>{one}));
    maps.push_back(AffineMap::get(2, 0, {perRow ? m : k}, context));
  }
  SmallVector<Value> dynamicRows;
  std::optional<int64_t> staticRows = getConstantIntValue(rows);
  if (!staticRows)
    dynamicRows.push_back(cast<Value>(rows));
  Value init = tensor::EmptyOp::create(
      b, loc,
      RankedTensorType::get({staticRows.value_or(ShapedType::kDynamic), depth},
                            b.getF32Type()),
      dynamicRows);
  maps.push_back(AffineMap::get(2, 0, {m, k}, context));
  Value t = rowTermOf(projection);
  Block &body = projection.getRegion().front();
  auto transform = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        // t's operations, cloned in order, on the new block's arguments
        // (a, then the per-row and per-step operands: the projection's
        // arguments less w).
        IRMapping mapping;
        mapping.map(body.getArgument(0), args[0]);
        for (unsigned i = 2; i < operands.size(); ++i)
          mapping.map(body.getArgument(i), args[i - 1]);
        for (Operation &op : body.without_terminator()) {
          // Not part of t: what reads w, the accumulator, or what does.
          if (llvm::any_of(op.getOperands(), [&](Value v) {
                return v.getParentBlock() == &body && !mapping.contains(v);
              }))
            continue;
          nb.clone(op, mapping);
          if (mapping.contains(t))
            break;
        }
        linalg::YieldOp::create(nb, nl, mapping.lookup(t));
      });
  return transform.getResult(0);
}

