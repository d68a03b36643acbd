//===- FusionSets.cpp - the ops of tfm.fused_projections regions ----------===//

#include "FusionSets.h"

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::projection;

void FusionSets::dissolve(Operation *root, RewriterBase &rewriter) {
  SmallVector<FusedProjectionsOp> regions;
  root->walk([&](FusedProjectionsOp op) { regions.push_back(op); });
  for (FusedProjectionsOp region : regions) {
    Block &body = region.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> results = yield.getValues();
    unsigned set = nextSet++;
    for (Operation &op : body.without_terminator())
      setOf[&op] = set;
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&body, region);
    rewriter.replaceOp(region, results);
  }
}

bool FusionSets::together(Operation *a, Operation *b) const {
  if (a == b)
    return true;
  auto setA = setOf.find(a), setB = setOf.find(b);
  return setA != setOf.end() && setB != setOf.end() &&
         setA->second == setB->second;
}

void FusionSets::unite(ArrayRef<Operation *> ops) {
  unsigned set = nextSet++;
  SmallVector<unsigned> merged;
  for (Operation *op : ops) {
    auto it = setOf.find(op);
    if (it != setOf.end())
      merged.push_back(it->second);
  }
  for (auto &[op, member] : setOf)
    if (llvm::is_contained(merged, member))
      member = set;
  for (Operation *op : ops)
    setOf[op] = set;
}

/// Whether a region holding `ops` (in one block, in block order) can go
/// right before `at`: every value an op reads from outside the set is
/// defined before `at`, and every op outside the set that reads a result
/// comes after it.
static bool canPlaceBefore(ArrayRef<Operation *> ops, Operation *at,
                           const llvm::SmallPtrSetImpl<Operation *> &inSet) {
  Block *block = at->getBlock();
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def->getBlock() != block || inSet.contains(def))
        continue;
      if (!def->isBeforeInBlock(at))
        return false;
    }
    for (Operation *user : op->getUsers()) {
      Operation *reader = block->findAncestorOpInBlock(*user);
      if (!reader || inSet.contains(reader))
        continue;
      if (!at->isBeforeInBlock(reader))
        return false;
    }
  }
  return true;
}

void FusionSets::form(Operation *root, RewriterBase &rewriter) {
  llvm::MapVector<unsigned, SmallVector<Operation *>> sets;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    auto it = setOf.find(op);
    if (it != setOf.end())
      sets[it->second].push_back(op);
  });
  for (auto &entry : sets) {
    SmallVector<Operation *> &ops = entry.second;
    Block *block = ops.front()->getBlock();
    if (ops.size() < 2 || llvm::any_of(ops, [&](Operation *op) {
          return op->getBlock() != block;
        }))
      continue;
    llvm::SmallPtrSet<Operation *, 8> inSet(ops.begin(), ops.end());
    // The latest place that works: before the last op, unless an op of
    // the set has a reader in between (q's RoPE read before k is computed).
    Operation *at = nullptr;
    for (Operation *candidate : llvm::reverse(ops))
      if (canPlaceBefore(ops, candidate, inSet)) {
        at = candidate;
        break;
      }
    if (!at)
      continue;
    SmallVector<Value> results;
    for (Operation *op : ops)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              Operation *reader = at->getBlock()->findAncestorOpInBlock(*user);
              return !reader || !inSet.contains(reader);
            }))
          results.push_back(result);
    rewriter.setInsertionPoint(at);
    auto fused = FusedProjectionsOp::create(
        rewriter, ops.front()->getLoc(), ValueRange(results).getTypes());
    Block *body = rewriter.createBlock(&fused.getBody());
    for (Operation *op : ops)
      rewriter.moveOpBefore(op, body, body->end());
    rewriter.setInsertionPointToEnd(body);
    YieldOp::create(rewriter, fused.getLoc(), results);
    for (auto [result, replacement] : llvm::zip(results, fused.getResults()))
      rewriter.replaceUsesWithIf(result, replacement, [&](OpOperand &use) {
        return !fused->isProperAncestor(use.getOwner());
      });
  }
}

SmallVector<ProjectionGroup>
mlir::tfm::projection::fusedGroups(Operation *root, const FusionSets &sets,
                                   const CPUCodegenOptions &options) {
  SmallVector<linalg::GenericOp> projections =
      blockedProjections(root, options);
  auto isTileable = [&](linalg::GenericOp op) {
    return llvm::is_contained(projections, op);
  };
  llvm::SmallPtrSet<Operation *, 16> done;
  SmallVector<ProjectionGroup> groups;
  for (linalg::GenericOp op : projections) {
    if (done.contains(op))
      continue;
    auto fused = [&](linalg::GenericOp epilogue) {
      return sets.together(op, epilogue);
    };
    ProjectionGroup group = groupOf(op, isTileable, fused, fused);
    if (group.view && !fitsColumnBlocks({group}, options)) {
      group.view = {};
      group.viewedEpilogue = {};
    }
    groups.push_back(group);
    for (linalg::GenericOp projection : group.projections)
      done.insert(projection);
  }
  return groups;
}
