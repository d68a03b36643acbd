//===- Driver.cpp - tfm-compile's library ----------------------------------===//

#include "tfm/Compiler/Driver.h"

#include "tfm/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::tfm;

StringRef mlir::tfm::stageName(Stage stage) {
  switch (stage) {
  case Stage::Tfm:
    return "tfm";
  case Stage::Linalg:
    return "linalg";
  case Stage::Vector:
    return "vector";
  case Stage::Bufferized:
    return "bufferized";
  case Stage::LLVMDialect:
    return "llvm";
  }
  llvm_unreachable("unknown stage");
}

std::optional<Stage> mlir::tfm::parseStage(StringRef name) {
  return llvm::StringSwitch<std::optional<Stage>>(name)
      .Case("tfm", Stage::Tfm)
      .Case("linalg", Stage::Linalg)
      .Case("vector", Stage::Vector)
      .Case("bufferized", Stage::Bufferized)
      .Case("llvm", Stage::LLVMDialect)
      .Default(std::nullopt);
}

LogicalResult mlir::tfm::lowerModule(ModuleOp module, Stage last,
                                     const LoweringOptions &options,
                                     Stage first) {
  auto dump = [&](Stage stage) {
    if (options.dumpStream && options.dumpAfter.count(stage))
      *options.dumpStream << "// ----- IR after stage '" << stageName(stage)
                          << "' -----\n"
                          << module << "\n";
  };
  if (first == Stage::Tfm)
    dump(Stage::Tfm);
  const TfmLowerToLLVMPipelineOptions &pipelineOptions = options.pipeline;
  for (Stage stage : {Stage::Linalg, Stage::Vector, Stage::Bufferized,
                      Stage::LLVMDialect}) {
    if (stage <= first)
      continue;
    if (stage > last)
      break;
    PassManager pm(module.getContext());
    switch (stage) {
    case Stage::Linalg:
      buildTfmToLinalgStage(pm, pipelineOptions);
      break;
    case Stage::Vector:
      buildTfmCPUVectorStage(pm, pipelineOptions);
      break;
    case Stage::Bufferized:
      buildTfmBufferizationStage(pm, pipelineOptions);
      break;
    default:
      buildTfmToLLVMDialectStage(pm, pipelineOptions);
      break;
    }
    if (failed(pm.run(module)))
      return module.emitError() << "lowering failed in stage '"
                                << stageName(stage) << "'";
    dump(stage);
  }
  return success();
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
mlir::tfm::createTargetMachine(StringRef cpu, StringRef features,
                               unsigned optLevel) {
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

/// int32_t tfm_entry_<name>(void **descriptors) {
///   return _mlir_ciface_<name>(descriptors[0], ..., descriptors[n - 1]);
/// }
/// One signature for every entry point, whatever its argument count.
static llvm::Error addPackedEntryPoint(llvm::Module &module,
                                       const EntryPoint &entry) {
  llvm::Function *target = module.getFunction("_mlir_ciface_" + entry.name);
  if (!target)
    return llvm::createStringError("entry point '" + entry.name +
                                   "' has no C interface wrapper");
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *pointer = llvm::PointerType::getUnqual(context);
  auto *wrapper = llvm::Function::Create(
      llvm::FunctionType::get(target->getReturnType(), {pointer}, false),
      llvm::GlobalValue::ExternalLinkage, "tfm_entry_" + entry.name, module);
  llvm::IRBuilder<> builder(
      llvm::BasicBlock::Create(context, "entry", wrapper));
  SmallVector<llvm::Value *> arguments;
  for (unsigned i = 0, e = target->arg_size(); i < e; ++i)
    arguments.push_back(builder.CreateLoad(
        pointer, builder.CreateConstGEP1_64(pointer, wrapper->getArg(0), i)));
  llvm::Value *status = builder.CreateCall(target, arguments);
  if (target->getReturnType()->isVoidTy())
    builder.CreateRetVoid();
  else
    builder.CreateRet(status);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::Module>>
mlir::tfm::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                             llvm::TargetMachine &target, unsigned optLevel,
                             const Manifest &manifest) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "tfm");
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(target.getTargetTriple());
  llvmModule->setDataLayout(target.createDataLayout());

  llvm::Constant *text = llvm::ConstantDataArray::getString(
      context, formatManifest(manifest), /*AddNull=*/true);
  new llvm::GlobalVariable(*llvmModule, text->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, text,
                           "tfm_manifest");
  for (const EntryPoint &entry : manifest.entryPoints)
    if (llvm::Error error = addPackedEntryPoint(*llvmModule, entry))
      return std::move(error);

  auto optimize = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, &target);
  if (llvm::Error error = optimize(llvmModule.get()))
    return std::move(error);
  return llvmModule;
}

llvm::Error mlir::tfm::emitMachineCode(llvm::Module &module,
                                       llvm::TargetMachine &target,
                                       llvm::CodeGenFileType type,
                                       llvm::raw_pwrite_stream &out) {
  llvm::legacy::PassManager codegen;
  if (target.addPassesToEmitFile(codegen, out, nullptr, type))
    return llvm::createStringError("the target cannot emit this file type");
  codegen.run(module);
  return llvm::Error::success();
}

llvm::Error mlir::tfm::linkSharedLibrary(StringRef objectPath,
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

void mlir::tfm::configureForTarget(TfmLowerToLLVMPipelineOptions &options,
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
