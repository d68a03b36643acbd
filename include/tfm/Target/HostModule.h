//===- HostModule.h - the LLVM module every target's library exports -*- C++ -*-===//
//
// Whatever runs the kernels, a compiled library is host code that exports
// the entry points (docs/DESIGN.md, entry-point ABI): this translates its
// LLVM dialect to LLVM IR with the manifest and the packed entry wrappers.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_TARGET_HOSTMODULE_H
#define TFM_TARGET_HOSTMODULE_H

#include "tfm/Runtime/Manifest.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::tfm {

/// Translates an LLVM-dialect module, sets its triple and data layout from
/// `target`, embeds `manifest` as the exported string `tfm_manifest`, adds a
/// `tfm_entry_<name>(void **)` wrapper per entry point (tfm/Runtime/
/// Manifest.h), and optimizes at `optLevel`.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                  llvm::TargetMachine &target, unsigned optLevel,
                  const Manifest &manifest);

} // namespace mlir::tfm

#endif // TFM_TARGET_HOSTMODULE_H
