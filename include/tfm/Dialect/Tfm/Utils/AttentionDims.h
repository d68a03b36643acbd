//===- AttentionDims.h - names the roles of attention dims ------*- C++ -*-===//
//
// One vocabulary for the dimensions of `tfm.attention`, shared by the
// verifier, the decompositions and (later) tiling and lowering.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DIALECT_TFM_UTILS_ATTENTIONDIMS_H
#define TFM_DIALECT_TFM_UTILS_ATTENTIONDIMS_H

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::tfm {

/// Positions of the dims in the `[B, H, S, D]` layout of query, key, value
/// and result.
enum AttentionDim : unsigned { kBatch = 0, kHeads = 1, kSeq = 2, kHead = 3 };

/// The sizes of an attention problem; dynamic sizes are
/// `ShapedType::kDynamic`.
struct AttentionDims {
  int64_t batch;      // B
  int64_t queryHeads; // Hq
  int64_t kvHeads;    // Hkv
  int64_t querySeq;   // Sq
  int64_t kvSeq;      // Skv
  int64_t headDim;    // D: query/key feature width
  int64_t valueDim;   // Dv: value/result feature width

  /// Reads the dims from rank-4 query, key and value types. Batch and key
  /// sequence come from the query and key; the caller verifies agreement.
  static AttentionDims get(ShapedType query, ShapedType key, ShapedType value) {
    return {query.getDimSize(kBatch), query.getDimSize(kHeads),
            key.getDimSize(kHeads),   query.getDimSize(kSeq),
            key.getDimSize(kSeq),     query.getDimSize(kHead),
            value.getDimSize(kHead)};
  }

  /// Query heads served by one key/value head (Hq / Hkv).
  int64_t groupSize() const { return queryHeads / kvHeads; }
  /// The key/value head read by query head `h`.
  int64_t kvHeadFor(int64_t h) const { return h / groupSize(); }
  /// The absolute position of query row `i` (bottom-right alignment).
  int64_t queryPosition(int64_t i) const { return i + kvSeq - querySeq; }

  /// Shape of the result, `[B, Hq, Sq, Dv]`.
  SmallVector<int64_t, 4> resultShape() const {
    return {batch, queryHeads, querySeq, valueDim};
  }
  /// Full shape a dense mask or bias broadcasts to, `[B, Hq, Sq, Skv]`.
  SmallVector<int64_t, 4> scoreShape() const {
    return {batch, queryHeads, querySeq, kvSeq};
  }
};

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_UTILS_ATTENTIONDIMS_H
