//===- ModelDescription.cpp - JSON model descriptions to tfm ops -----------===//

#include "tfm/Compiler/ModelDescription.h"

#include "ModelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::tfm;

/// 2 FLOPs per weight per token for every projection, FFN and the LM head;
/// per visible (query, key) pair 2·D for QKᵀ and 2·D for PV in every head.
static FlopModel flopsOf(const ModelConfig &config) {
  double d = config.dModel, headDim = config.headDim;
  FlopModel flops;
  flops.perToken = 2 * (config.numLayers * layerMatrixWeights(config) +
                        config.vocabSize * d);
  flops.perVisiblePair = 4.0 * headDim * config.numHeads * config.numLayers;
  flops.slidingWindow = config.slidingWindow;
  return flops;
}

llvm::Expected<ModelModule>
mlir::tfm::buildModelFromJSON(llvm::StringRef json, MLIRContext *context) {
  llvm::Expected<ModelConfig> config = parseModelConfig(json);
  if (!config)
    return config.takeError();
  context->loadDialect<TfmDialect, func::FuncDialect, arith::ArithDialect,
                       cf::ControlFlowDialect, linalg::LinalgDialect,
                       scf::SCFDialect, tensor::TensorDialect>();
  OwningOpRef<ModuleOp> module = ModelBuilder(*config, context).build();
  if (failed(verify(*module)))
    return llvm::createStringError(
        "internal error: the model expanded into invalid IR");
  return ModelModule{std::move(module), flopsOf(*config)};
}