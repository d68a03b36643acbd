//===- InitTfm.cpp - registration shared by every tfm tool -----------------===//

#include "tfm/InitTfm.h"

#include "tfm/Dialect/Tfm/IR/TfmDialect.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::tfm::registerTfmDialects(DialectRegistry &registry) {
  registry.insert<TfmDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
}

void mlir::tfm::registerTfmPasses() { registerTfmTransformsPasses(); }
