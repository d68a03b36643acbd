//===- AttentionTiles.h - the tiles of tiled attention ----------*- C++ -*-===//
//
// The pieces tfm-tile-attention builds its loops from: the query tile of a
// (batch, kv head, query tile) work item, the key loop of
// tfm.online_attention steps over it, and the normalization of the result.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_DIALECT_TFM_TRANSFORMS_ATTENTIONTILES_H
#define TFM_LIB_DIALECT_TFM_TRANSFORMS_ATTENTIONTILES_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Utils/LinalgBuilder.h"

namespace mlir::tfm::detail {

/// Everything the tile computations need, for one (b, h, query tile).
///
/// A tile has static shapes: its M = G * TQ rows stack the TQ query rows of
/// each of the G heads of kv head h (row m is head g = m / TQ, query row
/// i = m % TQ), and its key tiles have TK keys. Rows past the query
/// sequence and keys past the visible range are padding: padded rows repeat
/// the last valid row and are never written out; padded keys are masked.
struct TileContext {
  AttentionOp op;
  int64_t group;          // G
  int64_t rowsPerHead;    // TQ
  int64_t keysPerTile;    // TK
  Value batch, kvHead;    // b, h
  Value queryBegin, rows; // q0, valid rows per head (<= TQ)
  Value offset;           // Skv - Sq
  MaskAttr mask;

  int64_t tileRows() const { return group * rowsPerHead; }
};

/// The query rows of the tile [M, D], in the query's element type, gathered
/// once per query tile.
Value gatherQueryTile(LinalgBuilder &lb, const TileContext &ctx);

/// The online-softmax state (m, l, acc) of a query tile after the key tiles
/// at [loopBegin, loopEnd) (TK apart, starting at `firstTile` + a multiple
/// of TK); keys at or past `keyEnd` are masked. Complete tiles are read in
/// place; the partial tile that ends the range, if this run holds it, is
/// peeled off and gathered at clamped key indices.
SmallVector<Value> attendKeyTiles(LinalgBuilder &lb, const TileContext &ctx,
                                  Value queryTile, Value firstTile,
                                  Value loopBegin, Value loopEnd, Value keyEnd,
                                  int64_t valueDim);

/// `l == 0 ? 0 : acc / l`, converted to `elementType`.
Value normalize(OpBuilder &b, Location loc, Value acc, Value sum,
                Type elementType);

} // namespace mlir::tfm::detail

#endif // TFM_LIB_DIALECT_TFM_TRANSFORMS_ATTENTIONTILES_H
