//===- CPUTarget.cpp - the CPU target --------------------------------------===//

#include "tfm/Target/CPU/CPUTarget.h"

#include "tfm/Pipelines/Pipelines.h"
#include "tfm/Target/HostModule.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::tfm;

/// A target machine for x86-64 `cpu` ("" or "native": the host) with extra
/// `features` ("+avx2,-avx512f").
static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(StringRef cpu, StringRef features, unsigned optLevel) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no target for " + triple.str() + ": " +
                                   error);
  std::string cpuName =
      cpu.empty() || cpu == "native" ? llvm::sys::getHostCPUName().str()
                                     : cpu.str();
  // Reject names the target does not know instead of silently falling back
  // to a generic CPU.
  std::unique_ptr<const llvm::MCSubtargetInfo> probe(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!probe || !probe->isCPUStringValid(cpuName))
    return llvm::createStringError("unknown --mcpu '" + cpuName +
                                   "' for " + triple.str());
  // Likewise for features: LLVM would only warn and ignore a misspelling.
  for (StringRef feature : llvm::split(features, ',')) {
    feature = feature.trim();
    if (feature.empty())
      continue;
    StringRef name = feature.drop_while([](char c) {
      return c == '+' || c == '-';
    });
    bool exists = llvm::any_of(
        probe->getAllProcessorFeatures(),
        [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; });
    if (!exists || name.size() + 1 != feature.size())
      return llvm::createStringError(
          "unknown --mattr feature '" + feature.str() +
          "' (expected +name or -name, e.g. -avx512f)");
  }
  std::string featureString = features.str();
  if (cpu.empty() || cpu == "native") {
    // The host's exact feature set, plus what was asked for.
    llvm::SubtargetFeatures host;
    for (auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      host.AddFeature(feature, enabled);
    featureString =
        host.getString() + (features.empty() ? "" : "," + features.str());
  }
  llvm::CodeGenOptLevel level =
      optLevel == 0   ? llvm::CodeGenOptLevel::None
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                      : llvm::CodeGenOptLevel::Aggressive;
  // A multiply and the add that consumes it may become one FMA (one
  // rounding, as clang's -ffp-contract=fast): the lane-wise dot products of
  // decode are vectorized to separate multiplies and adds.
  llvm::TargetOptions targetOptions;
  targetOptions.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, featureString, targetOptions,
      llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for " +
                                   cpuName);
  return machine;
}

/// Writes assembly or an object file for `module`.
static llvm::Error emitMachineCode(llvm::Module &module,
                                   llvm::TargetMachine &target,
                                   llvm::CodeGenFileType type,
                                   llvm::raw_pwrite_stream &out) {
  llvm::legacy::PassManager codegen;
  if (target.addPassesToEmitFile(codegen, out, nullptr, type))
    return llvm::createStringError("the target cannot emit this file type");
  codegen.run(module);
  return llvm::Error::success();
}

/// Links `objectPath` into the shared library `outputPath` with clang and
/// lld; on failure the error carries the exact command line.
static llvm::Error linkSharedLibrary(StringRef objectPath,
                                     StringRef outputPath) {
  const char *clang = "/usr/lib/llvm-22/bin/clang";
  // libomp runs the parallel tiles; the rpath finds it without setup.
  SmallVector<StringRef> command{clang,
                                 "-shared",
                                 "-fuse-ld=lld",
                                 objectPath,
                                 "-o",
                                 outputPath,
                                 "-L/usr/lib/llvm-22/lib",
                                 "-Wl,-rpath,/usr/lib/llvm-22/lib",
                                 "-lomp",
                                 "-lm"};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(clang, command, std::nullopt, {}, 0,
                                         0, &message);
  if (status == 0)
    return llvm::Error::success();
  std::string line;
  for (StringRef word : command)
    line += (line.empty() ? "" : " ") + word.str();
  return llvm::createStringError(
      "linking failed (exit " + std::to_string(status) + ")" +
      (message.empty() ? "" : ": " + message) + "\n  command: " + line);
}

/// The vector width and register blocking of `target`: 16 f32 lanes and 8
/// register rows with AVX-512 (32 registers), 8 lanes and 4 rows with AVX
/// (16 registers), 4 lanes otherwise.
static void configureForTarget(TfmLowerToLLVMPipelineOptions &options,
                               const llvm::TargetMachine &target) {
  const llvm::MCSubtargetInfo *info = target.getMCSubtargetInfo();
  if (info->checkFeatures("+avx512f")) {
    options.vectorWidth = 16;
    options.registerRows = 8;
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
    configureForTarget(pipeline, *this->machine);
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
          "the attention steps as the CPU's tile products; static linalg ops "
          "as register blocks of vector ops in scf.for tile loops, on "
          "tensors");
    stage("bufferized", buildTfmBufferizationStage,
          "the entry-point ABI and runtime checks; memrefs, tile scratch on "
          "the stack");
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

/// `outputPath` opened for writing, or why not.
llvm::Expected<std::unique_ptr<llvm::ToolOutputFile>>
openOutput(llvm::StringRef outputPath) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file =
      openOutputFile(outputPath, &error);
  if (!file)
    return llvm::createStringError(error);
  return file;
}

} // namespace

llvm::Error CPUTarget::emit(ModuleOp module, const Manifest &manifest,
                            Artifact artifact, llvm::StringRef outputPath) {
  if (artifact == Artifact::Library && outputPath == "-")
    return llvm::createStringError(
        "a shared library cannot be written to stdout; use -o");
  llvm::LLVMContext context;
  auto llvmModule =
      translateToLLVMIR(module, context, *machine, optLevel, manifest);
  if (!llvmModule)
    return llvmModule.takeError();

  auto write = [&](llvm::StringRef path, llvm::CodeGenFileType type)
      -> llvm::Error {
    auto file = openOutput(path);
    if (!file)
      return file.takeError();
    if (auto error = emitMachineCode(**llvmModule, *machine, type,
                                     (*file)->os()))
      return error;
    (*file)->keep();
    return llvm::Error::success();
  };
  switch (artifact) {
  case Artifact::LLVMIR: {
    auto file = openOutput(outputPath);
    if (!file)
      return file.takeError();
    (*llvmModule)->print((*file)->os(), nullptr);
    (*file)->keep();
    return llvm::Error::success();
  }
  case Artifact::Assembly:
    return write(outputPath, llvm::CodeGenFileType::AssemblyFile);
  case Artifact::Object:
    return write(outputPath, llvm::CodeGenFileType::ObjectFile);
  case Artifact::Library:
    break;
  }
  // A shared library: an object in a temporary file, then clang + lld.
  llvm::SmallString<128> objectPath;
  if (auto code = llvm::sys::fs::createTemporaryFile("tfm", "o", objectPath))
    return llvm::createStringError("cannot create a temporary object file: " +
                                   code.message());
  llvm::FileRemover removeObject(objectPath);
  if (auto error = write(objectPath, llvm::CodeGenFileType::ObjectFile))
    return error;
  return linkSharedLibrary(objectPath, outputPath);
}

llvm::Expected<std::unique_ptr<TargetBackend>>
mlir::tfm::createCPUTarget(const TargetOptions &options) {
  if (options.optLevel > 3)
    return llvm::createStringError("-O must be 0, 1, 2 or 3");
  auto machine =
      createTargetMachine(options.cpu, options.features, options.optLevel);
  if (!machine)
    return machine.takeError();
  return std::make_unique<CPUTarget>(std::move(*machine), options);
}
