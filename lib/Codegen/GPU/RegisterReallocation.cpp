//===- RegisterReallocation.cpp - kernels that move registers -------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMNVVMREGISTERREALLOCATIONPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

struct TfmNVVMRegisterReallocationPass
    : tfm::impl::TfmNVVMRegisterReallocationPassBase<
          TfmNVVMRegisterReallocationPass> {
  void runOnOperation() override {
    auto name = StringAttr::get(&getContext(),
                                NVVM::NVVMDialect::getMinctasmAttrName());
    for (auto kernel : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      bool moves = kernel
                       .walk([](NVVM::SetMaxRegisterOp) {
                         return WalkResult::interrupt();
                       })
                       .wasInterrupted();
      if (moves && !kernel->hasAttr(name))
        kernel->setAttr(
            name, IntegerAttr::get(IntegerType::get(&getContext(), 32), 1));
    }
  }
};

} // namespace
