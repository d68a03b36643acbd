//===- TfmDialect.h - tfm dialect -------------------------------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMDIALECT_H
#define TFM_DIALECT_TFM_IR_TFMDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "tfm/Dialect/Tfm/IR/TfmDialect.h.inc"

#endif // TFM_DIALECT_TFM_IR_TFMDIALECT_H
