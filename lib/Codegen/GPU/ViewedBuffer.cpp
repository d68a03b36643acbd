//===- ViewedBuffer.cpp - the buffer a memref value views -----------------===//

#include "ViewedBuffer.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value mlir::tfm::viewedBuffer(Value value) {
  while (true) {
    if (auto view = value.getDefiningOp<ViewLikeOpInterface>())
      value = view.getViewSource();
    else if (auto transpose = value.getDefiningOp<memref::TransposeOp>())
      value = transpose.getIn();
    else
      return value;
  }
}
