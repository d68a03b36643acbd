//===- tfm-model-fuzzer.cpp - fuzz the model description reader ------------===//
//
// A description that is accepted must expand into a module that verifies
// (buildModelFromJSON checks) and lowers to linalg like tfm-compile does
// (models of up to 16 layers).
//
//===----------------------------------------------------------------------===//

#include "FuzzerSupport.h"

#include "tfm/Compiler/Driver.h"
#include "tfm/Compiler/ModelDescription.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;

constexpr int64_t kMaxLoweredLayers = 16;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext context(tfm::fuzzerRegistry(), MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<tfm::ModelModule> model = tfm::buildModelFromJSON(text, &context);
  if (!model) {
    llvm::consumeError(model.takeError());
    return 0;
  }
  // The lowering is the same for every layer: deep models (up to 1024
  // layers, a minute each under ASan) are only expanded and verified.
  int64_t layers = 0;
  model->module->walk([&](tfm::DecoderBlockOp) { ++layers; });
  if (layers <= kMaxLoweredLayers)
    (void)tfm::lowerModule(*model->module, tfm::fuzzerTarget(), "linalg");
  return 0;
}
