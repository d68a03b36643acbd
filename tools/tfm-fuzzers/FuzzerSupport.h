//===- FuzzerSupport.h - what the MLIR-level fuzz targets share -*- C++ -*-===//

#ifndef TFM_TOOLS_TFM_FUZZERS_FUZZERSUPPORT_H
#define TFM_TOOLS_TFM_FUZZERS_FUZZERSUPPORT_H

#include "tfm/InitTfm.h"
#include "tfm/Target/TargetBackend.h"

#include "mlir/IR/DialectRegistry.h"

namespace mlir::tfm {

/// The dialects tfm-compile parses (and its passes registered), made once.
inline DialectRegistry &fuzzerRegistry() {
  static DialectRegistry *registry = [] {
    registerTfmPasses();
    auto *registry = new DialectRegistry();
    registerTfmDialects(*registry);
    return registry;
  }();
  return *registry;
}

/// The host CPU target with default options, made once.
inline TargetBackend &fuzzerTarget() {
  static std::unique_ptr<TargetBackend> cpu =
      llvm::cantFail(createTargetBackend("cpu", {}));
  return *cpu;
}

} // namespace mlir::tfm

#endif // TFM_TOOLS_TFM_FUZZERS_FUZZERSUPPORT_H
