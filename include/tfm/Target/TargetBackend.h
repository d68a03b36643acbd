//===- TargetBackend.h - one code generation target -------------*- C++ -*-===//
//
// A target lowers tfm ops on tensors, stage by stage, to the LLVM dialect of
// the code it runs, and emits artifacts from there. The driver
// (tfm/Compiler/Driver.h) and tfm-compile know targets only through this
// interface: they run a target's stages, dump the IR between them and ask it
// for an artifact. lib/Target/CPU is the CPU target; a GPU target sits
// beside it with its own stages and artifacts.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_TARGET_TARGETBACKEND_H
#define TFM_TARGET_TARGETBACKEND_H

#include "tfm/Codegen/ProjectionFusions.h"
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.h"
#include "tfm/Runtime/Manifest.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;

namespace tfm {

/// A named point in the lowering, the passes that reach it from the stage
/// before, and what the IR holds there (for docs/Stages.md).
struct LoweringStage {
  std::string name;
  std::function<void(OpPassManager &)> build;
  std::string holds;
};

/// What a target emits from the IR of its last stage.
/// Library, Object, Assembly and LLVMIR are the host code's (a shared
/// library, its object file, its assembly, its optimized LLVM IR); PTX is
/// the kernels' of a GPU target; EmulatedKernels are a GPU target's kernels
/// compiled for the host, for the tests' GPU emulator.
enum class Artifact { Library, Object, Assembly, LLVMIR, PTX, EmulatedKernels };

/// How a target is asked for: the same fields for every target.
struct TargetOptions {
  /// The host processor ("" or "native": the host).
  std::string cpu;
  /// Host features to add or remove, "+name,-name".
  std::string features;
  /// A GPU target's architecture ("sm_90a"; "": the target's default).
  std::string gpuArch;
  /// A GPU target: the projection kernels' tiling (block rows, block
  /// columns, step, stages, warp rows, warp columns); empty: chosen per
  /// projection.
  std::vector<int64_t> gpuMatmulTile;
  /// A GPU target: query rows per warp of the attention kernel (16 or 32);
  /// 0: the default.
  int64_t gpuAttentionWarpRows = 0;
  /// A GPU target: keys of a tile of the attention kernel (64, or 128 with
  /// warpgroup MMA); 0: the default.
  int64_t gpuAttentionKeys = 0;
  /// A GPU target: persistent grids (gpuMatmulPersistent) sized for this
  /// many multiprocessors; 0: the device's count, asked at run time.
  int64_t gpuMultiprocessors = 0;
  /// A GPU target: projections of at most this many rows on the few-rows
  /// kernel (0 to 16, 0: none); -1: the default.
  int64_t gpuFewRows = -1;
  /// A GPU target: decode attention split among blocks by key range
  /// (FlashDecoding); unset: the target's default (on).
  std::optional<bool> gpuAttentionSplitKV;
  /// A GPU target's on/off kernel choices (GPUFlags.def: what each does).
#define TFM_GPU_FLAG(field, flag, description) bool field = false;
#include "tfm/Target/GPUFlags.def"
  /// LLVM optimization level, 0-3.
  unsigned optLevel = 3;
  /// Target-independent: how the linalg stage of every target lowers
  /// attention (tiled, with which tiles, or the reference lowering).
  AttentionTilingOptions attention;
  /// The CPU: which projection fusion passes run (all by default).
  ProjectionFusions fusions;
  /// The CPU: f32 weights packed once by a prepare_weights entry point
  /// rather than in every call (the default; false: the entry points take
  /// the weights themselves and pack them in every call).
  bool prepackWeights = true;
};

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// The name tfm-compile's --target takes.
  virtual llvm::StringRef name() const = 0;

  /// Where the compiled kernels run: the manifest's device ("cpu"), which
  /// tells a host (tfm-run, Python) whether it can run the library.
  virtual llvm::StringRef device() const = 0;

  /// The stages after the input stage "tfm", in order. Every target has
  /// "linalg" (target-independent: tfm ops lowered to linalg on tensors) and
  /// "bufferized" (the entry-point ABI and runtime checks in place); the
  /// last stage is the IR that `emit` takes.
  virtual const std::vector<LoweringStage> &stages() const = 0;

  /// The file name extension of `artifact` (".so"); "" if the target does
  /// not emit it.
  virtual llvm::StringRef extension(Artifact artifact) const = 0;

  /// The stage whose IR `emit` takes for `artifact`: the last, unless the
  /// artifact is made from an earlier one.
  virtual llvm::StringRef artifactStage(Artifact artifact) const {
    (void)artifact;
    return stages().back().name;
  }

  /// Writes `artifact` for `module` (at its artifactStage), whose entry
  /// points `manifest` describes, to `outputPath` ("-": stdout).
  virtual llvm::Error emit(ModuleOp module, const Manifest &manifest,
                           Artifact artifact, llvm::StringRef outputPath) = 0;
};

/// The names of the targets, for --target.
llvm::ArrayRef<llvm::StringRef> targetNames();

/// The target called `name`, or why it cannot be had (an unknown name, a
/// processor or feature the target does not know).
llvm::Expected<std::unique_ptr<TargetBackend>>
createTargetBackend(llvm::StringRef name, const TargetOptions &options);

} // namespace tfm
} // namespace mlir

#endif // TFM_TARGET_TARGETBACKEND_H
