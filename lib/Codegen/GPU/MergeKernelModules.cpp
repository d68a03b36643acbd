//===- MergeKernelModules.cpp - one gpu.module for every kernel -----------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUMERGEKERNELMODULESPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

struct TfmGPUMergeKernelModulesPass
    : tfm::impl::TfmGPUMergeKernelModulesPassBase<
          TfmGPUMergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> sources;
    for (auto kernels : module.getOps<gpu::GPUModuleOp>())
      if (llvm::all_of(kernels.getBody()->getOperations(),
                       llvm::IsaPred<gpu::GPUFuncOp, memref::GlobalOp>))
        sources.push_back(kernels);
    if (sources.size() < 2)
      return;

    OpBuilder builder(sources.front());
    auto merged = gpu::GPUModuleOp::create(builder, sources.front().getLoc(),
                                           "tfm_kernels");
    SymbolTable symbols(module);
    symbols.insert(merged); // renames it if the name is taken
    // Old kernel reference -> new one.
    DenseMap<Attribute, SymbolRefAttr> renamed;
    for (gpu::GPUModuleOp source : sources) {
      auto functions =
          llvm::to_vector(source.getBody()->getOps<gpu::GPUFuncOp>());
      for (gpu::GPUFuncOp function : functions) {
        std::string name = source.getName().str();
        if (functions.size() > 1)
          name += "_" + function.getName().str();
        SymbolRefAttr old = SymbolRefAttr::get(
            source.getNameAttr(),
            {FlatSymbolRefAttr::get(function.getNameAttr())});
        function->moveBefore(merged.getBody(), merged.getBody()->end());
        function.setName(name);
        renamed[old] = SymbolRefAttr::get(
            merged.getNameAttr(), {FlatSymbolRefAttr::get(function)});
      }
      // Outlining copied the host globals a kernel reads under their host
      // names: one copy of each in the merged module.
      for (auto global : llvm::make_early_inc_range(
               source.getBody()->getOps<memref::GlobalOp>())) {
        if (merged.lookupSymbol(global.getSymNameAttr()))
          continue;
        global->moveBefore(merged.getBody(), merged.getBody()->end());
      }
      source.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (SymbolRefAttr target = renamed.lookup(launch.getKernel()))
        launch.setKernelAttr(target);
    });
  }
};

} // namespace
