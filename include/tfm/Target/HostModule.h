//===- HostModule.h - the host code of every library -----------*- C++ -*-===//
//
// Whatever runs the kernels, a compiled library is host code that exports
// the entry points (docs/DESIGN.md, entry-point ABI): this translates its
// LLVM dialect to LLVM IR with the manifest and the packed entry wrappers,
// for the host's target machine, and emits and links it.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_TARGET_HOSTMODULE_H
#define TFM_TARGET_HOSTMODULE_H

#include "tfm/Runtime/Manifest.h"
#include "tfm/Target/TargetBackend.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class ToolOutputFile;
} // namespace llvm

namespace mlir::tfm {

/// A target machine for the host's x86-64 `cpu` ("" or "native": the host
/// CPU with its exact features) with extra `features` ("+avx2,-avx512f"),
/// or why not (an unknown processor or feature).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine(llvm::StringRef cpu, llvm::StringRef features,
                        unsigned optLevel);

/// Translates an LLVM-dialect module, sets its triple and data layout from
/// `target`, embeds `manifest` as the exported string `tfm_manifest`, adds a
/// `tfm_entry_<name>(void **)` wrapper per entry point (tfm/Runtime/
/// Manifest.h), and optimizes at `optLevel`. With a `deviceStatus`
/// function (`int32_t f(void)`), each wrapper returns its result instead
/// of the entry point's when it is not 0: how a device reports a failed
/// call.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                  llvm::TargetMachine &target, unsigned optLevel,
                  const Manifest &manifest, llvm::StringRef deviceStatus = "");

/// How a target links its shared library.
struct HostLinkOptions {
  /// Added after the object file (libraries, search paths, rpaths).
  std::vector<std::string> libraries;
  /// The translation's device status function (translateToLLVMIR).
  std::string deviceStatus;
};

/// Writes a host artifact (Library, Object, Assembly or LLVMIR) of
/// `module` to `outputPath`: a shared library is an object linked with
/// clang and lld (the error carries the command line if that fails).
llvm::Error emitHostArtifact(ModuleOp module, const Manifest &manifest,
                             llvm::TargetMachine &target, unsigned optLevel,
                             Artifact artifact, llvm::StringRef outputPath,
                             const HostLinkOptions &link);

/// The runtime archive `name` (libtfm_cpu_runtime.a, libtfm_cuda_runtime.a)
/// that a target links into its libraries, beside this tool's installation
/// or build tree: <prefix>/bin/tfm-compile and <prefix>/lib/<name>.
llvm::Expected<std::string> findRuntimeArchive(llvm::StringRef name);

/// `outputPath` opened for writing ("-": stdout), or why not.
llvm::Expected<std::unique_ptr<llvm::ToolOutputFile>>
openOutput(llvm::StringRef outputPath);

} // namespace mlir::tfm

#endif // TFM_TARGET_HOSTMODULE_H
