//===- ProjectionGroups.cpp - projections and their epilogues -------------===//

#include "ProjectionGroups.h"

#include "tfm/Codegen/Projection.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::projection;

namespace {

/// Whether `op` is elementwise over [M, N] with an identity result.
bool isRowColumnElementwise(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && op.getNumLoops() == 2 &&
         op.getNumDpsInits() == 1 &&
         op.getNumParallelLoops() == op.getNumLoops() &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity();
}

/// `group` with the viewed epilogue (ProjectionGroup) that reads its result
/// through `view`, the only reader of that result: the elementwise op that
/// alone reads the view, directly or through slices of its dims after C,
/// with no other operand and no index that depends on C. Else `group`.
ProjectionGroup withViewedEpilogue(ProjectionGroup group,
                                   tensor::ExpandShapeOp view) {
  ProjectionGroup single = group;
  // The column block goes to scratch: without an epilogue in between, the
  // projection must start from zeros there, not from values of its init.
  if (!group.epilogue &&
      !group.projections.front().getDpsInits()[0].getDefiningOp<linalg::FillOp>())
    return single;
  RankedTensorType viewType = view.getResultType();
  SmallVector<ReassociationIndices> reassociation =
      view.getReassociationIndices();
  if (reassociation.size() != 2 || reassociation[0].size() != 1 ||
      viewType.getRank() < 3 ||
      llvm::any_of(viewType.getShape().drop_front(), ShapedType::isDynamic))
    return single;
  linalg::GenericOp epilogue;
  for (Operation *user : view->getUsers()) {
    Operation *reader = user;
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
      // Whole along M and C, unit steps, the view's rank.
      std::optional<int64_t> rowOffset =
          getConstantIntValue(slice.getMixedOffsets()[0]);
      std::optional<int64_t> unitOffset =
          getConstantIntValue(slice.getMixedOffsets()[1]);
      if (!slice->hasOneUse() || !slice.hasUnitStride() ||
          slice.getResultType().getRank() != viewType.getRank() ||
          rowOffset != 0 || unitOffset != 0 ||
          !isEqualConstantIntOrValue(slice.getMixedSizes()[0],
                                     view.getMixedOutputShape()[0]) ||
          slice.getResultType().getDimSize(1) != viewType.getDimSize(1))
        return single;
      reader = *slice->getUsers().begin();
    }
    auto op = dyn_cast<linalg::GenericOp>(reader);
    if (!op || (epilogue && op != epilogue))
      return single;
    epilogue = op;
  }
  if (!epilogue || !epilogue.hasPureTensorSemantics() ||
      epilogue.getNumDpsInits() != 1 ||
      epilogue.getNumLoops() != static_cast<unsigned>(viewType.getRank()) ||
      epilogue.getNumParallelLoops() != epilogue.getNumLoops() ||
      !epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0))
           .isIdentity() ||
      epilogue.payloadUsesValueFromOperand(epilogue.getDpsInitOperand(0)))
    return single;
  MLIRContext *context = epilogue.getContext();
  AffineExpr rowsDim = getAffineDimExpr(0, context);
  AffineExpr unitDim = getAffineDimExpr(1, context);
  for (OpOperand *operand : epilogue.getDpsInputOperands()) {
    Value input = operand->get();
    auto slice = input.getDefiningOp<tensor::ExtractSliceOp>();
    AffineMap map = epilogue.getMatchingIndexingMap(operand);
    bool viewed = input == view.getResult() ||
                  (slice && slice.getSource() == view.getResult());
    if (viewed ? map.getNumResults() < 2 || map.getResult(0) != rowsDim ||
                     map.getResult(1) != unitDim
               : map.isFunctionOfDim(1))
      return single;
  }
  bool readsUnitIndex = false;
  epilogue.getRegion().walk([&](linalg::IndexOp index) {
    readsUnitIndex |= index.getDim() == 1;
  });
  if (readsUnitIndex)
    return single;
  group.view = view;
  group.viewedEpilogue = epilogue;
  return group;
}

/// The group of `projection`: with the elementwise op that alone reads it,
/// if every projection that op reads is read only by it, at an identity
/// map, and shares `projection`'s rows and column count.
ProjectionGroup plainGroupOf(linalg::GenericOp projection,
                             function_ref<bool(linalg::GenericOp)> isTileable) {
  ProjectionGroup single{{projection}, {}, {}, {}};
  Value result = projection->getResult(0);
  if (!result.hasOneUse())
    return single;
  auto epilogue = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!epilogue || !isRowColumnElementwise(epilogue))
    return single;
  auto weightsOf = [](linalg::GenericOp op) {
    return cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  };
  ProjectionGroup group{{}, epilogue, {}, {}};
  for (OpOperand *operand : epilogue.getDpsInputOperands()) {
    auto other = operand->get().getDefiningOp<linalg::GenericOp>();
    if (!other || !isTileable(other))
      continue;
    if (!operand->get().hasOneUse() ||
        !epilogue.getMatchingIndexingMap(operand).isIdentity() ||
        !sameTensor(other.getDpsInputs()[0], projection.getDpsInputs()[0]) ||
        weightsOf(other).getDimSize(0) != weightsOf(projection).getDimSize(0))
      return single;
    group.projections.push_back(other);
  }
  if (!llvm::is_contained(group.projections, projection))
    return single;
  return group;
}

} // namespace

bool mlir::tfm::projection::sameTensor(Value a, Value b) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  return x && y && isMemoryEffectFree(x) &&
         OperationEquivalence::isEquivalentTo(
             x, y, OperationEquivalence::IgnoreLocations);
}

ProjectionGroup mlir::tfm::projection::groupOf(
    linalg::GenericOp projection,
    function_ref<bool(linalg::GenericOp)> isTileable, bool plain, bool viewed) {
  ProjectionGroup group{{projection}, {}, {}, {}};
  if (plain)
    group = plainGroupOf(projection, isTileable);
  Value result = group.root()->getResult(0);
  if (!viewed || !result.hasOneUse())
    return group;
  if (auto view = dyn_cast<tensor::ExpandShapeOp>(*result.getUsers().begin()))
    return withViewedEpilogue(group, view);
  return group;
}

bool mlir::tfm::projection::collapsesToProjection(OpOperand *operand) {
  Operation *owner = operand->getOwner();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(owner)) {
    auto producer = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
    return producer && producer.getNumParallelLoops() == producer.getNumLoops();
  }
  auto consumer = dyn_cast<linalg::GenericOp>(owner);
  auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
  auto projection =
      expand ? expand.getSrc().getDefiningOp<linalg::GenericOp>() : nullptr;
  return consumer &&
         consumer.getNumParallelLoops() == consumer.getNumLoops() &&
         projection && isProjection(projection);
}

bool mlir::tfm::projection::extendsEpilogue(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer || !operand->get().hasOneUse() ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      producer.getNumParallelLoops() != producer.getNumLoops())
    return false;
  return llvm::any_of(producer.getDpsInputs(), [](Value input) {
    auto projection = input.getDefiningOp<linalg::GenericOp>();
    return projection && isProjection(projection);
  });
}
