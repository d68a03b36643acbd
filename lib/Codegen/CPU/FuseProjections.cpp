//===- FuseProjections.cpp - the CPU projection fusion passes -------------===//
//
// Each pass decides one kind of fusion and records it as a
// tfm.fused_projections region (FusionSets), which tfm-cpu-tile-projections
// then computes column block by column block:
//
//   tfm-cpu-fuse-projection-epilogues  gate/up + act(gate)·up, bias +
//                                      activation, o/down + residual
//   tfm-cpu-fuse-viewed-epilogues      q/k + RoPE (a view into heads)
//   tfm-cpu-fuse-sibling-projections   q, k and v in one loop
//
//===----------------------------------------------------------------------===//

#include "FusionSets.h"
#include "ProjectionGroups.h"

#include "tfm/Codegen/Passes.h"
#include "tfm/Codegen/Projection.h"
#include "tfm/Dialect/Tfm/IR/TfmDialect.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCPUFUSEPROJECTIONEPILOGUESPASS
#define GEN_PASS_DEF_TFMCPUFUSEVIEWEDEPILOGUESPASS
#define GEN_PASS_DEF_TFMCPUFUSESIBLINGPROJECTIONSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::projection;

namespace {

bool any(linalg::GenericOp) { return true; }
bool none(linalg::GenericOp) { return false; }

/// Elementwise ops over [B, S, N] views of a projection's result collapsed
/// to [M, N], so that the fusions see the projection's own result.
void populateCollapseToProjectionPatterns(RewritePatternSet &patterns) {
  linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns,
                                                     collapsesToProjection);
  // Sizes of the [B, S, N] views, read off their sources, so that the
  // views go when the ops they fed are collapsed.
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  tensor::DimOp::getCanonicalizationPatterns(patterns, patterns.getContext());
}

/// The projections under `root` that `options` blocks (all, without them).
SmallVector<linalg::GenericOp>
projectionsOf(Operation *root, const CPUCodegenOptions *options = nullptr) {
  SmallVector<linalg::GenericOp> projections;
  root->walk([&](linalg::GenericOp op) {
    if (isProjection(op) && (!options || blockingOf(op, *options)))
      projections.push_back(op);
  });
  return projections;
}

struct TfmCPUFuseProjectionEpiloguesPass
    : tfm::impl::TfmCPUFuseProjectionEpiloguesPassBase<
          TfmCPUFuseProjectionEpiloguesPass> {
  void runOnOperation() override {
    FusionSets sets;
    IRRewriter rewriter(&getContext(), &sets);
    sets.dissolve(getOperation(), rewriter);
    RewritePatternSet patterns(&getContext());
    populateCollapseToProjectionPatterns(patterns);
    linalg::populateElementwiseOpsFusionPatterns(patterns, extendsEpilogue);
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setListener(&sets))))
      return signalPassFailure();
    for (linalg::GenericOp op : projectionsOf(getOperation())) {
      ProjectionGroup group = groupOf(op, isProjection, any, none);
      if (group.epilogue)
        sets.unite(group.ops());
    }
    sets.form(getOperation(), rewriter);
  }
};

struct TfmCPUFuseViewedEpiloguesPass
    : CPUCodegenPass<tfm::impl::TfmCPUFuseViewedEpiloguesPassBase<
          TfmCPUFuseViewedEpiloguesPass>> {
  void runOnOperation() override {
    if (!checkCodegenOptions())
      return;
    CPUCodegenOptions options = codegenOptions();
    FusionSets sets;
    IRRewriter rewriter(&getContext(), &sets);
    sets.dissolve(getOperation(), rewriter);
    RewritePatternSet patterns(&getContext());
    populateCollapseToProjectionPatterns(patterns);
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setListener(&sets))))
      return signalPassFailure();
    SmallVector<linalg::GenericOp> projections =
        projectionsOf(getOperation(), &options);
    auto isTileable = [&](linalg::GenericOp op) {
      return llvm::is_contained(projections, op);
    };
    for (linalg::GenericOp op : projections) {
      auto fused = [&](linalg::GenericOp epilogue) {
        return sets.together(op, epilogue);
      };
      ProjectionGroup group = groupOf(op, isTileable, fused, any);
      // Column blocks of whole units of the view (whole heads).
      if (group.view && fitsColumnBlocks({group}, options))
        sets.unite(group.ops());
    }
    sets.form(getOperation(), rewriter);
  }
};

struct TfmCPUFuseSiblingProjectionsPass
    : CPUCodegenPass<tfm::impl::TfmCPUFuseSiblingProjectionsPassBase<
          TfmCPUFuseSiblingProjectionsPass>> {
  void runOnOperation() override {
    if (!checkCodegenOptions())
      return;
    CPUCodegenOptions options = codegenOptions();
    FusionSets sets;
    IRRewriter rewriter(&getContext(), &sets);
    sets.dissolve(getOperation(), rewriter);
    SmallVector<ProjectionGroup> groups =
        fusedGroups(getOperation(), sets, options);
    std::vector<bool> fused(groups.size());
    for (size_t i = 0; i < groups.size(); ++i) {
      if (fused[i])
        continue;
      SmallVector<ProjectionGroup> together{groups[i]};
      for (size_t j = i + 1; j < groups.size(); ++j) {
        if (fused[j] || !areSiblings(groups[i], groups[j], options))
          continue;
        together.push_back(groups[j]);
        if (!fitsColumnBlocks(together, options))
          together.pop_back();
        else
          fused[j] = true;
      }
      if (together.size() < 2)
        continue;
      SmallVector<Operation *> ops;
      for (ProjectionGroup &group : gatherSiblings(rewriter, together))
        llvm::append_range(ops, group.ops());
      sets.unite(ops);
    }
    sets.form(getOperation(), rewriter);
  }
};

} // namespace

std::unique_ptr<Pass> mlir::tfm::createTfmCPUFuseViewedEpiloguesPass(
    const CPUCodegenOptions &options) {
  auto pass = std::make_unique<TfmCPUFuseViewedEpiloguesPass>();
  pass->setCodegenOptions(options);
  return pass;
}

std::unique_ptr<Pass> mlir::tfm::createTfmCPUFuseSiblingProjectionsPass(
    const CPUCodegenOptions &options) {
  auto pass = std::make_unique<TfmCPUFuseSiblingProjectionsPass>();
  pass->setCodegenOptions(options);
  return pass;
}
