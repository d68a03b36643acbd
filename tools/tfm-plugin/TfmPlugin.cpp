//===- TfmPlugin.cpp - tfm as a dialect and pass plugin for mlir-opt -------===//

#include "tfm/InitTfm.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Tfm", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::tfm::registerTfmDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Tfm", LLVM_VERSION_STRING,
          [] { mlir::tfm::registerTfmPasses(); }};
}
