//===- ProjectionGroups.cpp - projections and their epilogues -------------===//

#include "ProjectionGroups.h"

#include "tfm/Codegen/Projection.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <numeric>

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
                                   tensor::ExpandShapeOp view,
                                   function_ref<bool(linalg::GenericOp)> joins) {
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
  if (!epilogue || !joins(epilogue) || !epilogue.hasPureTensorSemantics() ||
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
/// if `joins` accepts it and every projection that op reads is read only by
/// it, at an identity map, and shares `projection`'s rows and column count.
ProjectionGroup plainGroupOf(linalg::GenericOp projection,
                             function_ref<bool(linalg::GenericOp)> isTileable,
                             function_ref<bool(linalg::GenericOp)> joins) {
  ProjectionGroup single{{projection}, {}, {}, {}};
  Value result = projection->getResult(0);
  if (!result.hasOneUse())
    return single;
  auto epilogue = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!epilogue || !isRowColumnElementwise(epilogue) || !joins(epilogue))
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

SmallVector<Operation *> mlir::tfm::projection::ProjectionGroup::ops() {
  SmallVector<Operation *> all(projections.begin(), projections.end());
  if (epilogue)
    all.push_back(epilogue);
  if (view) {
    all.push_back(view);
    for (Operation *user : view->getUsers())
      if (isa<tensor::ExtractSliceOp>(user))
        all.push_back(user);
    all.push_back(viewedEpilogue);
  }
  return all;
}

ProjectionGroup mlir::tfm::projection::groupOf(
    linalg::GenericOp projection,
    function_ref<bool(linalg::GenericOp)> isTileable,
    function_ref<bool(linalg::GenericOp)> joinsEpilogue,
    function_ref<bool(linalg::GenericOp)> joinsViewed) {
  ProjectionGroup group = plainGroupOf(projection, isTileable, joinsEpilogue);
  Value result = group.root()->getResult(0);
  if (!result.hasOneUse())
    return group;
  if (auto view = dyn_cast<tensor::ExpandShapeOp>(*result.getUsers().begin()))
    return withViewedEpilogue(group, view, joinsViewed);
  return group;
}

std::optional<std::pair<Blocking, std::optional<Blocking>>>
mlir::tfm::projection::blockingOf(linalg::GenericOp projection,
                                  const CPUCodegenOptions &options) {
  auto weights =
      cast<RankedTensorType>(projection.getDpsInputs()[1].getType());
  int64_t columns = weights.getDimSize(0);
  int64_t lanes = options.vectorWidth;
  // Nothing to block without columns or steps (y = 0, or the bias).
  if (columns == 0 || weights.getDimSize(1) == 0)
    return std::nullopt;
  Blocking main{};
  main.rows = options.registerRows;
  main.depth = blockSize(weights.getDimSize(1), lanes, kMaxPanelDepth);
  // A K that no vector divides stays as it is.
  if (!main.depth)
    return std::nullopt;
  // NR fills the 2 x register-rows accumulators with MR rows, or half of
  // them where only one vector divides N. Columns that no vector divides
  // (N % vector-width) form one narrower tail block.
  main.columns = columns % (2 * lanes) != 0 && columns % lanes == 0
                     ? lanes
                     : 2 * lanes;
  int64_t mainColumns = columns - columns % main.columns;
  std::optional<Blocking> tail;
  if (int64_t left = columns - mainColumns) {
    tail = main;
    tail->columns = tail->block = left;
  }
  return std::make_pair(main, tail);
}

SmallVector<linalg::GenericOp>
mlir::tfm::projection::blockedProjections(Operation *root,
                                          const CPUCodegenOptions &options) {
  SmallVector<linalg::GenericOp> projections;
  root->walk([&](linalg::GenericOp op) {
    if (isProjection(op) && blockingOf(op, options))
      projections.push_back(op);
  });
  return projections;
}

/// Column blocks divide every range: NB as blockingOf picks it, for the
/// columns all the groups have in common (siblings: gcd(Nq, Nk, Nv), or
/// N less its tail), in whole units of their views (RoPE: whole heads).
/// Streamed, up to 4 register blocks of weight rows per thread iteration:
/// a block stays in L1/L2 across the rows of `a`, and N = 2048 gives 64 of
/// them to share out. A register-rows that divides no part of every range
/// (12 against 2048) falls back to the largest divisor.
ColumnBlocks mlir::tfm::projection::columnBlocks(
    ArrayRef<ProjectionGroup> groups, const Blocking &main, bool hasTail) {
  int64_t common = 0, unit = 1;
  for (const ProjectionGroup &group : groups) {
    linalg::GenericOp projection = group.projections.front();
    auto weights =
        cast<RankedTensorType>(projection.getDpsInputs()[1].getType());
    int64_t columns = weights.getDimSize(0);
    common = std::gcd(common, hasTail ? columns - columns % main.columns
                                      : columns);
    unit = std::lcm(unit, group.columnUnit());
  }
  auto fit = [&](int64_t step, int64_t limit) {
    int64_t combined = std::lcm(step, unit);
    return blockSize(common, combined, std::max(limit, combined));
  };
  ColumnBlocks blocks{fit(main.columns, kMaxBlockColumns),
                      fit(main.rows, 4 * main.rows)};
  if (!blocks.streamed)
    blocks.streamed = fit(1, 4 * main.rows);
  return blocks;
}

bool mlir::tfm::projection::fitsColumnBlocks(
    ArrayRef<ProjectionGroup> groups, const CPUCodegenOptions &options) {
  auto blocking = blockingOf(groups.front().projections.front(), options);
  bool hasTail = blocking->second.has_value();
  if (hasTail && llvm::any_of(groups, [](const ProjectionGroup &group) {
        return group.view != nullptr;
      }))
    return false;
  ColumnBlocks blocks = columnBlocks(groups, blocking->first, hasTail);
  return blocks.packed && blocks.streamed;
}

/// Whether `group` writes a fresh buffer: a filled empty tensor (a
/// projection alone), or an empty one its epilogue does not read; not its
/// caller's.
static bool startsEmpty(ProjectionGroup &group) {
  linalg::GenericOp root = group.root();
  if (callerDestination(root))
    return false;
  Value init = root.getDpsInits()[0];
  if (root == group.projections.front()) {
    auto fill = init.getDefiningOp<linalg::FillOp>();
    return fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  }
  if (auto collapse = init.getDefiningOp<tensor::CollapseShapeOp>())
    init = collapse.getSrc();
  return init.getDefiningOp<tensor::EmptyOp>() &&
         !root.payloadUsesValueFromOperand(root.getDpsInitOperand(0));
}

bool mlir::tfm::projection::areSiblings(ProjectionGroup &a, ProjectionGroup &b,
                                        const CPUCodegenOptions &options) {
  if (a.root()->getBlock() != b.root()->getBlock() ||
      !sameTensor(a.rows(), b.rows()))
    return false;
  auto blockingA = blockingOf(a.projections.front(), options);
  auto blockingB = blockingOf(b.projections.front(), options);
  if (!blockingA || !blockingB || blockingA->second || blockingB->second ||
      blockingA->first.columns != blockingB->first.columns ||
      blockingA->first.depth != blockingB->first.depth)
    return false;
  auto typeA = cast<RankedTensorType>(a.root()->getResult(0).getType());
  auto typeB = cast<RankedTensorType>(b.root()->getResult(0).getType());
  return typeA.getElementType() == typeB.getElementType() &&
         typeA.getDimSize(0) == typeB.getDimSize(0) && startsEmpty(a) &&
         startsEmpty(b);
}

/// `siblings` in the order of their roots, with what each reads moved
/// before the first root; those whose producers cannot move are left out.
static SmallVector<ProjectionGroup>
gatherSiblings(RewriterBase &rewriter, SmallVector<ProjectionGroup> siblings) {
  llvm::sort(siblings, [](ProjectionGroup &x, ProjectionGroup &y) {
    return x.root()->isBeforeInBlock(y.root());
  });
  SmallVector<ProjectionGroup> gathered{siblings.front()};
  Operation *first = siblings.front().root();
  for (ProjectionGroup &group : llvm::drop_begin(siblings))
    if (succeeded(moveOperationDependencies(rewriter, group.root(), first)))
      gathered.push_back(group);
  return gathered;
}

SmallVector<SmallVector<ProjectionGroup>> mlir::tfm::projection::siblingLoops(
    RewriterBase &rewriter, ArrayRef<ProjectionGroup> groups,
    function_ref<bool(ProjectionGroup &, ProjectionGroup &)> mayShare,
    const CPUCodegenOptions &options) {
  SmallVector<ProjectionGroup> all(groups);
  std::vector<bool> taken(all.size());
  SmallVector<SmallVector<ProjectionGroup>> loops;
  for (size_t i = 0; i < all.size(); ++i) {
    if (taken[i])
      continue;
    taken[i] = true;
    SmallVector<ProjectionGroup> together{all[i]};
    for (size_t j = i + 1; j < all.size(); ++j) {
      if (taken[j] || !mayShare(all[i], all[j]) ||
          !areSiblings(all[i], all[j], options))
        continue;
      together.push_back(all[j]);
      if (!fitsColumnBlocks(together, options))
        together.pop_back();
    }
    if (together.size() > 1)
      together = gatherSiblings(rewriter, std::move(together));
    for (size_t j = i + 1; j < all.size(); ++j)
      if (llvm::any_of(together, [&](ProjectionGroup &group) {
            return group.root() == all[j].root();
          }))
        taken[j] = true;
    loops.push_back(std::move(together));
  }
  return loops;
}

bufferization::MaterializeInDestinationOp
mlir::tfm::projection::callerDestination(linalg::GenericOp root) {
  Value result = root->getResult(0);
  if (!result.hasOneUse())
    return {};
  auto expand = dyn_cast<tensor::ExpandShapeOp>(*result.getUsers().begin());
  if (!expand || !expand->hasOneUse())
    return {};
  auto materialize = dyn_cast<bufferization::MaterializeInDestinationOp>(
      *expand->getUsers().begin());
  if (!materialize || !materialize.getRestrict() ||
      !materialize.getWritable() ||
      !isa<BlockArgument>(materialize.getDest()) ||
      materialize.getSource() != expand.getResult())
    return {};
  return materialize;
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
