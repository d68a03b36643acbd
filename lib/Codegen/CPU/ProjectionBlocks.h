//===- ProjectionBlocks.h - blocks of the CPU projection loops --*- C++ -*-===//
//
// What tfm-cpu-tile-projections (TileProjections.cpp) and its AVX-512 BF16
// dot-product kernels (BF16DotProducts.cpp) share: the block sizes, the
// slices of rank-2 tensors, and the dot-product forms.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_CPU_PROJECTIONBLOCKS_H
#define TFM_LIB_CODEGEN_CPU_PROJECTIONBLOCKS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfm::projection {

/// Columns of a thread's block of w: its packed KC x NB panels stay in L2
/// while the rows of a stream past it.
constexpr int64_t kMaxBlockColumns = 128;
/// Steps of k per packed panel: a [KC, NR] slice of it (32 KiB with NR = 32)
/// serves every register block of a chunk of rows; 256 rather than 128
/// halves the passes over the output (f32 projections 10% faster at
/// M = 512 on an Intel Xeon).
constexpr int64_t kMaxPanelDepth = 256;

/// Rows of a that pass every [KC, NR] panel of a column block before the
/// next rows do: a chunk of them ([MC, KC], 64 KiB in f32) and its output
/// rows stay in L2 across the panels. Unchunked, rows of a past a few
/// hundred came back from L3 for every panel (f32 M = 1024 ran at 72% of
/// the speed of M = 128 on an Intel Xeon, before f32 blocks took each
/// register block of rows across the panels instead). Rounded down to a
/// multiple of MR.
constexpr int64_t kMaxChunkRows = 128;

/// The largest multiple of `unit` that divides `size` and is at most
/// `limit`, or 0.
inline int64_t blockSize(int64_t size, int64_t unit, int64_t limit) {
  for (int64_t block = limit - limit % unit; block >= unit; block -= unit)
    if (size % block == 0)
      return block;
  return 0;
}

/// The register, panel and thread blocks of a projection: MR x NR
/// register blocks, KC-step panels, NB-column thread blocks.
struct Blocking {
  int64_t rows;    // MR
  int64_t columns; // NR
  int64_t block;   // NB
  int64_t depth;   // KC
};

/// A static slice [rows, cols] of a rank-2 tensor at (row, col).
inline Value slice2D(OpBuilder &b, Location loc, Value source, OpFoldResult row,
              OpFoldResult col, OpFoldResult rows, OpFoldResult cols) {
  OpFoldResult one = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(b, loc, source, {row, col},
                                        {rows, cols}, {one, one});
}

/// scale[k0 : +depth]: the steps of a column scale (an RMSNorm's weight)
/// that a panel of `depth` steps from k0 reads.
inline Value scaleSteps(OpBuilder &b, Location loc, Value scale,
                        OpFoldResult k0, int64_t depth) {
  return tensor::ExtractSliceOp::create(
      b, loc, scale, ArrayRef<OpFoldResult>{k0},
      ArrayRef<OpFoldResult>{b.getIndexAttr(depth)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

/// `tile` [rows, cols] inserted at (row, col) of `dest`: the sizes must be
/// the very values its slice was extracted with, so that bufferization sees
/// the pair as an in-place update.
inline Value insert2D(OpBuilder &b, Location loc, Value tile, Value dest,
               OpFoldResult row, OpFoldResult col, OpFoldResult rows,
               OpFoldResult cols) {
  OpFoldResult one = b.getIndexAttr(1);
  return tensor::InsertSliceOp::create(b, loc, tile, dest, {row, col},
                                       {rows, cols}, {one, one});
}


/// Called at each step of a loop over register blocks of rows, with the
/// block's first row (e.g. to spread prefetches over the products).
using RowBlockHook = function_ref<void(OpBuilder &, Location, Value m0)>;

/// Whether a column block of `blocking` over the bf16 weights `w` can take
/// the packed dot form (packBF16Pairs, dotRowBlocks).
bool canPackBF16Dot(Value w, const Blocking &blocking);

/// w[row : +rows, k0 : +depth] as [depth / 2, rows] i32 pairs of
/// consecutive k, for vdpbf16ps (a column scale goes on the rows:
/// preparedRows). With `asBF16`, bf16 [rows / 32, depth / 2, 2 x 32]: the
/// layout of AMX tiles of pairs, each 32-column panel contiguous. With
/// `zeroPastEnd`, rows of `w` past its last read as zeros.
Value packBF16Pairs(OpBuilder &builder, Location loc, Value w, Value row,
                    Value k0, int64_t rows, int64_t depth, bool asBF16 = false,
                    bool zeroPastEnd = false);

/// `y` [M, NR] += a[m0 : M, k0 : +KC] · the pairs `packed`[:, n1 : +NR]
/// over rows [begin, end) in steps of `rows`, calling `eachBlock` (if
/// any) at every step; `a` is bf16 (preparedRows).
Value dotRowBlocks(OpBuilder &builder, Location loc, Value a, Value packed,
                   Value n1, int64_t columns, Value y, Value k0, Value begin,
                   Value end, int64_t rows, RowBlockHook eachBlock = {});

/// Rows [row0, row0 + rows) of `a`, steps [k0, k0 + depth): transformed
/// first where there is a `transform` and times the column scale where
/// there is one (in f32), as `element` (f32, or rounded to bf16). Rows
/// of that type with neither as they are: a view.
Value preparedRows(OpBuilder &b, Location l, Value a, Value scale,
                   linalg::GenericOp transform, OpFoldResult row0,
                   OpFoldResult rows, OpFoldResult k0, int64_t depth,
                   Type element);

/// Rows and columns of an AMX register block: 2 x 2 tiles of 16 x 16 f32
/// sums (tmm0-3), with two 16-row tiles of `a` and two 16-column tiles of
/// pairs (tmm4-7) per 32 steps of k.
constexpr int64_t kAMXBlockRows = 32;
constexpr int64_t kAMXTileRows = 16;
constexpr int64_t kAMXBlockColumns = 32;

/// Steps of k per panel on AMX tiles: a block's accumulator tiles are
/// loaded and stored once per panel, so deeper panels than the dot
/// products' pay. Intel Xeon, 2 threads, issue 14's projections (bench/run.sh
/// projections --interleave): 2048 against 1024 steps 2-10% faster at 128
/// and 512 rows, 2-9% slower at 16; no limit (down's 5632 steps) 7% slower.
constexpr int64_t kMaxAMXPanelDepth = 2048;

/// Marks the 32 x 32 register blocks of bf16 pairs that tfm-cpu-lower-amx
/// runs on AMX tiles (amxRowBlocks); tfm-cpu-vectorize leaves them alone.
constexpr llvm::StringLiteral kAMXTilesAttr = "tfm.amx_tiles";

/// sums[r, c] += Σ_kp,t rowPairs[r, kp, t] · pairs[kp, c, t] ([R, KC/2, 2],
/// [KC/2, C, 2] and [R, C] f32): one generic marked kAMXTilesAttr, the
/// form tfm-cpu-lower-amx turns into AMX tiles.
Value amxTileBlock(OpBuilder &b, Location loc, Value rowPairs, Value pairs,
                   Value sums);

/// Whether a column block of `blocking` (its pairs packed asBF16) can run
/// its rows through AMX tiles: 32-column panels of 32-step multiples.
bool canUseAMXTiles(const Blocking &blocking, int64_t panelDepth);

/// `y` [M, 32] += a[m0 : M, k0 : +KC] · the bf16 pairs of the 32 columns
/// at n1 of `packed` (packBF16Pairs' asBF16 form) over rows [begin, end)
/// in blocks of `blockRows` (32): each block one generic marked
/// kAMXTilesAttr, y[m, n] += Σ_kp,t
/// a[m, kp, t] · p[kp, n, t] on [blockRows, KC/2, 2] and [KC/2, 32, 2]
/// views (correct as it is; AMX tiles once tfm-cpu-lower-amx rewrites it).
/// The blocks prefetch nothing: with the next panel's weight rows spread
/// over them (as the other blocks do) a 2048 x 2048 projection of 128 rows
/// ran 10-15% slower on an Intel Xeon, and with weights beyond its L3 no
/// faster.
Value amxRowBlocks(OpBuilder &builder, Location loc, Value a, Value packed,
                   Value n1, Value y, Value k0, Value begin, Value end,
                   int64_t blockRows);

/// `y` [M, N] f32 with its `count` (at most `rows`) rows from m0 replaced
/// by the first `count` rows of `sum(scratch)`, where `scratch` is a
/// [rows, N] block holding those rows of y over rows of zeros: a block of
/// rows padded with zeros summed into the real rows' part of y.
Value sumIntoPaddedRows(
    OpBuilder &b, Location loc, Value y, Value m0, Value count, int64_t rows,
    function_ref<Value(OpBuilder &, Location, Value scratch)> sum);

/// a[row0 : +count, k0 : +depth] (count at most `rows`) over a [rows,
/// depth] block of zeros.
Value zeroPaddedRows(OpBuilder &b, Location loc, Value a, Value row0,
                     OpFoldResult k0, Value count, int64_t rows, int64_t depth);

/// The rows of bf16 `a` [M, K] after its whole 32-row blocks as one [32, K]
/// block, padded with rows of zeros (amxTailBlock's `tail`).
Value paddedTailRows(OpBuilder &b, Location loc, Value a);

/// `y` [M, 32] += the rows of y after its whole 32-row blocks ([begin,
/// count)) times the pairs at n1 of `packed`, as amxRowBlocks, their
/// block of `tail` (paddedTailRows) at k0 summed on AMX tiles into a
/// [32, 32] f32 scratch of which only the real rows go back into y.
Value amxTailBlock(OpBuilder &builder, Location loc, Value tail, Value packed,
                   Value n1, Value y, Value k0, Value begin, Value count);

/// Whether the streamed form can use dot products for a block of `block`
/// rows of `w` (streamedDotColumnBlock).
bool canStreamBF16Dot(Value w, int64_t block);

/// Rows below which bf16 weights that can stream through dot products do,
/// rather than being packed into pairs. Measured on AMD Zen 4, 2 threads,
/// K = 2048: streaming 1.1-1.4x faster at M = 16-48, level at 64-96,
/// slower at 128 (docs/PERFORMANCE.md).
constexpr int64_t kDotStreamRows = 64;

/// One [M, NB] column block of a projection of a few rows, its bf16
/// weights streamed through vdpbf16ps: `init` + a · w[nBlock : +NB, :]ᵀ,
/// `a` the rows rounded to bf16 (after any transform and column scale)
/// once per call. Rows in blocks of 4 against 4 weight rows at a time, the
/// rows left one by one against 8.
Value streamedDotColumnBlock(OpBuilder &builder, Location loc, Value a, Value w,
                             Value init, Value nBlock);

/// The streamed form for a few rows, one at a time, its weights read in
/// place (`init` + a[firstRow :, :] · w[nBlock : +NB, :]ᵀ for the rows
/// from firstRow): lane-wise partial dot products with every weight row
/// of the block, then their lane sums.
Value streamedColumnBlock(OpBuilder &builder, Location loc, Value a, Value w,
                          Value scale, linalg::GenericOp transform, Value init,
                          Value nBlock, int64_t lanes, Value firstRow);

/// Whether the streamed form can run blocks of rows through f32
/// multiply-adds of `lanes` (streamedFMAColumnBlock) for a block of `block`
/// rows of `w`: 16 lanes (AVX-512: 32 registers) and whole groups of 4
/// weight rows.
bool canStreamFMA(Value w, int64_t block, int64_t lanes);

/// Rows below which weights that can stream through f32 multiply-adds do
/// (streamedFMAColumnBlock), rather than being packed. Measured on an Intel
/// Xeon, 2 threads, the issue-14 model with every position's logits
/// (bench/run.sh model --interleave), against packing from 8 rows on:
/// 1.35x at S = 8, 1.35x at 16, 1.17x at 24, 1.05x at 32, 1.02x at 40
/// (docs/PERFORMANCE.md).
constexpr int64_t kFMAStreamRows = 40;

/// One [M, NB] column block of a projection of a few rows, its weights
/// read in place: `init` + x · w[nBlock : +NB, :]ᵀ, `x` the f32 rows as
/// prepared once per call (preparedRows: transformed and times the column
/// scale where the projection has them); for each group of 4 weight rows, K in
/// chunks, and in each chunk every block of 4 rows against the group (16
/// accumulators of `lanes` f32 lanes, kept in a scratch between chunks), then
/// the lane sums, the last block filled with the last row (its sums dropped).
/// Below 4 rows: 2 or 3 against 8 weight rows at a time, one row as
/// streamedColumnBlock.
Value streamedFMAColumnBlock(OpBuilder &builder, Location loc, Value x, Value w,
                             Value init, Value nBlock, int64_t lanes);

} // namespace mlir::tfm::projection

#endif // TFM_LIB_CODEGEN_CPU_PROJECTIONBLOCKS_H
