//===- RowPrologue.h - a norm the few-rows kernel computes ------*- C++ -*-===//
//
// A projection's rows are often a norm's output: RMSNorm's
// `n = x · r[row] · g[k]` after the row reduction `Σ x²`, LayerNorm's mean,
// variance and `((x - μ) · r) · g + b`. The few-rows kernel
// (FewRowsMatmul.cpp) reads every row whole in every warp anyway, so it
// can compute the norm's row values itself and each chunk of the normed
// rows as it reads it: the norm's kernels then have nothing to do for a
// decode step. They stay, over a subview of their rows that is empty when
// the few-rows kernel runs, for the tile kernel's many rows.
//
// Here: what such a norm is (the ops, their operands' kinds), and the
// rewrite that empties it for few rows.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_GPU_ROWPROLOGUE_H
#define TFM_LIB_CODEGEN_GPU_ROWPROLOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir {
class RewriterBase;
} // namespace mlir

namespace mlir::tfm {

/// How an operand of a prologue's op is indexed, as the projection sees
/// it: at [row, k] (the rows being normed), at [row] (a row value of the
/// chain), or at [k] (the norm's weight or bias).
enum class RowOperandKind { Element, Row, Column };

/// The ops that compute a projection's A: `norm`, elementwise over A's
/// shape [..., K] (the dims before K collapse into the projection's rows),
/// and the ops before it that compute its row values, in order.
struct RowPrologue {
  linalg::GenericOp norm;
  /// Zero or constant fills of row values, row reductions (the last loop
  /// a reduction over K, the body `out + e`), and elementwise ops over row
  /// values; every row value `norm` and they read is one of theirs.
  SmallVector<Operation *> chain;
  /// `norm`'s loop count: its rows' dims and K.
  int64_t rank;
  /// The contractions whose A is `norm`'s output.
  SmallVector<linalg::GenericOp> projections;
};

/// How `operand` of `op` (the norm or a generic of the chain) is indexed.
RowOperandKind rowOperandKind(const RowPrologue &prologue, OpOperand &operand);

/// The prologue computing `a` (the A of `contraction`, or its collapsed
/// [M, K] view) where the few-rows kernel may compute it in its place:
/// the norm's ops elementwise, and the buffers it reads unchanged up to
/// `launchPoint` (where the kernel runs).
std::optional<RowPrologue> matchRowPrologue(Value a,
                                            linalg::GenericOp contraction,
                                            Operation *launchPoint);

/// Whether what `prologue`'s ops write is read by nothing but its ops and
/// `prologue.projections`, until it is written again.
bool isReadOnlyByPrologue(const RowPrologue &prologue);

/// Makes `prologue`'s ops run over the rows only when there are more than
/// `fewRows`: each over subviews of its operands' leading dim, empty
/// otherwise, so that their kernels have empty grids (which the runtime
/// skips) when the few-rows kernel computes the rows instead.
void skipForFewRows(RewriterBase &rewriter, const RowPrologue &prologue,
                    int64_t fewRows);

} // namespace mlir::tfm

#endif // TFM_LIB_CODEGEN_GPU_ROWPROLOGUE_H
