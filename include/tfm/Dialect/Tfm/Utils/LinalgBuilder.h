//===- LinalgBuilder.h - helpers to build linalg on tensors -----*- C++ -*-===//
//
// A thin layer over OpBuilder for building linalg on tensors: empty and filled
// tensors with dynamic sizes, linalg.generic with a scalar body given as a
// lambda, f32 conversions and the matmul-like contraction every projection
// uses. Accumulation is always f32 (docs/DESIGN.md, numerics).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DIALECT_TFM_UTILS_LINALGBUILDER_H
#define TFM_DIALECT_TFM_UTILS_LINALGBUILDER_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfm {

/// Computes the yielded scalar of a linalg.generic body from its block
/// arguments (inputs, then the output element).
using ScalarBody =
    function_ref<Value(OpBuilder &b, Location loc, ValueRange args)>;

class LinalgBuilder {
public:
  LinalgBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() { return loc; }
  Type f32() { return b.getF32Type(); }

  /// Sizes of `value`: static ones as attributes, dynamic ones as tensor.dim.
  SmallVector<OpFoldResult> sizesOf(Value value);
  OpFoldResult sizeOf(Value value, int64_t dim);

  /// tensor.empty of `sizes` and `elementType`.
  Value empty(ArrayRef<OpFoldResult> sizes, Type elementType);
  /// A tensor of `sizes` filled with `value` of type f32.
  Value filledF32(ArrayRef<OpFoldResult> sizes, double value);

  /// linalg.generic over `numLoops` loops with a single result.
  Value generic(ValueRange inputs, ArrayRef<AffineMap> inputMaps, Value init,
                AffineMap initMap, ArrayRef<utils::IteratorType> iterators,
                ScalarBody body);

  /// An elementwise generic producing a tensor of `sizes` and `elementType`;
  /// inputs are read through `inputMaps` from the result's index space.
  Value elementwise(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                    ArrayRef<OpFoldResult> sizes, Type elementType,
                    ScalarBody body);

  /// A rank-2 `tile` [R, C] as f32, transposed to [C, R] with `transpose`
  /// (a copy only where one is needed: an f32 tile read as it is is
  /// returned itself). Targets pack their operand tiles with it.
  Value tileF32(Value tile, bool transpose);
  /// y[..., n] = sum_k x[..., k] * w[n, k] in f32, for x of any rank >= 1
  /// and any float type (nn.Linear layout).
  Value projectF32(Value x, Value w);

  /// Map from `numLoops` loops to the listed loop dims.
  AffineMap map(unsigned numLoops, ArrayRef<unsigned> dims);
  /// Map that reads `value` (right-aligned NumPy broadcast) from an index
  /// space of `numLoops` loops: a static 1 reads index 0.
  AffineMap broadcastMap(unsigned numLoops, ArrayRef<AffineExpr> loopDims,
                         Value value);

  /// Scalar helpers usable inside bodies (they take the body's builder).
  static Value toF32(OpBuilder &b, Location loc, Value scalar);
  static Value fromF32(OpBuilder &b, Location loc, Value scalar, Type type);
  static Value constantF32(OpBuilder &b, Location loc, double value);

  /// Replaces `op` by `value`, with a tensor.cast when the op's result type
  /// is more (or less) static than what the lowering computed.
  static void replaceOp(RewriterBase &rewriter, Operation *op, Value value);

private:
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_UTILS_LINALGBUILDER_H
