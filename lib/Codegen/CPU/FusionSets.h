//===- FusionSets.h - the ops of tfm.fused_projections regions --*- C++ -*-===//
//
// The CPU fusion passes and tfm-cpu-tile-projections read the regions of
// tfm.fused_projections as sets of ops: each inlines the regions
// (dissolve), so that its analysis sees the plain use-def chains it
// matches, and asks which ops are in one set. A fusion pass then unites
// the ops it fuses and writes the sets back as regions (form).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_CPU_FUSIONSETS_H
#define TFM_LIB_CODEGEN_CPU_FUSIONSETS_H

#include "ProjectionGroups.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tfm::projection {

/// Sets of ops computed together. A listener, so that ops that rewrite
/// patterns erase leave their sets.
class FusionSets : public RewriterBase::Listener {
public:
  /// Inlines every tfm.fused_projections under `root`, each region's ops
  /// becoming a set.
  void dissolve(Operation *root, RewriterBase &rewriter);

  /// Whether `a` and `b` are one op or in one set.
  bool together(Operation *a, Operation *b) const;

  /// Puts `ops` (and the sets they are in) into one set.
  void unite(ArrayRef<Operation *> ops);

  /// Wraps the ops of each set of two or more under `root` in a
  /// tfm.fused_projections, placed where every value it reads is defined
  /// and before every op outside it that reads its results. A set whose
  /// ops lie in different blocks, or that has no such place, stays
  /// inlined.
  void form(Operation *root, RewriterBase &rewriter);

  void notifyOperationErased(Operation *op) override { setOf.erase(op); }

private:
  DenseMap<Operation *, unsigned> setOf;
  unsigned nextSet = 0;
};

/// The groups of the projections under `root` that `options` blocks, each
/// with the epilogues of its set that it can compute on its column blocks
/// (a viewed one only where whole units of the view divide them); every
/// such projection in one group.
SmallVector<ProjectionGroup> fusedGroups(Operation *root,
                                         const FusionSets &sets,
                                         const CPUCodegenOptions &options);

} // namespace mlir::tfm::projection

#endif // TFM_LIB_CODEGEN_CPU_FUSIONSETS_H
