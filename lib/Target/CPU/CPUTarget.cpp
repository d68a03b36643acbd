//===- CPUTarget.cpp - the CPU target --------------------------------------===//

#include "tfm/Target/CPU/CPUTarget.h"

#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Target/HostModule.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::tfm;

/// The vector width and register blocking of `target`: 16 f32 lanes and 8
/// register rows with AVX-512 (32 registers), 8 lanes and 4 rows with AVX
/// (16 registers), 4 lanes otherwise; bf16 dot products with AVX-512 BF16,
/// and AMX tiles for bf16 projections where the CPU also has AMX-BF16.
static void configureForTarget(TfmLowerToLLVMPipelineOptions &options,
                               const llvm::TargetMachine &target) {
  const llvm::MCSubtargetInfo *info = target.getMCSubtargetInfo();
  if (info->checkFeatures("+avx512f")) {
    options.vectorWidth = 16;
    options.registerRows = 8;
    options.bf16Dot = info->checkFeatures("+avx512bf16");
    options.amx = options.bf16Dot && info->checkFeatures("+amx-tile,+amx-bf16");
  } else if (info->checkFeatures("+avx")) {
    options.vectorWidth = 8;
    options.registerRows = 4;
  } else {
    options.vectorWidth = 4;
    options.registerRows = 4;
  }
}

namespace {

class CPUTarget final : public TargetBackend {
public:
  CPUTarget(std::unique_ptr<llvm::TargetMachine> machine,
            const TargetOptions &options)
      : machine(std::move(machine)), optLevel(options.optLevel) {
    pipeline.setAttentionTiling(options.attention);
#define TFM_PROJECTION_FUSION(field, name, description)                       \
  pipeline.field = options.fusions.field;
#include "tfm/Codegen/ProjectionFusions.def"
    configureForTarget(pipeline, *this->machine);
    pipeline.prepackWeights = options.prepackWeights;
    auto stage = [&](llvm::StringRef name,
                     void (*build)(OpPassManager &,
                                   const TfmLowerToLLVMPipelineOptions &),
                     llvm::StringRef holds) {
      loweringStages.push_back(
          {name.str(),
           [this, build](OpPassManager &pm) { build(pm, pipeline); },
           holds.str()});
    };
    stage("linalg", buildTfmToLinalgStage,
          "linalg, tensor, arith, math and scf on tensors; attention tiled "
          "into loops of tfm.online_attention steps");
    stage("vector", buildTfmCPUVectorStage,
          "the entry-point ABI and runtime checks; the attention steps as "
          "the CPU's tile products; run-time sized ops as parallel loops "
          "over static rows; static linalg ops as register blocks of vector "
          "ops in scf.for tile loops, on tensors");
    stage("bufferized", buildTfmBufferizationStage,
          "memrefs, tile scratch on the stack");
    stage("llvm", buildTfmToLLVMDialectStage,
          "the LLVM dialect, parallel tiles on OpenMP threads");
  }

  llvm::StringRef name() const override { return "cpu"; }

  llvm::StringRef device() const override { return "cpu"; }

  const std::vector<LoweringStage> &stages() const override {
    return loweringStages;
  }

  llvm::StringRef extension(Artifact artifact) const override {
    switch (artifact) {
    case Artifact::Library:
      return ".so";
    case Artifact::Object:
      return ".o";
    case Artifact::Assembly:
      return ".s";
    case Artifact::LLVMIR:
      return ".ll";
    case Artifact::PTX:
    case Artifact::EmulatedKernels:
      return ""; // kernels of another target
    }
    llvm_unreachable("unknown artifact");
  }

  llvm::Error emit(ModuleOp module, const Manifest &manifest,
                   Artifact artifact, llvm::StringRef outputPath) override;

private:
  std::unique_ptr<llvm::TargetMachine> machine;
  unsigned optLevel;
  TfmLowerToLLVMPipelineOptions pipeline;
  std::vector<LoweringStage> loweringStages;
};

} // namespace

llvm::Error CPUTarget::emit(ModuleOp module, const Manifest &manifest,
                            Artifact artifact, llvm::StringRef outputPath) {
  // The buffer cache (lib/Runtime/CPU); libomp runs the parallel tiles, and
  // the rpath finds it without setup.
  HostLinkOptions link;
  if (artifact == Artifact::Library) {
    auto runtime = findRuntimeArchive("libtfm_cpu_runtime.a");
    if (!runtime)
      return runtime.takeError();
    link.libraries.push_back(*runtime);
  }
  link.libraries.insert(link.libraries.end(),
                        {"-L/usr/lib/llvm-22/lib",
                         "-Wl,-rpath,/usr/lib/llvm-22/lib", "-lomp", "-lm"});
  return emitHostArtifact(module, manifest, *machine, optLevel, artifact,
                          outputPath, link);
}

llvm::Expected<std::unique_ptr<TargetBackend>>
mlir::tfm::createCPUTarget(const TargetOptions &options) {
  if (options.optLevel > 3)
    return llvm::createStringError("-O must be 0, 1, 2 or 3");
  if (!options.gpuArch.empty())
    return llvm::createStringError("--gpu-arch is an option of --target=cuda");
  if (!options.gpuMatmulTile.empty())
    return llvm::createStringError(
        "--gpu-matmul-tile is an option of --target=cuda");
  if (options.gpuAttentionWarpRows)
    return llvm::createStringError(
        "--gpu-attention-warp-rows is an option of --target=cuda");
  if (options.gpuAttentionKeys)
    return llvm::createStringError(
        "--gpu-attention-keys is an option of --target=cuda");
  if (options.gpuMultiprocessors)
    return llvm::createStringError(
        "--gpu-multiprocessors is an option of --target=cuda");
  if (options.gpuAttentionSplitKV.has_value())
    return llvm::createStringError(
        "--gpu-attention-split-kv is an option of --target=cuda");
  if (options.gpuFewRows >= 0)
    return llvm::createStringError(
        "--gpu-few-rows is an option of --target=cuda");
#define TFM_GPU_FLAG(field, flag, description)                                 \
  if (options.field)                                                           \
    return llvm::createStringError("--" flag " is an option of "               \
                                             "--target=cuda");
#include "tfm/Target/GPUFlags.def"
  auto machine = createHostTargetMachine(options.cpu, options.features,
                                         options.optLevel);
  if (!machine)
    return machine.takeError();
  return std::make_unique<CPUTarget>(std::move(*machine), options);
}
