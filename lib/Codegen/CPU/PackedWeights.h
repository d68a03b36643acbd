//===- PackedWeights.h - weights as contiguous [KC, NR] panels --*- C++ -*-===//
//
// How the f32 projections' weights are packed: in every call, one panel at
// a time (packScaled), or once, into an entry-point input of their own that
// the prepare_weights entry point makes (prepackedWeight, and the pass
// tfm-cpu-prepare-weights in PackedWeights.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_CPU_PACKEDWEIGHTS_H
#define TFM_LIB_CODEGEN_CPU_PACKEDWEIGHTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm::projection {

/// w[row : +rows, k0 : +depth] in f32 as [rows / columns, depth, columns]:
/// each NR-column panel transposed into [KC, NR] of its own, contiguous, so
/// that a register block's panel spreads over all of L1's sets (in one
/// [KC, NB] panel its rows lay NB x 4 bytes apart: a quarter of the sets
/// for NB = 128). Its steps are scaled by `scale`[k0 : +depth] when there
/// is a scale (an RMSNorm's weight). With `transposed`, `w` is wᵀ [K, N]
/// (a Conv1D weight), read as it lies.
Value packScaled(OpBuilder &b, Location loc, Value w, Value scale, Value row,
                 Value k0, int64_t rows, int64_t depth, int64_t columns,
                 bool transposed = false);

/// `projection`'s weight [N, K] packed once, as packScaled packs it with
/// `columns` = NR and the whole depth K: a read-only tensor
/// [ceil(N / NR), K, NR] (the last panel padded with zero columns) of an
/// input that its entry point gains for it (or already has), named
/// `<weight>.packed` (`<weight>[a:b].packed` for its rows a to b). The
/// weight is an entry point's input, or rows of it (a static
/// tensor.extract_slice), or the transpose of either (a [K, N] Conv1D
/// weight through linalg.transpose), which is then packed as it lies. Null
/// where the weight cannot be packed once: not f32, or not so read from an
/// entry point's input, or its column scale not an input, or the name
/// taken otherwise.
Value prepackedWeight(RewriterBase &rewriter, linalg::GenericOp projection,
                      int64_t columns);

} // namespace mlir::tfm::projection

#endif // TFM_LIB_CODEGEN_CPU_PACKEDWEIGHTS_H
