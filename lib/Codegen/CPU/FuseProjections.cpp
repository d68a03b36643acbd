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

/// One fusion pass over `root`: its regions dissolved into sets, the
/// [B, S, N] views of projections' results collapsed (with `extraPatterns`,
/// if any, in the same rewrite), then `fuse` uniting ops, then the sets
/// formed into regions again.
LogicalResult
runFusion(Operation *root,
          function_ref<void(FusionSets &, RewriterBase &)> fuse,
          function_ref<void(RewritePatternSet &)> extraPatterns = {}) {
  FusionSets sets;
  IRRewriter rewriter(root->getContext(), &sets);
  sets.dissolve(root, rewriter);
  RewritePatternSet patterns(root->getContext());
  populateCollapseToProjectionPatterns(patterns);
  if (extraPatterns)
    extraPatterns(patterns);
  if (failed(applyPatternsGreedily(root, std::move(patterns),
                                   GreedyRewriteConfig().setListener(&sets))))
    return failure();
  fuse(sets, rewriter);
  sets.form(root, rewriter);
  return success();
}

struct TfmCPUFuseProjectionEpiloguesPass
    : tfm::impl::TfmCPUFuseProjectionEpiloguesPassBase<
          TfmCPUFuseProjectionEpiloguesPass> {
  void runOnOperation() override {
    auto fuse = [&](FusionSets &sets, RewriterBase &) {
      SmallVector<linalg::GenericOp> projections;
      getOperation()->walk([&](linalg::GenericOp op) {
        if (isProjection(op))
          projections.push_back(op);
      });
      for (linalg::GenericOp op : projections) {
        ProjectionGroup group = groupOf(op, isProjection, any, none);
        if (group.epilogue)
          sets.unite(group.ops());
      }
    };
    // A bias then a residual become one epilogue.
    auto mergeElementwise = [](RewritePatternSet &patterns) {
      linalg::populateElementwiseOpsFusionPatterns(patterns, extendsEpilogue);
    };
    if (failed(runFusion(getOperation(), fuse, mergeElementwise)))
      signalPassFailure();
  }
};

struct TfmCPUFuseViewedEpiloguesPass
    : CPUCodegenPass<tfm::impl::TfmCPUFuseViewedEpiloguesPassBase<
          TfmCPUFuseViewedEpiloguesPass>> {
  void runOnOperation() override {
    if (!checkCodegenOptions())
      return;
    CPUCodegenOptions options = codegenOptions();
    auto fuse = [&](FusionSets &sets, RewriterBase &) {
      SmallVector<linalg::GenericOp> projections =
          blockedProjections(getOperation(), options);
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
    };
    if (failed(runFusion(getOperation(), fuse)))
      signalPassFailure();
  }
};

struct TfmCPUFuseSiblingProjectionsPass
    : CPUCodegenPass<tfm::impl::TfmCPUFuseSiblingProjectionsPassBase<
          TfmCPUFuseSiblingProjectionsPass>> {
  void runOnOperation() override {
    if (!checkCodegenOptions())
      return;
    CPUCodegenOptions options = codegenOptions();
    auto fuse = [&](FusionSets &sets, RewriterBase &rewriter) {
      SmallVector<ProjectionGroup> groups =
          fusedGroups(getOperation(), sets, options);
      auto anyGroups = [](ProjectionGroup &, ProjectionGroup &) {
        return true;
      };
      for (SmallVector<ProjectionGroup> &loop :
           siblingLoops(rewriter, groups, anyGroups, options)) {
        if (loop.size() < 2)
          continue;
        SmallVector<Operation *> ops;
        for (ProjectionGroup &group : loop)
          llvm::append_range(ops, group.ops());
        sets.unite(ops);
      }
    };
    if (failed(runFusion(getOperation(), fuse)))
      signalPassFailure();
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
