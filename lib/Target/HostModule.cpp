//===- HostModule.cpp - the LLVM module every target's library exports -----===//

#include "tfm/Target/HostModule.h"

#include "tfm/ABI/Attributes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::tfm;

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

/// The ABI's names and checks are in the manifest by now; LLVM IR has no
/// place for them (the translation warns about each one it meets).
static void stripABIAttributes(ModuleOp module) {
  module.walk([](LLVM::LLVMFuncOp func) {
    func->removeAttr(kChecksAttr);
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      func.removeArgAttr(i, kNameAttr);
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      func.removeResultAttr(i, kNameAttr);
  });
}

llvm::Expected<std::unique_ptr<llvm::Module>>
mlir::tfm::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                             llvm::TargetMachine &target, unsigned optLevel,
                             const Manifest &manifest) {
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
    if (llvm::Error error = addPackedEntryPoint(*llvmModule, entry))
      return std::move(error);

  auto optimize = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, &target);
  if (llvm::Error error = optimize(llvmModule.get()))
    return std::move(error);
  return llvmModule;
}
