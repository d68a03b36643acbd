//===- TfmToLinalg.cpp - the convert-tfm-to-linalg pass --------------------===//

#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"

#include "tfm/Conversion/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmDialect.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_CONVERTTFMTOLINALGPASS
#include "tfm/Conversion/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

void mlir::tfm::populateTfmToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  populateTfmDecompositionPatterns(patterns);
  populateTfmAttentionToLinalgPatterns(patterns);
  populateTfmLayerToLinalgPatterns(patterns);
}

namespace {
struct ConvertTfmToLinalgPass
    : tfm::impl::ConvertTfmToLinalgPassBase<ConvertTfmToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addIllegalDialect<TfmDialect>();
    // Tile-level ops are the targets' to decompose.
    target.addLegalOp<OnlineAttentionOp, YieldOp>();
    // A GPU kernel's op on buffers (tfm-gpu-flash-attention), lowered later.
    target.addLegalOp<BufferAttentionOp>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    RewritePatternSet patterns(context);
    populateTfmToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
