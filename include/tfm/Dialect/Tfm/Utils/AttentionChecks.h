//===- AttentionChecks.h - run-time size checks of attention ----*- C++ -*-===//
//
// What a lowering of tfm.attention asserts about sizes the verifier could
// only check for compatibility (dynamic dims): asserts that
// tfm-insert-runtime-checks turns into an entry point's checks.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DIALECT_TFM_UTILS_ATTENTIONCHECKS_H
#define TFM_DIALECT_TFM_UTILS_ATTENTIONCHECKS_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::tfm {

/// Asserts (`cf.assert` of `tensor.dim` equalities) that the dims of `op`'s
/// operands that must agree do at run time: batch, key/value lengths,
/// kv_lengths, and the dense mask's and bias's broadcast dims.
void assertSameDims(OpBuilder &b, Location loc, AttentionOp op);

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_UTILS_ATTENTIONCHECKS_H
