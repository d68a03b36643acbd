//===- Projection.h - the projection form the CPU blocks -------*- C++ -*-===//
//
// What tfm-cpu-tile-projections blocks and tfm-fuse-norm-projection folds
// norms into: y[m, n] += a[m, k] · w[n, k] (nn.Linear weights), optionally
// with a column scale, y[m, n] += a[m, k] · (w[n, k] · g[k]).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_CODEGEN_PROJECTION_H
#define TFM_CODEGEN_PROJECTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::tfm {

/// Whether `op` is y[m, n] += a[m, k] · w[n, k] (· g[k]) on tensors, with
/// static N and K and an f32 result.
bool isProjection(linalg::GenericOp op);

/// The column scale g of a projection, or null.
Value columnScaleOf(linalg::GenericOp projection);

/// Whether `value` is a product (a tree of arith.mulf) of exactly
/// `factors`, each possibly widened by an arith.extf.
bool isProductOf(Value value, ArrayRef<Value> factors);

} // namespace mlir::tfm

#endif // TFM_CODEGEN_PROJECTION_H
