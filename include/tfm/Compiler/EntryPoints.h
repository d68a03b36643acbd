//===- EntryPoints.h - what a compiled library exports ----------*- C++ -*-===//
//
// The signatures of a module's public functions, captured before lowering
// (names come from `tfm.name` argument and result attributes), and the C
// header generated from them (the manifest is in tfm/Runtime/Manifest.h).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_COMPILER_ENTRYPOINTS_H
#define TFM_COMPILER_ENTRYPOINTS_H

#include "tfm/Runtime/Manifest.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfm {

/// The public functions of `module`, which must take and return ranked
/// tensors of supported element types.
FailureOr<std::vector<EntryPoint>> collectEntryPoints(ModuleOp module);

/// Fills the `dimSources` of every output from `module` lowered to the
/// linalg stage, where result dims can be expressed through input dims.
void resolveOutputDimSources(ModuleOp linalgModule,
                             std::vector<EntryPoint> &entryPoints);

/// Adds the inputs that the pipeline added to entry points of `module`
/// lowered to the bufferized stage (weights packed once, named
/// `<weight>.packed`), drops those it took away (the weights packed), and
/// adds the entry point that makes them, prepare_weights, where the module
/// has one.
LogicalResult collectPreparedInputs(ModuleOp module,
                                    std::vector<EntryPoint> &entryPoints);

/// Reads the runtime checks (`tfm.checks`, from tfm-insert-runtime-checks)
/// of every entry point of `module` lowered to the bufferized stage.
void collectRuntimeChecks(ModuleOp module,
                          std::vector<EntryPoint> &entryPoints);

/// A C header declaring `_mlir_ciface_<name>` for every entry point with
/// typed memref descriptors and the argument order spelled out.
std::string formatCHeader(const std::vector<EntryPoint> &entryPoints,
                          llvm::StringRef libraryName);

} // namespace mlir::tfm

#endif // TFM_COMPILER_ENTRYPOINTS_H
