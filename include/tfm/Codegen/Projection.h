//===- Projection.h - the projection form the CPU blocks -------*- C++ -*-===//
//
// What tfm-cpu-tile-projections blocks and tfm-fuse-norm-projection folds
// norms into: y[m, n] += a[m, k] · w[n, k] (nn.Linear weights), optionally
// with a column scale, y[m, n] += a[m, k] · (w[n, k] · g[k]), or with rows
// transformed as they are read, y[m, n] += t(a[m, k], ...) · w[n, k].
//
//===----------------------------------------------------------------------===//

#ifndef TFM_CODEGEN_PROJECTION_H
#define TFM_CODEGEN_PROJECTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::tfm {

/// Whether `op` is y[m, n] += a[m, k] · w[n, k] (· g[k]) on tensors, with
/// static N and K and an f32 result, or the same with rows transformed as
/// they are read (transformsRows).
bool isProjection(linalg::GenericOp op);

/// The column scale g of a projection, or null.
Value columnScaleOf(linalg::GenericOp projection);

/// Whether a projection reads its rows transformed, y[m, n] += t(a[m, k],
/// p[m]..., q[k]...) · w[n, k], t an f32 function of a, per-row operands p
/// and per-step operands q (LayerNorm's normalization, which
/// tfm-fuse-norm-projection folds in).
bool transformsRows(linalg::GenericOp projection);

/// t of a projection that transformsRows, on rows [row0, row0 + rows) and
/// steps [k0, k0 + depth) of a: an f32 [rows, depth] tensor.
Value transformedRows(OpBuilder &b, Location loc, linalg::GenericOp projection,
                      OpFoldResult row0, OpFoldResult rows, OpFoldResult k0,
                      int64_t depth);

/// Whether `value` is a product (a tree of arith.mulf) of exactly
/// `factors`, each possibly widened by an arith.extf.
bool isProductOf(Value value, ArrayRef<Value> factors);

} // namespace mlir::tfm

#endif // TFM_CODEGEN_PROJECTION_H
