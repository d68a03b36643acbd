//===- ExternDynamicSharedMemory.cpp - .extern .shared arrays -------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMNVVMEXTERNDYNAMICSHAREDMEMORYPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

constexpr uint64_t kAlignment = 1024;

struct TfmNVVMExternDynamicSharedMemoryPass
    : tfm::impl::TfmNVVMExternDynamicSharedMemoryPassBase<
          TfmNVVMExternDynamicSharedMemoryPass> {
  void runOnOperation() override {
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() !=
              static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) ||
          !array || array.getNumElements() != 0 ||
          global.getLinkage() != LLVM::Linkage::Internal)
        continue;
      global.setLinkage(LLVM::Linkage::External);
      // wgmma's swizzled operand tiles start on 1024-byte boundaries.
      if (global.getAlignment().value_or(0) < kAlignment)
        global.setAlignment(kAlignment);
      // A declaration: no initializer (region or value).
      global.removeValueAttr();
      global.getInitializerRegion().getBlocks().clear();
    }
  }
};

} // namespace
