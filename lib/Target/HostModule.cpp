//===- HostModule.cpp - the LLVM module every target's library exports ----===//

#include "tfm/Target/HostModule.h"

#include "tfm/ABI/Attributes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::tfm;

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
mlir::tfm::createHostTargetMachine(StringRef cpu, StringRef features,
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
  // Constructors (a cuda library's kernel-module registration) in
  // .init_array: the loader runs nothing in .ctors, which lld keeps apart.
  targetOptions.UseInitArray = true;
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

/// int32_t tfm_entry_<name>(void **descriptors) {
///   return _mlir_ciface_<name>(descriptors[0], ..., descriptors[n - 1]);
/// }
/// One signature for every entry point, whatever its argument count.
static llvm::Error addPackedEntryPoint(llvm::Module &module,
                                       const EntryPoint &entry,
                                       StringRef deviceStatus) {
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
  if (target->getReturnType()->isVoidTy()) {
    builder.CreateRetVoid();
    return llvm::Error::success();
  }
  if (!deviceStatus.empty()) {
    // The device's verdict on the call, if it failed there.
    llvm::FunctionCallee statusFunction = module.getOrInsertFunction(
        deviceStatus, llvm::FunctionType::get(builder.getInt32Ty(), false));
    llvm::Value *device = builder.CreateCall(statusFunction);
    llvm::Value *deviceFailed =
        builder.CreateICmpNE(device, builder.getInt32(0));
    status = builder.CreateSelect(deviceFailed, device, status);
  }
  builder.CreateRet(status);
  return llvm::Error::success();
}

/// The ABI's names and checks are in the manifest by now; LLVM IR has no
/// place for them (the translation warns about each one it meets).
static void stripABIAttributes(ModuleOp module) {
  module.walk([](LLVM::LLVMFuncOp func) {
    func->removeAttr(kChecksAttr);
    func->removeAttr(kInputCountAttr);
    func->removeAttr(kDroppedInputsAttr);
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      for (llvm::StringRef name :
           {kNameAttr, kPackedWeightAttr, kPackedScaleAttr,
            kPackedTransposedAttr, kPackedRowsAttr})
        func.removeArgAttr(i, name);
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      func.removeResultAttr(i, kNameAttr);
  });
}

llvm::Expected<std::unique_ptr<llvm::Module>>
mlir::tfm::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                             llvm::TargetMachine &target, unsigned optLevel,
                             const Manifest &manifest,
                             StringRef deviceStatus) {
  stripABIAttributes(module);
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
    if (llvm::Error error =
            addPackedEntryPoint(*llvmModule, entry, deviceStatus))
      return std::move(error);

  auto optimize = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, &target);
  if (llvm::Error error = optimize(llvmModule.get()))
    return std::move(error);
  return llvmModule;
}

llvm::Expected<std::unique_ptr<llvm::ToolOutputFile>>
mlir::tfm::openOutput(llvm::StringRef outputPath) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file =
      openOutputFile(outputPath, &error);
  if (!file)
    return llvm::createStringError(error);
  return file;
}

/// Writes assembly or an object file for `module`.
static llvm::Error emitMachineCode(llvm::Module &module,
                                   llvm::TargetMachine &target,
                                   llvm::CodeGenFileType type,
                                   StringRef outputPath) {
  auto file = openOutput(outputPath);
  if (!file)
    return file.takeError();
  llvm::legacy::PassManager codegen;
  if (target.addPassesToEmitFile(codegen, (*file)->os(), nullptr, type))
    return llvm::createStringError("the target cannot emit this file type");
  codegen.run(module);
  (*file)->keep();
  return llvm::Error::success();
}

llvm::Expected<std::string> mlir::tfm::findRuntimeArchive(StringRef name) {
  std::string executable = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&findRuntimeArchive));
  SmallString<256> path(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(executable)));
  llvm::sys::path::append(path, "lib", name);
  if (!llvm::sys::fs::exists(path))
    return llvm::createStringError(
        "cannot find tfm's runtime library " + name.str() + " at " +
        path.str().str() + " (it is built and installed with tfm-compile)");
  return path.str().str();
}

/// Links `objectPath` into the shared library `outputPath` with clang and
/// lld; on failure the error carries the exact command line.
static llvm::Error linkSharedLibrary(StringRef objectPath,
                                     StringRef outputPath,
                                     const HostLinkOptions &link) {
  const char *clang = "/usr/lib/llvm-22/bin/clang";
  SmallVector<StringRef> command{clang,      "-shared",  "-fuse-ld=lld",
                                 objectPath, "-o",       outputPath};
  for (const std::string &library : link.libraries)
    command.push_back(library);
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

llvm::Error mlir::tfm::emitHostArtifact(ModuleOp module,
                                        const Manifest &manifest,
                                        llvm::TargetMachine &target,
                                        unsigned optLevel, Artifact artifact,
                                        llvm::StringRef outputPath,
                                        const HostLinkOptions &link) {
  if (artifact == Artifact::Library && outputPath == "-")
    return llvm::createStringError(
        "a shared library cannot be written to stdout; use -o");
  llvm::LLVMContext context;
  auto llvmModule = translateToLLVMIR(module, context, target, optLevel,
                                      manifest, link.deviceStatus);
  if (!llvmModule)
    return llvmModule.takeError();
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
    return emitMachineCode(**llvmModule, target,
                           llvm::CodeGenFileType::AssemblyFile, outputPath);
  case Artifact::Object:
    return emitMachineCode(**llvmModule, target,
                           llvm::CodeGenFileType::ObjectFile, outputPath);
  case Artifact::Library:
    break;
  case Artifact::PTX:
  case Artifact::EmulatedKernels:
    return llvm::createStringError("not a host artifact");
  }
  // A shared library: an object in a temporary file, then clang + lld.
  llvm::SmallString<128> objectPath;
  if (auto code = llvm::sys::fs::createTemporaryFile("tfm", "o", objectPath))
    return llvm::createStringError("cannot create a temporary object file: " +
                                   code.message());
  llvm::FileRemover removeObject(objectPath);
  if (auto error = emitMachineCode(**llvmModule, target,
                                   llvm::CodeGenFileType::ObjectFile,
                                   objectPath))
    return error;
  return linkSharedLibrary(objectPath, outputPath, link);
}
