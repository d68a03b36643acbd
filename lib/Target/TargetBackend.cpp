//===- TargetBackend.cpp - the targets tfm-compile knows -------------------===//

#include "tfm/Target/TargetBackend.h"

#include "tfm/Target/CPU/CPUTarget.h"
#include "tfm/Target/CUDA/CUDATarget.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tfm;

TargetBackend::~TargetBackend() = default;

llvm::ArrayRef<llvm::StringRef> mlir::tfm::targetNames() {
  static const llvm::StringRef names[] = {"cpu", "cuda"};
  return names;
}

llvm::Expected<std::unique_ptr<TargetBackend>>
mlir::tfm::createTargetBackend(llvm::StringRef name,
                               const TargetOptions &options) {
  if (name == "cpu")
    return createCPUTarget(options);
  if (name == "cuda")
    return createCUDATarget(options);
  return llvm::createStringError("unknown target '" + name + "' (expected " +
                                 llvm::join(targetNames(), ", ") + ")");
}
