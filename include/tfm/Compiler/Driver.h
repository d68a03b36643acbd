//===- Driver.h - tfm-compile's library -------------------------*- C++ -*-===//
//
// Lowers a tfm module stage by stage (the stages of
// tfm-lower-to-llvm-pipeline), translates it to LLVM IR for a target CPU,
// optimizes it and emits assembly, an object file or a shared library.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_COMPILER_DRIVER_H
#define TFM_COMPILER_DRIVER_H

#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Runtime/Manifest.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <set>

namespace llvm {
class LLVMContext;
class Module;
class raw_pwrite_stream;
} // namespace llvm

namespace mlir::tfm {

/// Named points in the lowering, in order.
enum class Stage { Tfm, Linalg, Vector, Bufferized, LLVMDialect };

/// "tfm", "linalg", "vector", "bufferized", "llvm".
llvm::StringRef stageName(Stage stage);
std::optional<Stage> parseStage(llvm::StringRef name);

struct LoweringOptions {
  /// Pass options of the pipeline (attention tiling and tile sizes).
  TfmLowerToLLVMPipelineOptions pipeline;
  /// Stages after which to print the module to `dumpStream`.
  std::set<Stage> dumpAfter;
  llvm::raw_ostream *dumpStream = nullptr;
};

/// Runs the stages after `first` up to and including `last` (the module is
/// at stage `first`).
LogicalResult lowerModule(ModuleOp module, Stage last,
                          const LoweringOptions &options,
                          Stage first = Stage::Tfm);

/// A target machine for x86-64 `cpu` ("" or "native": the host) with extra
/// `features` ("+avx2,-avx512f").
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(llvm::StringRef cpu, llvm::StringRef features,
                    unsigned optLevel);

/// Sets the vector width and register blocking of `options` for `target`:
/// 16 f32 lanes and 8 register rows with AVX-512 (32 registers), 8 lanes and
/// 4 rows with AVX (16 registers), 4 lanes otherwise.
void configureForTarget(TfmLowerToLLVMPipelineOptions &options,
                        const llvm::TargetMachine &target);

/// Translates an LLVM-dialect module, sets its triple and data layout from
/// `target`, embeds `manifest` as the exported string `tfm_manifest`, adds a
/// `tfm_entry_<name>(void **)` wrapper per entry point (tfm/Runtime/
/// Manifest.h), and optimizes at `optLevel`.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                  llvm::TargetMachine &target, unsigned optLevel,
                  const Manifest &manifest);

/// Writes assembly or an object file for `module`.
llvm::Error emitMachineCode(llvm::Module &module, llvm::TargetMachine &target,
                            llvm::CodeGenFileType type,
                            llvm::raw_pwrite_stream &out);

/// Links `objectPath` into the shared library `outputPath` with clang and
/// lld; on failure the error carries the exact command line.
llvm::Error linkSharedLibrary(llvm::StringRef objectPath,
                              llvm::StringRef outputPath);

} // namespace mlir::tfm

#endif // TFM_COMPILER_DRIVER_H
