//===- TfmOps.h - tfm operations --------------------------------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMOPS_H
#define TFM_DIALECT_TFM_IR_TFMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrs.h"
#include "tfm/Dialect/Tfm/IR/TfmDialect.h"

#define GET_OP_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmOps.h.inc"

#endif // TFM_DIALECT_TFM_IR_TFMOPS_H
