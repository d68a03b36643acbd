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

/// Function attribute set by tfm-expose-entry-points: how many of the entry
/// point's arguments are inputs (the outputs follow them).
constexpr llvm::StringLiteral kInputCountAttr = "tfm.input_count";

/// Argument attributes of an input that holds a weight packed once
/// (tfm-cpu-tile-projections with prepack-weights): the names of the input
/// it is packed from and of the input that scales its steps, if any. The
/// entry point kPrepareWeightsEntry (tfm/Runtime/Manifest.h) makes it.
constexpr llvm::StringLiteral kPackedWeightAttr = "tfm.packed_weight";
constexpr llvm::StringLiteral kPackedScaleAttr = "tfm.packed_scale";
/// Further argument attributes of such an input where the weight is read
/// otherwise than whole from an [N, K] input: transposed (a unit attribute;
/// the input is wᵀ [K, N], a Conv1D weight) and only rows [offset, offset +
/// count) of w (a DenseI64ArrayAttr [offset, count]).
constexpr llvm::StringLiteral kPackedTransposedAttr = "tfm.packed_transposed";
constexpr llvm::StringLiteral kPackedRowsAttr = "tfm.packed_rows";

/// Function attribute set by tfm-cpu-prepare-weights: the indices, among
/// the inputs the entry point was exposed with, of those it no longer
/// takes, weights that it reads only packed (a DenseI64ArrayAttr).
constexpr llvm::StringLiteral kDroppedInputsAttr = "tfm.dropped_inputs";

} // namespace mlir::tfm

#endif // TFM_ABI_ATTRIBUTES_H
