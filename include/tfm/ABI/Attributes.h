//===- Attributes.h - names of the entry-point ABI's attributes -*- C++ -*-===//
//
// Declared once: the model builder, the ABI passes and the manifest
// collection (tfm/Compiler/EntryPoints.h) name them through these.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ABI_ATTRIBUTES_H
#define TFM_ABI_ATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::tfm {

/// Argument and result attribute: the tensor's name in the manifest
/// (Hugging Face parameter names for model descriptions).
constexpr llvm::StringLiteral kNameAttr = "tfm.name";

/// Result attribute: the index of the input whose caller's array the result
/// is written back into (a KV cache updated in place), instead of an output
/// array of its own. The result has the input's type.
constexpr llvm::StringLiteral kUpdatesAttr = "tfm.updates";

/// Function attribute set by tfm-insert-runtime-checks: the messages of the
/// entry point's runtime checks, in status order.
constexpr llvm::StringLiteral kChecksAttr = "tfm.checks";

} // namespace mlir::tfm

#endif // TFM_ABI_ATTRIBUTES_H
