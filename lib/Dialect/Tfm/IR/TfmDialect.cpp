//===- TfmDialect.cpp - tfm dialect registration ---------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmDialect.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tfm;

#include "tfm/Dialect/Tfm/IR/TfmDialect.cpp.inc"
#include "tfm/Dialect/Tfm/IR/TfmEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmOps.cpp.inc"

void TfmDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tfm/Dialect/Tfm/IR/TfmAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tfm/Dialect/Tfm/IR/TfmOps.cpp.inc"
      >();
}
