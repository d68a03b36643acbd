//===- DropSelfCopies.cpp - copies of a buffer onto itself ----------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDROPSELFCOPIESPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// Whether `view` is `buffer` itself, or `buffer` collapsed and expanded
/// back along the same dims: the same bytes in the same layout (a
/// memref.copy's operands have the same shape).
bool isSameBuffer(Value view, Value buffer) {
  if (view == buffer)
    return true;
  auto expand = view.getDefiningOp<memref::ExpandShapeOp>();
  auto collapse =
      expand ? expand.getSrc().getDefiningOp<memref::CollapseShapeOp>()
             : nullptr;
  return collapse && collapse.getSrc() == buffer &&
         collapse.getReassociationIndices() ==
             expand.getReassociationIndices();
}

struct TfmDropSelfCopiesPass
    : tfm::impl::TfmDropSelfCopiesPassBase<TfmDropSelfCopiesPass> {
  void runOnOperation() override {
    getOperation()->walk([](memref::CopyOp copy) {
      if (isSameBuffer(copy.getSource(), copy.getTarget()) ||
          isSameBuffer(copy.getTarget(), copy.getSource()))
        copy->erase();
    });
  }
};

} // namespace
