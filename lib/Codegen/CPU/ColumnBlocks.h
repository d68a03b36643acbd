//===- ColumnBlocks.h - one column block of a CPU projection ----*- C++ -*-===//
//
// The two ways tfm-cpu-tile-projections (TileProjections.cpp) computes one
// [M, NB] column block of a projection: over panels of its weights packed
// per block or once (PackedColumnBlock.cpp), and, for bf16 on AMX, over
// its weights read in place by the tiles (InPlaceAMX.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_CPU_COLUMNBLOCKS_H
#define TFM_LIB_CODEGEN_CPU_COLUMNBLOCKS_H

#include "ProjectionBlocks.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm::projection {

/// Rows of a bf16 projection up to which AMX tiles read the weights in
/// place as their A operand (inPlaceAMXColumnBlock) rather than packing
/// them into pairs. Intel Xeon, 2 threads, issue 14's shapes with their
/// weights in cache: 1.07-1.7x the packed form at 32 rows, 1.0-1.2x at 128;
/// in the whole bf16 model, weights from memory: 1.05x at S = 64, 0.96x
/// at S = 128.
constexpr int64_t kInPlaceAMXRows = 64;

/// Rows from which AMX tiles that read the weights in place (the rows in a
/// zero-padded 32-row block) beat streaming the weights through dot
/// products. Whole bf16 model, Intel Xeon, 2 threads: 0.88x at one row,
/// 1.09x at 2, 1.17x at 4, 1.7x at 8, 2.2x at 12.
constexpr int64_t kInPlaceAMXMinRows = 2;

/// The packed form of TileProjections.cpp's file comment for one column block:
/// Kᵀ panels packed to f32, MR x NR register blocks over the rows, then the
/// rows left. With `pairs` (canPackBF16Dot), panels of bf16 pairs for dot
/// products or AMX tiles instead, over bf16 rows with no scale or transform
/// left. With a `transform` (a projection that transformsRows), each [M, KC]
/// panel of the rows is transformed first, once per column block. On AMX tiles,
/// the rows after the whole 32-row blocks are `amxTail` (paddedTailRows of
/// `a`), one more block. With `prepacked` (prepackedWeight, f32 only), the
/// panels are slices of it instead, scale and all.
Value packedColumnBlock(OpBuilder &builder, Location loc, Value a, Value w,
                        Value scale, linalg::GenericOp transform, Value init,
                        Value nBlock, const Blocking &blocking, bool pairs,
                        bool amx, Value amxTail, Value prepacked);

/// The rows [M, K] bf16 of a projection in AMX pairs for inPlaceAMXColumnBlock:
/// [ceil(M / 32), K / 2, 2 x 32], the 32-row block at m0 as [K/2, 32, 2],
/// the last one padded with rows of zeros.
Value inPlaceRowPairs(OpBuilder &builder, Location loc, Value rows);

/// One [M, NB] column block of a bf16 projection on AMX tiles that read its
/// weights in place: `init` + rows · w[nBlock : +NB, :]ᵀ where `rows` are
/// bf16 [M, K] and `rowPairs` their inPlaceRowPairs. Each 32-column block
/// of weights (in L2 after the first) against every 32-row block
/// (inPlaceAMXBlock), the rows after the whole blocks as one more, padded
/// with zero rows: tiles of zeros cost less than those rows' dot products
/// (2x for the whole model at S = 48).
Value inPlaceAMXColumnBlock(OpBuilder &builder, Location loc, Value rows,
                            Value rowPairs, Value w, Value init, Value nBlock);

} // namespace mlir::tfm::projection

#endif // TFM_LIB_CODEGEN_CPU_COLUMNBLOCKS_H
