//===- AttentionScores.h - attention scores and masks as scalars -*- C++ -*-===//
//
// The scalar pieces of attention shared by the reference lowering (per
// element) and attention tiling (per element on boundary tiles, per tile for
// loop bounds): score scaling and capping, and structured masks as index
// arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DIALECT_TFM_UTILS_ATTENTIONSCORES_H
#define TFM_DIALECT_TFM_UTILS_ATTENTIONSCORES_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::tfm {

/// f32 `scale * dot`, then `cap * tanh(score / cap)` when `op` has a
/// softcap: the score before bias and masks.
Value buildScaledScore(OpBuilder &b, Location loc, AttentionOp op, Value dot);

/// i1: whether key index `key` is visible from query row `row` under `mask`,
/// where the query's absolute position is `row + offset` (offset = Skv - Sq).
Value buildIsVisible(OpBuilder &b, Location loc, MaskAttr mask, Value row,
                     Value key, Value offset);

/// The visible key range [begin, end) (index values, clamped to
/// [0, kvLength]) of the query rows [firstRow, lastRow] under `mask`.
std::pair<Value, Value> buildVisibleKeyRange(OpBuilder &b, Location loc,
                                             MaskAttr mask, Value firstRow,
                                             Value lastRow, Value offset,
                                             Value kvLength);

/// i1: whether every key in [keyBegin, keyEnd) is visible from every query
/// row in [firstRow, lastRow] (a tile that needs no element mask).
Value buildIsTileFullyVisible(OpBuilder &b, Location loc, MaskAttr mask,
                              Value firstRow, Value lastRow, Value keyBegin,
                              Value keyEnd, Value offset);

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_UTILS_ATTENTIONSCORES_H
