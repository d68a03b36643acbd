//===- ModelDescription.h - JSON model descriptions -------------*- C++ -*-===//
//
// A decoder-only language model described in JSON (schema:
// docs/ModelDescription.md), expanded into tfm ops: embedding -> blocks ->
// final norm -> LM head, with parameters as named function arguments.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_COMPILER_MODELDESCRIPTION_H
#define TFM_COMPILER_MODELDESCRIPTION_H

#include "tfm/Runtime/Manifest.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

namespace mlir::tfm {

struct ModelModule {
  OwningOpRef<ModuleOp> module;
  /// The model's work as a function of batch and sequence length.
  FlopModel flops;
};

/// Parses and validates a model description and builds its module: the
/// entry point `@forward(input_ids, position_ids, parameters...) -> logits`
/// and, for generation, `@prefill` and `@decode`, which update caller-owned
/// KV caches in place. Errors name the offending field.
llvm::Expected<ModelModule> buildModelFromJSON(llvm::StringRef json,
                                               MLIRContext *context);

} // namespace mlir::tfm

#endif // TFM_COMPILER_MODELDESCRIPTION_H
