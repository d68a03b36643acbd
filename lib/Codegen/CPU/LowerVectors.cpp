//===- LowerVectors.cpp - vector lowering for CPUs -------------------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPULOWERVECTORSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// [1, ..., 1, width] for an f32 [1, ..., 1, N] vector longer than one
/// register of `width` lanes (N a multiple of it); nothing for other types.
/// (With f16/bf16 reads in pieces, an AVX2 build of a bf16 decode step called
/// compiler-rt's __truncsfbf2, which tfm does not link.)
std::optional<SmallVector<int64_t>> registerPieces(VectorType type,
                                                   int64_t width) {
  ArrayRef<int64_t> shape = type.getShape();
  if (!type.getElementType().isF32() || shape.back() <= width ||
      shape.back() % width ||
      llvm::any_of(shape.drop_back(), [](int64_t d) { return d != 1; }))
    return std::nullopt;
  SmallVector<int64_t> pieces(shape.size(), 1);
  pieces.back() = width;
  return pieces;
}

struct TfmCPULowerVectorsPass
    : tfm::CPUCodegenPass<
          tfm::impl::TfmCPULowerVectorsPassBase<TfmCPULowerVectorsPass>> {

  void runOnOperation() override {
    if (!checkCodegenOptions())
      return;
    // Contraction output blocks live in registers across their K loop.
    linalg::hoistRedundantVectorTransfers(getOperation());

    RewritePatternSet patterns(&getContext());
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vectorWidth == 16
                      ? vector::VectorTransposeLowering::Shuffle16x16
                      : vector::VectorTransposeLowering::Shuffle1D);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::populateVectorMaskOpLoweringPatterns(patterns);
    // f32 exp as a polynomial (vector and scalar): no libm call in
    // vectorized loops. Its error is measured by test/Integration/CPU/exp.py.
    populateMathPolynomialApproximationPatterns(
        patterns,
        [](StringRef name) { return name == math::ExpOp::getOperationName(); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    // Reads of a row longer than one register become one read per register,
    // in address order. A whole-row read reaches LLVM as one wide load, whose
    // pieces its scheduler may issue out of address order (a 2x128 decode
    // block read each V row's second half first, descending, and ran 12%
    // slower); separate loads keep their order.
    RewritePatternSet unroll(&getContext());
    vector::populateVectorUnrollPatterns(
        unroll, vector::UnrollVectorOptions()
                    .setFilterConstraint([](Operation *op) {
                      return success(isa<vector::TransferReadOp>(op));
                    })
                    .setNativeShapeFn([width = int64_t(vectorWidth)](
                                          Operation *op) {
                      return registerPieces(
                          cast<vector::TransferReadOp>(op).getVectorType(),
                          width);
                    }));
    if (failed(applyPatternsGreedily(getOperation(), std::move(unroll))))
      return signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass>
mlir::tfm::createTfmCPULowerVectorsPass(const CPUCodegenOptions &options) {
  auto pass = std::make_unique<TfmCPULowerVectorsPass>();
  pass->setCodegenOptions(options);
  return pass;
}
