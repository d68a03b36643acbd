//===- Projection.h - a projection the GPU kernels compute ------*- C++ -*-===//
//
// What tfm-gpu-tensor-core-matmul matches (TensorCoreMatmul.cpp) and the
// kernels it builds share: the bufferized projection with its fill and
// epilogue, the epilogue's evaluation at a pair of columns, and the kernel
// of few rows (FewRowsMatmul.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_GPU_PROJECTION_H
#define TFM_LIB_CODEGEN_GPU_PROJECTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::gpu {
class LaunchOp;
} // namespace mlir::gpu

namespace mlir::tfm {

struct RowPrologue;

/// A projection C[m, n] += A[m, k] · B[n, k] into an f32 C (bf16 or f16 A
/// and B, rows contiguous, K a multiple of 8, N even).
struct Projection {
  linalg::GenericOp contraction;
  /// The zero fill of C right before, if any: then the sums start at zero
  /// and the fill goes; else they start from C's values.
  linalg::FillOp fill;
  Value a, b, c;
  int64_t k;
  /// The elementwise op that alone reads C (directly or through the
  /// expand_shape `view`), its other operands of C's shape, if any: the
  /// rounding to bf16/f16, with a residual added, or act(gate) · up for the
  /// later of gate and up. The kernel computes it as it stores, into its
  /// output, and C's f32 values are never stored.
  linalg::GenericOp epilogue;
  memref::ExpandShapeOp view;
  /// The norm whose output A is, which the few-rows kernel computes from
  /// the norm's operands as it reads A (RowPrologue.h), if any.
  const RowPrologue *prologue = nullptr;
  /// A projection of the same rows, K and N whose sums only this one's
  /// epilogue reads (gate, for up's act(gate) · up): the few-rows kernel
  /// computes them beside this one's, and `sibling` has no few-rows kernel
  /// of its own (`computedBySibling`).
  const Projection *sibling = nullptr;
  bool computedBySibling = false;
};

/// Projections of at most this many rows (decode: a row a sequence) run by
/// default on the few-rows kernel, which streams the weights through all
/// the multiprocessors, rather than on tensor-core tiles of 64 or 128
/// rows, whose few blocks would each stream a wide strip of them; at most
/// kMaxFewRows (each row's sums stay in registers).
constexpr int64_t kDefaultFewRows = 8;
constexpr int64_t kMaxFewRows = 16;

/// The values of `p`'s epilogue at [row, column + i] for i below the
/// number of `sums`, whose sums they are, as a vector; `operands` are
/// [M, N] views of the epilogue's operands (null for C's sums), read as
/// vectors of `alignment` when given. `siblingSums`, if given, are the
/// sibling's sums there, read instead of its C.
Value evaluateEpilogue(OpBuilder &b, Location loc, const Projection &p,
                       ArrayRef<Value> operands, ArrayRef<Value> sums,
                       Value row, Value column,
                       ArrayRef<Value> siblingSums = {},
                       llvm::MaybeAlign alignment = std::nullopt);

/// A gpu.launch of `blocks` blocks computing `p` when it has at most
/// `maxRows` rows: a warp per pair of columns, each lane 8 elements of K
/// at a time, 16-byte loads of B's two rows and of each row of A, f32 sums
/// reduced across the warp, the result (or the epilogue's values, into
/// `operands.back()`) stored by lane 0. `blocks`: fewRowsBlocks(...) or 0.
void buildFewRowsKernel(OpBuilder &b, Location loc, const Projection &p,
                        int64_t maxRows, Value blocks,
                        ArrayRef<Value> operands);

/// The blocks of the few-rows kernel for `columns` columns.
int64_t fewRowsBlocks(int64_t columns);

} // namespace mlir::tfm

#endif // TFM_LIB_CODEGEN_GPU_PROJECTION_H
