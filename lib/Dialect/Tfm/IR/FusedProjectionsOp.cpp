//===- FusedProjectionsOp.cpp - projections computed together -------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

using namespace mlir;
using namespace mlir::tfm;

LogicalResult FusedProjectionsOp::verifyRegions() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("expected the body to yield values of the result "
                       "types, in order");
  return success();
}
