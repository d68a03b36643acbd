//===- tfm-opt.cpp - opt-style driver for tfm IR ---------------------------===//
//
// mlir-opt with the tfm dialect and passes plus the upstream dialects and
// generic transformations that tfm pipelines use.
//
//===----------------------------------------------------------------------===//

#include "tfm/InitTfm.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::tfm::registerTfmPasses();

  mlir::DialectRegistry registry;
  mlir::tfm::registerTfmDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tfm optimizer driver\n", registry));
}
