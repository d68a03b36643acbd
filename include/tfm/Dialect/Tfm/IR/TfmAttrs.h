//===- TfmAttrs.h - tfm enums and attributes --------------------*- C++ -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMATTRS_H
#define TFM_DIALECT_TFM_IR_TFMATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "tfm/Dialect/Tfm/IR/TfmEnums.h.inc"

namespace mlir::tfm {
/// Whether an FFN of `kind` multiplies an activated gate projection into the
/// up projection (swiglu, geglu) rather than activating the up projection.
inline bool isGatedFFN(FFNKind kind) {
  return kind == FFNKind::swiglu || kind == FFNKind::geglu;
}
} // namespace mlir::tfm

#define GET_ATTRDEF_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmAttrs.h.inc"

#endif // TFM_DIALECT_TFM_IR_TFMATTRS_H
