//===- tfm-opt.cpp - opt-style driver for tfm IR ---------------------------===//
//
// mlir-opt with the tfm dialect and passes plus the upstream dialects and
// generic transformations that tfm pipelines use, and the transform dialect
// with its structured (linalg) ops. It reads its input itself,
// to refuse nesting that would overflow the stack of MLIR's parser before
// handing the text to MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "tfm/InitTfm.h"
#include "tfm/Support/InputLimits.h"
#include "tfm/Support/Version.h"

#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::tfm::registerTfmPasses();
  // Transform scripts (--transform-interpreter) with the structured ops,
  // e.g. to tile tfm.online_attention through its TilingInterface.
  mlir::transform::registerInterpreterPass();

  mlir::DialectRegistry registry;
  mlir::tfm::registerTfmDialects(registry);
  registry.insert<mlir::transform::TransformDialect>();
  mlir::linalg::registerTransformDialectExtension(registry);
  mlir::tfm::setToolVersionPrinter("tfm-opt");
  auto [inputPath, outputPath] = mlir::registerAndParseCLIOptions(
      argc, argv, "tfm optimizer driver\n", registry);
  auto fail = [](const llvm::Twine &message) {
    llvm::WithColor::error(llvm::errs(), "tfm-opt") << message << "\n";
    return 1;
  };

  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputPath, outputPath, registry));

  llvm::InitLLVM init(argc, argv);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputPath, &error);
  if (!input)
    return fail(error);
  if (llvm::Error nesting = mlir::tfm::checkMLIRSource(input->getBuffer()))
    return fail(inputPath + ": " + llvm::toString(std::move(nesting)));
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputPath, &error);
  if (!output)
    return fail(error);
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry,
                                     config)))
    return 1;
  output->keep();
  return 0;
}
