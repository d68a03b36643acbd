//===- CUDATarget.cpp - the CUDA target -----------------------------------===//

#include "tfm/Target/CUDA/CUDATarget.h"

#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Target/HostModule.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::tfm;

/// The architectures tfm compiles for, and the PTX ISA each needs.
static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral>
    kArchitectures[] = {{"sm_80", "+ptx80"},
                        {"sm_86", "+ptx80"},
                        {"sm_89", "+ptx80"},
                        {"sm_90", "+ptx80"},
                        {"sm_90a", "+ptx80"}};

/// A CUDA toolkit program (ptxas, fatbinary): in $CUDA_HOME/bin,
/// /usr/local/cuda/bin or on PATH; "" if none.
static std::string findCUDAProgram(StringRef name) {
  SmallVector<std::string> directories;
  if (const char *home = std::getenv("CUDA_HOME"))
    directories.push_back((Twine(home) + "/bin").str());
  directories.push_back("/usr/local/cuda/bin");
  SmallVector<StringRef> paths(directories.begin(), directories.end());
  if (auto found = llvm::sys::findProgramByName(name, paths))
    return *found;
  if (auto found = llvm::sys::findProgramByName(name))
    return *found;
  return "";
}

/// The CUDA toolkit whose libdevice the kernels link: $CUDA_HOME, the one
/// holding the ptxas found, or /usr/local/cuda; "" if none has libdevice.
static std::string findCUDAToolkit() {
  SmallVector<std::string> candidates;
  if (const char *home = std::getenv("CUDA_HOME"))
    candidates.push_back(home);
  if (std::string ptxas = findCUDAProgram("ptxas"); !ptxas.empty())
    candidates.push_back(llvm::sys::path::parent_path(
                             llvm::sys::path::parent_path(ptxas))
                             .str());
  candidates.push_back("/usr/local/cuda");
  for (const std::string &candidate : candidates)
    if (llvm::sys::fs::exists(candidate + "/nvvm/libdevice/libdevice.10.bc"))
      return candidate;
  return "";
}

/// Runs `command`; on failure the error has its output and command line.
static llvm::Error run(ArrayRef<std::string> command) {
  llvm::SmallString<128> logPath;
  if (auto code = llvm::sys::fs::createTemporaryFile("tfm-cuda", "log",
                                                     logPath))
    return llvm::createStringError("cannot create a temporary file: " +
                                   code.message());
  llvm::FileRemover removeLog(logPath);
  SmallVector<StringRef> arguments(command.begin(), command.end());
  std::optional<StringRef> redirects[] = {std::nullopt, logPath.str(),
                                          logPath.str()};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(command.front(), arguments,
                                         std::nullopt, redirects, 0, 0,
                                         &message);
  if (status == 0)
    return llvm::Error::success();
  std::string output;
  if (auto log = llvm::MemoryBuffer::getFile(logPath))
    output = (*log)->getBuffer().trim().str();
  return llvm::createStringError(
      llvm::sys::path::filename(command.front()).str() + " failed (exit " +
      std::to_string(status) + ")" + (message.empty() ? "" : ": " + message) +
      (output.empty() ? "" : "\n" + output) +
      "\n  command: " + llvm::join(command, " "));
}

namespace {

/// The flag of the warpgroup attention form the options name (the most
/// specific, when several build on one another), or "" if none.
StringRef warpgroupFormFlag(const TargetOptions &options) {
  return options.gpuAttentionPingpong ? "--gpu-attention-pingpong"
         : options.gpuAttentionWarpSpecialized
             ? "--gpu-attention-warp-specialized"
         : options.gpuAttentionWgmmaOverlap ? "--gpu-attention-wgmma-overlap"
         : options.gpuAttentionTma          ? "--gpu-attention-tma"
         : options.gpuAttentionWgmma        ? "--gpu-attention-wgmma"
                                            : "";
}

/// Whether the options choose the attention kernel's form: one of the
/// warpgroup forms, mma.sync, or mma.sync's 32 rows a warp.
bool namesAttentionForm(const TargetOptions &options) {
  return !warpgroupFormFlag(options).empty() || options.gpuAttentionMmaSync ||
         options.gpuAttentionWarpRows != 0;
}

class CUDATarget final : public TargetBackend {
public:
  CUDATarget(std::unique_ptr<llvm::TargetMachine> host, StringRef chip,
             StringRef features, const TargetOptions &options)
      : host(std::move(host)), optLevel(options.optLevel) {
    pipeline.cudaToolkit = findCUDAToolkit();
    pipeline.flashAttention = !options.attention.referenceAttention;
    pipeline.matmulTile = options.gpuMatmulTile;
    if (options.gpuAttentionWarpRows)
      pipeline.attentionWarpRows = options.gpuAttentionWarpRows;
    // Split-KV decode ran at 1.0-20x the kernel of a block per query head
    // on an H200, and a decode step 25-32% faster (docs/PERFORMANCE.md).
    pipeline.attentionSplitKV = options.gpuAttentionSplitKV.value_or(true);
    pipeline.mergeLaunches = !options.gpuSeparateLaunches;
    // The norms' own kernels: with the few-rows kernels computing them, a
    // decode step on an H200 took 4% longer at B = 1 and 18% at B = 8, as
    // every block recomputed the norm's sums (docs/PERFORMANCE.md).
    pipeline.matmulNormPrologues = options.gpuNormPrologues;
    // On sm_90a, unless a form is named, attention is FlashAttention-3's
    // ping-pong kernel with 128-key tiles: on an H200 it ran at 0.76-1.72x
    // PyTorch's flash backend where mma.sync ran at 0.57-0.86x
    // (docs/PERFORMANCE.md).
    bool pingpongByDefault = chip == "sm_90a" && !namesAttentionForm(options);
    if (pingpongByDefault)
      pipeline.attentionKeys = 128;
    if (options.gpuAttentionKeys)
      pipeline.attentionKeys = options.gpuAttentionKeys;
    bool pingpong = options.gpuAttentionPingpong || pingpongByDefault;
    // Each attention form implies the ones it builds on.
    bool specialized = options.gpuAttentionWarpSpecialized || pingpong;
    pipeline.attentionWarpgroupMma = options.gpuAttentionWgmma ||
                                     options.gpuAttentionWgmmaOverlap ||
                                     options.gpuAttentionTma || specialized;
    pipeline.attentionTma = options.gpuAttentionTma || specialized;
    pipeline.attentionWarpSpecialized = specialized;
    pipeline.attentionWarpgroupOverlap =
        options.gpuAttentionWgmmaOverlap || pingpong;
    pipeline.attentionPingpong = pingpong;
    // Each projection form implies the ones it builds on.
    bool matmulSpecialized =
        options.gpuMatmulWarpSpecialized || options.gpuMatmulPersistent;
    pipeline.matmulTma = options.gpuMatmulTma || matmulSpecialized;
    pipeline.matmulWarpSpecialized = matmulSpecialized;
    pipeline.matmulPersistent = options.gpuMatmulPersistent;
    pipeline.matmulMultiprocessors = options.gpuMultiprocessors;
    if (options.gpuFewRows >= 0)
      pipeline.matmulFewRows = options.gpuFewRows;
    pipeline.chip = chip.str();
    pipeline.features = features.str();
    pipeline.optLevel = optLevel;
    auto stage = [&](StringRef name,
                     void (*build)(OpPassManager &,
                                   const TfmLowerToNVVMPipelineOptions &),
                     StringRef holds) {
      loweringStages.push_back(
          {name.str(),
           [this, build](OpPassManager &pm) { build(pm, pipeline); },
           holds.str()});
    };
    stage("linalg", buildTfmCUDALinalgStage,
          "linalg, tensor, arith, math and scf on tensors; bf16/f16 "
          "attention as tensor-core kernels (gpu.launch), other attention "
          "through the reference lowering");
    stage("bufferized", buildTfmCUDABufferizationStage,
          "the entry-point ABI and runtime checks; memrefs");
    stage("kernels", buildTfmCUDAKernelStage,
          "host functions that launch GPU kernels (one gpu.module) on one "
          "stream per call, buffers in device memory");
    stage("nvvm", buildTfmToNVVMStage,
          "host code in the LLVM dialect calling the mgpu* runtime; the "
          "kernels as PTX in a gpu.binary");
  }

  StringRef name() const override { return "cuda"; }

  StringRef device() const override { return "cuda"; }

  const std::vector<LoweringStage> &stages() const override {
    return loweringStages;
  }

  StringRef extension(Artifact artifact) const override {
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
      return ".ptx";
    case Artifact::EmulatedKernels:
      return ".kernels.so";
    }
    llvm_unreachable("unknown artifact");
  }

  StringRef artifactStage(Artifact artifact) const override {
    if (artifact == Artifact::EmulatedKernels)
      return "kernels";
    return loweringStages.back().name;
  }

  llvm::Error emit(ModuleOp module, const Manifest &manifest,
                   Artifact artifact, StringRef outputPath) override;

private:
  /// Replaces each PTX object of `module` by a fatbin of its cubin and its
  /// PTX (a cubin alone without fatbinary); keeps PTX, with a warning,
  /// where there is no ptxas.
  llvm::Error assembleKernels(ModuleOp module);

  std::unique_ptr<llvm::TargetMachine> host;
  unsigned optLevel;
  TfmLowerToNVVMPipelineOptions pipeline;
  std::vector<LoweringStage> loweringStages;
};

} // namespace

/// The PTX objects of `module`'s gpu.binary ops.
static SmallVector<std::pair<gpu::BinaryOp, unsigned>>
ptxObjects(ModuleOp module) {
  SmallVector<std::pair<gpu::BinaryOp, unsigned>> objects;
  module.walk([&](gpu::BinaryOp binary) {
    for (auto [index, object] :
         llvm::enumerate(binary.getObjects().getAsRange<gpu::ObjectAttr>()))
      if (object.getFormat() == gpu::CompilationTarget::Assembly)
        objects.push_back({binary, unsigned(index)});
  });
  return objects;
}

llvm::Error CUDATarget::assembleKernels(ModuleOp module) {
  auto objects = ptxObjects(module);
  if (objects.empty())
    return llvm::Error::success();
  std::string ptxas = findCUDAProgram("ptxas");
  if (ptxas.empty()) {
    llvm::WithColor::warning(llvm::errs(), "tfm-compile")
        << "ptxas not found ($CUDA_HOME/bin, /usr/local/cuda/bin, PATH): "
           "the library holds PTX only, which the CUDA driver compiles "
           "when the kernels are first loaded\n";
    return llvm::Error::success();
  }
  std::string fatbinary = findCUDAProgram("fatbinary");
  StringRef chip = pipeline.chip.getValue();
  std::string sm = chip.drop_front(3).str(); // "90a"
  for (auto [binary, index] : objects) {
    SmallVector<Attribute> list(binary.getObjects().getValue());
    auto object = cast<gpu::ObjectAttr>(list[index]);
    llvm::SmallString<128> ptxPath, cubinPath, fatbinPath;
    for (auto [path, extension] :
         {std::pair{&ptxPath, "ptx"}, {&cubinPath, "cubin"},
          {&fatbinPath, "fatbin"}})
      if (auto code = llvm::sys::fs::createTemporaryFile("tfm-kernels",
                                                         extension, *path))
        return llvm::createStringError("cannot create a temporary file: " +
                                       code.message());
    llvm::FileRemover removePtx(ptxPath), removeCubin(cubinPath),
        removeFatbin(fatbinPath);
    {
      auto file = openOutput(ptxPath);
      if (!file)
        return file.takeError();
      (*file)->os() << object.getObject().getValue();
      (*file)->keep();
    }
    if (auto error = run({ptxas, "-arch=" + chip.str(),
                          "-O" + std::to_string(optLevel),
                          ptxPath.str().str(), "-o", cubinPath.str().str()}))
      return error;
    gpu::CompilationTarget format = gpu::CompilationTarget::Binary;
    StringRef image = cubinPath;
    if (!fatbinary.empty()) {
      // The cubin, and the PTX for the driver to compile on newer GPUs.
      if (auto error = run({fatbinary, "-64",
                            "--create=" + fatbinPath.str().str(),
                            "--image3=kind=elf,sm=" + sm +
                                ",file=" + cubinPath.str().str(),
                            "--image3=kind=ptx,sm=" + sm +
                                ",file=" + ptxPath.str().str()}))
        return error;
      format = gpu::CompilationTarget::Fatbin;
      image = fatbinPath;
    }
    auto bytes = llvm::MemoryBuffer::getFile(image, /*IsText=*/false);
    if (!bytes)
      return llvm::createStringError("cannot read " + image.str() + ": " +
                                     bytes.getError().message());
    list[index] = gpu::ObjectAttr::get(
        module.getContext(), object.getTarget(), format,
        StringAttr::get(module.getContext(), (*bytes)->getBuffer()),
        object.getProperties(), object.getKernels());
    binary.setObjectsAttr(ArrayAttr::get(module.getContext(), list));
  }
  return llvm::Error::success();
}

llvm::Error CUDATarget::emit(ModuleOp module, const Manifest &manifest,
                             Artifact artifact, StringRef outputPath) {
  if (artifact == Artifact::EmulatedKernels) {
    // The kernels stage's kernels as host code calling the emulator
    // (tfm-gpu-emulate-kernels), linked with their calls unresolved: the
    // emulator's driver provides them.
    PassManager pm(module.getContext());
    buildTfmGPUEmulationPipeline(pm);
    if (failed(pm.run(module)))
      return llvm::createStringError("the kernels cannot be emulated");
    Manifest kernelsOnly;
    kernelsOnly.device = "cuda-emulated-kernels";
    return emitHostArtifact(module, kernelsOnly, *host, optLevel,
                            Artifact::Library, outputPath, HostLinkOptions{});
  }
  if (pipeline.cudaToolkit.empty())
    return llvm::createStringError(
        "no CUDA toolkit found ($CUDA_HOME, the ptxas on PATH, "
        "/usr/local/cuda): the kernels need its libdevice "
        "(nvvm/libdevice/libdevice.10.bc) for their math functions");
  if (artifact == Artifact::PTX) {
    auto objects = ptxObjects(module);
    if (objects.empty())
      return llvm::createStringError("the module has no kernels");
    auto file = openOutput(outputPath);
    if (!file)
      return file.takeError();
    for (auto [binary, index] : objects)
      (*file)->os() << cast<gpu::ObjectAttr>(binary.getObjects()[index])
                           .getObject()
                           .getValue();
    (*file)->keep();
    return llvm::Error::success();
  }
  if (auto error = assembleKernels(module))
    return error;
  HostLinkOptions link;
  link.deviceStatus = "tfmCudaTakeStatus";
  if (artifact == Artifact::Library) {
    auto runtime = findRuntimeArchive("libtfm_cuda_runtime.a");
    if (!runtime)
      return runtime.takeError();
    link.libraries = {*runtime, "-lstdc++", "-ldl"};
  }
  return emitHostArtifact(module, manifest, *host, optLevel, artifact,
                          outputPath, link);
}

llvm::Expected<std::unique_ptr<TargetBackend>>
mlir::tfm::createCUDATarget(const TargetOptions &options) {
  if (options.optLevel > 3)
    return llvm::createStringError("-O must be 0, 1, 2 or 3");
  // The GPU's attention kernels choose their own tiles: the CPU tiling's
  // options would be silently ignored. --reference-attention selects the
  // reference lowering for every attention.
  AttentionTilingOptions defaults;
#define TFM_ATTENTION_TILING_OPTION(field, flag, value, description)          \
  if (options.attention.field != defaults.field)                              \
    return llvm::createStringError(                                           \
        "--" flag " applies to --target=cpu: the cuda target's attention "    \
        "kernels choose their own tiles");
#include "tfm/Dialect/Tfm/Transforms/AttentionTilingOptions.def"
  if (options.gpuAttentionWarpRows != 0 &&
      options.gpuAttentionWarpRows != 16 && options.gpuAttentionWarpRows != 32)
    return llvm::createStringError(
        "--gpu-attention-warp-rows must be 16 or 32, not " +
        std::to_string(options.gpuAttentionWarpRows));
  if (options.gpuAttentionKeys != 0 && options.gpuAttentionKeys != 64 &&
      options.gpuAttentionKeys != 128)
    return llvm::createStringError(
        "--gpu-attention-keys must be 64 or 128, not " +
        std::to_string(options.gpuAttentionKeys));
  if (options.gpuMultiprocessors < 0)
    return llvm::createStringError(
        "--gpu-multiprocessors must be positive (or 0: the device's "
        "count), not " +
        std::to_string(options.gpuMultiprocessors));
  if (options.gpuMultiprocessors && !options.gpuMatmulPersistent)
    return llvm::createStringError(
        "--gpu-multiprocessors sizes persistent grids: it needs "
        "--gpu-matmul-persistent");
  if (options.gpuFewRows < -1 || options.gpuFewRows > 16)
    return llvm::createStringError(
        "--gpu-few-rows must be in [0, 16], not " +
        std::to_string(options.gpuFewRows));
  StringRef chip = options.gpuArch.empty() ? StringRef("sm_80")
                                           : StringRef(options.gpuArch);
  const auto *architecture =
      llvm::find_if(kArchitectures, [&](const auto &known) {
        return known.first == chip;
      });
  StringRef wgmmaFlag = warpgroupFormFlag(options);
  bool wgmma = !wgmmaFlag.empty();

  if (wgmma && options.gpuAttentionMmaSync)
    return llvm::createStringError(wgmmaFlag +
                                   " and --gpu-attention-mma-sync name two "
                                   "attention kernels");
  if (wgmma && chip != "sm_90a")
    return llvm::createStringError(wgmmaFlag +
                                   " needs --gpu-arch=sm_90a (wgmma), not " +
                                   chip);
  if (wgmma && options.gpuAttentionWarpRows == 32)
    return llvm::createStringError(
        wgmmaFlag + " takes 16 rows a warp (a warpgroup's 64 rows), not "
                    "--gpu-attention-warp-rows=32");
  if (options.gpuAttentionKeys == 128 && !wgmma &&
      (chip != "sm_90a" || namesAttentionForm(options)))
    return llvm::createStringError(
        "--gpu-attention-keys=128 takes the warpgroup MMA kernel "
        "(--gpu-attention-wgmma or a form built on it): mma.sync's "
        "registers hold 64 keys of scores");
  if ((options.gpuMatmulTma || options.gpuMatmulWarpSpecialized ||
       options.gpuMatmulPersistent) &&
      chip != "sm_90a")
    return llvm::createStringError(
        (options.gpuMatmulPersistent        ? "--gpu-matmul-persistent"
         : options.gpuMatmulWarpSpecialized ? "--gpu-matmul-warp-specialized"
                                            : "--gpu-matmul-tma") +
        std::string(" needs --gpu-arch=sm_90a (TMA feeds wgmma), not ") +
        chip.str());
  if (architecture == std::end(kArchitectures)) {
    SmallVector<StringRef> names;
    for (const auto &known : kArchitectures)
      names.push_back(known.first);
    return llvm::createStringError("unknown --gpu-arch '" + chip +
                                   "' (expected " + llvm::join(names, ", ") +
                                   ")");
  }
  auto host = createHostTargetMachine(options.cpu, options.features,
                                      options.optLevel);
  if (!host)
    return host.takeError();
  return std::make_unique<CUDATarget>(std::move(*host), chip,
                                      architecture->second, options);
}
