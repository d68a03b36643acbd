//===- UnifyCheckedSizes.cpp - one value per size the checks made equal ---===//
//
// tfm-unify-checked-sizes: inside the `then` region of a function's
// top-level scf.if whose condition is a tree of arith.andi over
// `arith.cmpi eq` of indices (the runtime checks' verdict,
// tfm-insert-runtime-checks), sizes checked equal are one SSA value.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/EquivalenceClasses.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMUNIFYCHECKEDSIZESPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// The pairs of indices that `condition` being true makes equal: the
/// `cmpi eq` leaves of its tree of `andi`.
SmallVector<std::pair<Value, Value>> equalitiesOf(Value condition) {
  SmallVector<std::pair<Value, Value>> equalities;
  SmallVector<Value> worklist{condition};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto both = value.getDefiningOp<arith::AndIOp>()) {
      worklist.append({both.getLhs(), both.getRhs()});
    } else if (auto compare = value.getDefiningOp<arith::CmpIOp>();
               compare && compare.getPredicate() == arith::CmpIPredicate::eq &&
               compare.getLhs().getType().isIndex() &&
               compare.getLhs() != compare.getRhs()) {
      equalities.push_back({compare.getLhs(), compare.getRhs()});
    }
  }
  return equalities;
}

/// Whether `a` should stand for a class of equal values rather than `b`,
/// both of one block: a constant first (it stays one), then a block
/// argument, then the op defined first.
bool standsBefore(Value a, Value b) {
  bool constantA = matchPattern(a, m_Constant()),
       constantB = matchPattern(b, m_Constant());
  if (constantA != constantB)
    return constantA;
  Operation *opA = a.getDefiningOp(), *opB = b.getDefiningOp();
  if (!opA || !opB)
    return !opA && opB;
  return opA->isBeforeInBlock(opB);
}

struct TfmUnifyCheckedSizesPass
    : tfm::impl::TfmUnifyCheckedSizesPassBase<TfmUnifyCheckedSizesPass> {
  void runOnOperation() override {
    Region &body = getOperation().getBody();
    if (!body.hasOneBlock())
      return;
    // The checks guard the function's body from its top level, where every
    // value the condition compares is defined in the one block (and a
    // valid affine symbol, whichever stands for its class).
    for (auto guarded : body.getOps<scf::IfOp>()) {
      // Classes of equal sizes, each to read as one of its members
      // (standsBefore).
      llvm::EquivalenceClasses<Value> classes;
      for (auto [a, b] : equalitiesOf(guarded.getCondition()))
        classes.unionSets(a, b);
      Region &then = guarded.getThenRegion();
      for (const auto *leader : classes) {
        if (!leader->isLeader())
          continue;
        Value first = leader->getData();
        for (Value member : classes.members(*leader))
          if (standsBefore(member, first))
            first = member;
        for (Value member : classes.members(*leader))
          if (member != first)
            member.replaceUsesWithIf(first, [&](OpOperand &use) {
              return then.isAncestor(use.getOwner()->getParentRegion());
            });
      }
    }
  }
};

} // namespace
