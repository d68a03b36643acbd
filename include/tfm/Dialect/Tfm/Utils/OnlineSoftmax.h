//===- OnlineSoftmax.h - decomposing tfm.online_attention -------*- C++ -*-===//
//
// The body of one online-softmax step (tfm.online_attention) in linalg on
// tensors. The running-state update is the same on every target; the two
// products (query·keyᵀ and probabilities·value) are where targets differ, so
// a target passes its own and keeps the rest.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DIALECT_TFM_UTILS_ONLINESOFTMAX_H
#define TFM_DIALECT_TFM_UTILS_ONLINESOFTMAX_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::tfm {

/// How a target forms the products of an online-attention step.
struct OnlineAttentionProducts {
  /// Raw f32 dot products [M, N] of query rows [M, D] with key rows [N, D].
  std::function<Value(OpBuilder &, Location, Value query, Value key)> scores;
  /// `acc + probs · value` for f32 probs [M, N], value [N, Dv] and the f32
  /// accumulator [M, Dv], written into `acc`.
  std::function<Value(OpBuilder &, Location, Value probs, Value value,
                      Value acc)>
      accumulate;

  /// The target-independent products: contractions that convert each
  /// element to f32 as they read it.
  static OnlineAttentionProducts generic();
};

/// Builds the body of `op` at the builder's insertion point and returns its
/// results (max', sum', acc'), each written into its init operand's tensor.
SmallVector<Value> decomposeOnlineAttention(
    OpBuilder &b, OnlineAttentionOp op, const OnlineAttentionProducts &products);

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_UTILS_ONLINESOFTMAX_H
