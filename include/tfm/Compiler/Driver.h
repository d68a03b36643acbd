//===- Driver.h - tfm-compile's library -------------------------*- C++ -*-===//
//
// Lowers a tfm module stage by stage through the stages of a target
// (tfm/Target/TargetBackend.h), dumping the IR after the stages asked for.
// What the module becomes after the last stage is the target's business.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_COMPILER_DRIVER_H
#define TFM_COMPILER_DRIVER_H

#include "tfm/Target/TargetBackend.h"

#include "mlir/IR/BuiltinOps.h"

#include <set>
#include <string>
#include <vector>

namespace mlir::tfm {

/// The name of the input stage: tfm ops on tensors.
constexpr llvm::StringLiteral kInputStage = "tfm";

/// The input stage, then `target`'s stages, in order.
std::vector<std::string> stageNames(const TargetBackend &target);

/// Writes docs/Stages.md for `target`: a table of its stages, the passes of
/// each (without their options) and what the IR holds after it.
void printStages(const TargetBackend &target, llvm::raw_ostream &os);

struct LoweringOptions {
  /// Stages after which to print the module to `dumpStream`.
  std::set<std::string> dumpAfter;
  llvm::raw_ostream *dumpStream = nullptr;
};

/// Runs `target`'s stages after `first` up to and including `last` (the
/// module is at stage `first`). Both must be in stageNames(target).
LogicalResult lowerModule(ModuleOp module, const TargetBackend &target,
                          llvm::StringRef last,
                          const LoweringOptions &options = {},
                          llvm::StringRef first = kInputStage);

} // namespace mlir::tfm

#endif // TFM_COMPILER_DRIVER_H
