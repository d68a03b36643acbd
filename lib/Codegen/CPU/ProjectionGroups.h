//===- ProjectionGroups.h - projections and their epilogues -----*- C++ -*-===//
//
// Which projections can be computed together, and which elementwise ops can
// run on their column blocks (their epilogues): what the CPU fusion passes
// decide (FuseProjections.cpp) and tfm-cpu-tile-projections carries out.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_CPU_PROJECTIONGROUPS_H
#define TFM_LIB_CODEGEN_CPU_PROJECTIONGROUPS_H

#include "ProjectionBlocks.h"

#include "tfm/Codegen/CPUCodegenOptions.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm::projection {

/// Projections over the same rows and columns, and the elementwise op that
/// alone reads their results (their epilogue): gate and up with
/// act(gate)·up, a projection with its bias and activation, or with the
/// residual it is added to. Without an epilogue, one projection.
/// After them, a second op can read that result through a view that splits
/// its columns, [M, N] -> [M, C, ...] (RoPE: each head's pairs, [M, H, 2,
/// D/2]), directly or through slices of the dims after C: column blocks of
/// whole units of C (whole heads) are finished by that op alone.
struct ProjectionGroup {
  SmallVector<linalg::GenericOp> projections;
  linalg::GenericOp epilogue;
  tensor::ExpandShapeOp view;
  linalg::GenericOp viewedEpilogue;

  Value rows() { return projections.front().getDpsInputs()[0]; }
  /// The op whose result the group computes.
  linalg::GenericOp root() {
    if (viewedEpilogue)
      return viewedEpilogue;
    return epilogue ? epilogue : projections.front();
  }
  /// The projection or epilogue that the view reads.
  linalg::GenericOp viewed() {
    return epilogue ? epilogue : projections.front();
  }
  /// Every op of the group: its projections, epilogue, view, the slices
  /// of the view and the viewed epilogue.
  SmallVector<Operation *> ops();
  /// The columns of one unit of the view's dim C (1 without a view).
  int64_t columnUnit() const {
    tensor::ExpandShapeOp columnView = view;
    return columnView ? ShapedType::getNumElements(
                            columnView.getResultType().getShape().drop_front(2))
                      : 1;
  }
};

/// The group of `projection`: with the elementwise op that alone reads it
/// (and the other projections that op reads, each tileable by
/// `isTileable`) where `joinsEpilogue` accepts that op; then with the
/// viewed epilogue that reads its result where `joinsViewed` accepts it.
ProjectionGroup groupOf(linalg::GenericOp projection,
                        function_ref<bool(linalg::GenericOp)> isTileable,
                        function_ref<bool(linalg::GenericOp)> joinsEpilogue,
                        function_ref<bool(linalg::GenericOp)> joinsViewed);

/// The register, panel and thread blocks of `projection` under `options`,
/// and those of the columns whole register blocks leave; none for a
/// projection that is left alone (no columns, no steps, or a K that no
/// vector divides). NB (`block`) is columnBlocks's, from the groups tiled
/// together.
std::optional<std::pair<Blocking, std::optional<Blocking>>>
blockingOf(linalg::GenericOp projection, const CPUCodegenOptions &options);

/// The projections under `root` that `options` blocks (blockingOf), in
/// walk order.
SmallVector<linalg::GenericOp>
blockedProjections(Operation *root, const CPUCodegenOptions &options);

/// The column blocks of projection groups tiled in one loop: NB for the
/// packed form, and the weight rows a thread streams at a time; 0 where
/// none fits.
struct ColumnBlocks {
  int64_t packed, streamed;
};

/// Column blocks that divide every group's columns (columnBlocks in
/// ProjectionGroups.cpp says how they are picked).
ColumnBlocks columnBlocks(ArrayRef<ProjectionGroup> groups,
                          const Blocking &main, bool hasTail);

/// Whether `groups` (blocked alike) have column blocks that divide them
/// all: blockingOf's, without a column tail where a group has a view.
bool fitsColumnBlocks(ArrayRef<ProjectionGroup> groups,
                      const CPUCodegenOptions &options);

/// Whether `a` and `b` can share one parallel loop: projections of the
/// same rows in the same block, both blocked alike without a column tail,
/// each writing a buffer of its own that starts empty (so that a column
/// range of one buffer can take its place), results of one element type.
bool areSiblings(ProjectionGroup &a, ProjectionGroup &b,
                 const CPUCodegenOptions &options);

/// `groups` as the parallel loops they take: each with the later groups
/// that `mayShare` accepts and that can share its loop (areSiblings, their
/// column blocks fitting together), in the order of their roots, what each
/// reads moved before the first root, where the loop goes. A group whose
/// producers cannot move (side effects) takes a loop of its own.
SmallVector<SmallVector<ProjectionGroup>>
siblingLoops(RewriterBase &rewriter, ArrayRef<ProjectionGroup> groups,
             function_ref<bool(ProjectionGroup &, ProjectionGroup &)> mayShare,
             const CPUCodegenOptions &options);

/// For a result that an entry point writes into its caller's buffer as a
/// [B, S, N] view (the logits), the op that writes it there, so that the
/// loops can write into that buffer directly. eliminate-empty-tensors does
/// not see through the reshape.
bufferization::MaterializeInDestinationOp
callerDestination(linalg::GenericOp root);

/// Whether `a` and `b` are the same tensor: one value, or two equal
/// side-effect-free ops on the same operands (the views of the same rows
/// that each projection makes before CSE).
bool sameTensor(Value a, Value b);

/// Whether `operand` of an elementwise op over [B, S, N] is the
/// [B, S, N] view of a projection's [M, N] result, or an elementwise op's
/// result is viewed as [M, N] again: collapsing the op to [M, N] lets the
/// projection's epilogue be tiled with it (a control function of
/// upstream's fold-reshape-by-collapsing patterns).
bool collapsesToProjection(OpOperand *operand);

/// Whether the elementwise op producing `operand` reads a projection and
/// only this elementwise op reads it: the two become one epilogue (bias,
/// then residual; a control function of upstream's elementwise fusion).
bool extendsEpilogue(OpOperand *operand);

} // namespace mlir::tfm::projection

#endif // TFM_LIB_CODEGEN_CPU_PROJECTIONGROUPS_H
