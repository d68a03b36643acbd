//===- ShapeChecks.h - verifier helpers for tfm ops -------------*- C++ -*-===//
//
// Small checks shared by the tfm verifiers. Each emits one upstream-style
// diagnostic (lower case, naming the operand and the numbers) and fails, or
// succeeds silently. Dynamic sizes are compatible with any size.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_DIALECT_TFM_IR_SHAPECHECKS_H
#define TFM_LIB_DIALECT_TFM_IR_SHAPECHECKS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrs.h"

namespace mlir::tfm::detail {

/// Whether two sizes can be equal at run time.
inline bool areCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Prints a size, `?` for a dynamic one.
std::string formatSize(int64_t size);

/// The ranked tensor type of `value`.
inline RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// "expected <name> to have rank <rank> <layout>, got rank N".
LogicalResult checkRank(Operation *op, StringRef name, Value value,
                        int64_t rank, StringRef layout);

/// "expected <what> (A) to match <reference> (B)" unless compatible.
LogicalResult checkSize(Operation *op, StringRef what, int64_t actual,
                        StringRef reference, int64_t expected);

/// "expected <what> to be static".
LogicalResult checkStatic(Operation *op, StringRef what, int64_t size);

/// "expected <name> element type (T) to match <reference> element type (U)".
LogicalResult checkElementType(Operation *op, StringRef name, Value value,
                               StringRef reference, Type expected);

/// "expected result shape [..] to match [..]" or the element type message.
LogicalResult checkResult(Operation *op, ArrayRef<int64_t> shape,
                          StringRef reference, Type elementType);

/// Checks that `value` broadcasts to `target` with NumPy rules (aligned on
/// the trailing dim). Only a static 1 broadcasts: a dynamic size must match.
LogicalResult checkBroadcastable(Operation *op, StringRef name, Value value,
                                 ArrayRef<int64_t> target,
                                 ArrayRef<StringRef> targetNames);

/// "expected <name> to be non-negative, got X".
LogicalResult checkNonNegative(Operation *op, StringRef name, double value);

/// "expected <name> to be positive, got X".
LogicalResult checkPositive(Operation *op, StringRef name, double value);

/// A `[rows, cols]` weight in nn.Linear layout: checks rank 2, element type
/// and that `cols` matches `inFeatures`. Returns `rows` (may be dynamic).
FailureOr<int64_t> checkProjectionWeight(Operation *op, StringRef name,
                                         Value weight, int64_t inFeatures,
                                         StringRef inName, Type elementType);

/// A rank-1 parameter vector (bias, norm weight) of `size` elements.
LogicalResult checkVector(Operation *op, StringRef name, Value vector,
                          int64_t size, StringRef sizeName, Type elementType);

/// Checks the weights of a feed-forward network of `kind` on `dModel`-wide
/// features; the gate and biases may be null.
LogicalResult checkFFNWeights(Operation *op, FFNKind kind, int64_t dModel,
                              Value gate, Value up, Value upBias, Value down,
                              Value downBias, Type elementType);

} // namespace mlir::tfm::detail

#endif // TFM_LIB_DIALECT_TFM_IR_SHAPECHECKS_H
