//===- AttentionKernel.h - the tensor-core attention kernel -----*- C++ -*-===//
//
// The kernel tfm-gpu-lower-buffer-attention builds for one
// tfm.buffer_attention (FlashAttention.cpp): its row splits and the builder
// of its body. AttentionKernel.cpp holds the block's setup, the masks and
// the online softmax, and the output; AttentionTileLoops.cpp the loops over
// key tiles (and the producer warpgroup's).
//
// A block of 8 warps per (batch, query head, 128 query rows), each warp 16
// rows whose Q it keeps in registers, walks the visible key range in tiles
// of 64 keys (RowSplit::keys) that cp.async brings into shared memory (V of
// a tile while its scores are computed, K of the next while P·V runs); QKᵀ
// and P·V are mma.sync m16n8k16 with f32 accumulators fed by ldmatrix, the
// online softmax runs in the accumulators' registers (a row is held by the 4
// lanes of a quad), and masks are checked only in the tiles they cut. RowSplit
// names the other forms: 4 warps of 32 rows, split-KV decode, and on sm_90a
// warpgroup MMA with TMA loads, warp specialization and ping-pong
// (FlashAttention-3).
//
// Shared-memory rows are D/8 chunks of 16 bytes stored with the chunk index
// XORed by the row's low 3 bits, so that the 8 row addresses of an
// ldmatrix matrix fall into 8 different bank groups.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_GPU_ATTENTIONKERNEL_H
#define TFM_LIB_CODEGEN_GPU_ATTENTIONKERNEL_H

#include "TensorCoreBuilder.h"

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <array>
#include <optional>

namespace mlir::tfm::attention {

constexpr int64_t kRows = 128; // query rows of a block
/// Warp-specialized, the registers a thread of the producer warpgroup
/// keeps and those a thread of a tile warpgroup takes: 40 · 128 + 232 · 256
/// is what 384 threads have at 168 each (CUTLASS's split).
constexpr int32_t kProducerRegisters = 40;
constexpr int32_t kTileRegisters = 232;
/// Named barriers: 0 is the block's, kOwnBarrier + i tile warpgroup i's own
/// (its 128 threads), kTurnBarrier + i tile warpgroup i's turn (ping-pong),
/// kTilesBarrier both tile warpgroups' (their 256 threads: the staged
/// results).
constexpr int32_t kOwnBarrier = 1;
constexpr int32_t kTurnBarrier = 3;
constexpr int32_t kTilesBarrier = 5;

/// Whether the kernel computes attention of `query` and `value` types: both
/// bf16 or both f16, head dim 64 or 128 (shared memory holds a [keys, D]
/// K and V tile; chunk swizzling needs D/8 >= 8).
bool kernelTakes(ShapedType query, ShapedType value);

/// A memref type for reading `type` in place: any offset and outer strides,
/// unit innermost stride (what the kernel's cp.async copies need).
MemRefType bufferType(RankedTensorType type);

/// How a block's query rows are split among its warps.
struct RowSplit {
  /// 16: 8 warps, each its rows' Q in registers. 32 (FlashAttention-2's
  /// split): 4 warps, each K and V fragment read from shared memory feeding
  /// two row tiles; Q in registers at head dim 64, and at 128 in shared
  /// memory, read per key tile (registers would not hold it beside the 128
  /// accumulators).
  int64_t warpRows;
  int64_t headDim;
  /// Keys of a tile: 64, or with warpgroups also 128 (FlashAttention-3's
  /// tile at head dim 128): half the tiles, so half the online softmax's
  /// rescaling of O and of the waits, for twice the scores in registers.
  int64_t keys = 64;
  /// Split-KV decode (FlashDecoding): one warp of 16 rows holding every
  /// query of a KV head's group (group · Sq <= 16, so each K and V tile is
  /// read once for the group), a block per (key range, KV head, batch);
  /// with several ranges, each writes its f32 rows and their log-sum-exp,
  /// and a second kernel combines them.
  bool packed = false;
  /// Warpgroup MMA (sm_90a; with 16 rows a warp, not packed): the 8 warps
  /// as 2 warpgroups of 64 rows, QKᵀ and P·V as wgmma m64nNk16 with A (Q,
  /// then P) in registers and B (K, then V) read from shared memory through
  /// descriptors, so no ldmatrix; K and V tiles as panels of 64 columns.
  bool warpgroups = false;
  /// With warpgroups (FlashAttention-3's intra-warpgroup overlap): K and V
  /// double-buffered, each tile's QKᵀ issued together with the previous
  /// tile's P·V, and the tile's softmax run while that P·V does.
  bool overlap = false;
  /// With warpgroups: each K and V tile loaded by TMA (thread 0 issues a
  /// box per 64 columns of D; a barrier object per K and V buffer), the
  /// rows of V past the kv length zeroed once they land.
  bool tma = false;
  /// With TMA (FlashAttention-3's warp specialization): a producer
  /// warpgroup first, whose thread 0 issues every K and V load into double
  /// buffers once both tile warpgroups have freed the buffer (a second
  /// barrier object per buffer); no block barrier per tile. setmaxnreg
  /// moves registers from the producer to the tile warpgroups. With
  /// overlap, the first tile's P·V of "the tile before" reads a zeroed
  /// tile of its own, as the producer may fill both V buffers at once.
  bool specialized = false;
  /// Specialized with overlap (FlashAttention-3's ping-pong): the two tile
  /// warpgroups take turns issuing a tile's products, so that one's softmax
  /// runs while the other's products do.
  bool pingpong = false;

  /// The warps holding query rows (the producer's are apart).
  int64_t warps() const { return packed ? 1 : kRows / warpRows; }
  int64_t blockRows() const { return warps() * warpRows; }
  int64_t threads() const { return 32 * warps() + (specialized ? 128 : 0); }
  /// The threads that zero a tile's rows together: a tile warpgroup's when
  /// specialized (each runs on its own), else the block's.
  int64_t zeroingThreads() const { return specialized ? 128 : threads(); }
  int64_t rowTiles() const { return warpRows / 16; }
  /// Q read from shared memory per key tile rather than kept in registers.
  bool queryShared() const { return warpRows > 16 && headDim > 64; }
  /// The block's rows of Q come into shared memory (16-byte copies along
  /// rows), whence ldmatrix reads them: when shared, and with TMA. The
  /// other forms gather them from global memory into registers (4 bytes of
  /// each of 8 rows a load): beside cp.async's tile copies the Q copy's
  /// arithmetic raised the registers past 128 at head dim 64 (126 to 146),
  /// where TMA's kernels kept theirs.
  bool queryCopied() const { return !packed && (tma || queryShared()); }
  /// K and V tiles (each double-buffered with overlap or specialized), then
  /// the zeroed tile, then the block's rows of Q if copied, then with TMA a
  /// barrier object (8 bytes) per K and V buffer, and specialized a second
  /// one each.
  int64_t buffers() const { return overlap || specialized ? 2 : 1; }
  bool zeroTile() const { return specialized && overlap; }
  int64_t tilesBytes() const {
    return (2 * buffers() + (zeroTile() ? 1 : 0)) * tileBytes();
  }
  int64_t barrierObjects() const {
    return tma ? (specialized ? 4 : 2) * buffers() : 0;
  }
  int64_t tileBytes() const { return keys * headDim * 2; }
  /// With warpgroup MMA, K and V tiles are stored as panels of 64 columns
  /// of D (128-byte rows, wgmma's swizzle atoms), this many bytes apart.
  int64_t panelBytes() const { return keys * 128; }
  int64_t queryBytes() const {
    return queryCopied() ? blockRows() * headDim * 2 : 0;
  }
  int64_t sharedBytes() const {
    return tilesBytes() + queryBytes() + barrierObjects() * 8;
  }
};

/// What the kernel reads and writes: memrefs `q`, `k`, `v` (and `lengths`)
/// and `out`; `ks`, `vs` its [keys, D] shared buffers, `qs` (when
/// RowSplit::queryCopied) the block's [128, D] rows of Q, chunks swizzled
/// as mma.sync's K tiles are. A packed split with
/// several key ranges writes `partial` ([ranges, B, H, Sq, D] f32, each row
/// divided by its own sum) and `lse` ([ranges, B, H, Sq], log2 of each
/// row's sum of exp2, -inf where it saw no key) instead. With TMA,
/// `barriers` holds K's and V's barrier objects (i64), and `kMap` and
/// `vMap` are K's and V's tensor maps (pointers); specialized with overlap,
/// `zeros` is the zeroed tile. Unless packed, `staging` is a [block rows,
/// D] view over the K and V tiles, which take the results once every warp
/// is done with them (storeResults).
struct KernelOperands {
  Value q, k, v, lengths, out, ks, vs, qs, partial, lse;
  Value barriers, kMap, vMap, zeros, staging;
};

/// Builds the kernel of one attention op inside a gpu.launch.
class KernelBuilder : TensorCoreBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, BufferAttentionOp op,
                RowSplit split);

  /// The kernel body, in `launch`.
  void build(gpu::LaunchOp launch, const KernelOperands &operands);

private:
  /// A query row of the block as a lane holds it: its head and its query
  /// index (clamped into range, so loads stay in bounds), and whether it
  /// exists.
  struct QueryRow {
    Value head, query, exists;
  };
  /// Per row tile, 8-key (or 16-key step) tiles of 4 registers.
  using Tiles = SmallVector<SmallVector<SmallVector<Value>>>;

  // The block's setup (AttentionKernel.cpp), in the order build() runs it.
  /// The block's query rows and the key tiles it walks.
  void locateBlock();
  /// Specialized: the barrier objects, and the producer warpgroup's loop;
  /// the insertion point is left in the tile warpgroups' branch.
  void splitRoles();
  /// The lane's rows and ldmatrix addressing; the warp's rows of Q copied
  /// into `qs` (RowSplit::queryCopied) or gathered into registers.
  void placeRows();
  /// K of the first tile, if any.
  void loadFirstTile();
  /// When copied, once the warp's rows of Q have landed in `qs`: read
  /// into registers (unless queryShared, which reads them per key tile).
  void readQuery();
  /// O / l stored (when packed with several key ranges, in f32 with log2
  /// of the row's sum of exp2 beside). Unless packed, through `staging`:
  /// each lane stores its pairs there (16-byte chunk c of row r at
  /// c ^ (r mod 8), so that a warp's 8 rows of a chunk fall on different
  /// banks), then each warp stores its rows 16 bytes at a time, a row's
  /// chunks by consecutive lanes (16-byte stores where the output's rows
  /// start on 16 bytes, asked at run time), rather than 4 bytes of each of
  /// 8 rows a store.
  void storeResults(ArrayRef<Value> results);
  void storeStaged(ArrayRef<SmallVector<Value>> pairs);
  /// Row `half` of row tile `mt` of `results`: its sum over the quad,
  /// whether it is positive (the row saw a key), and the lane's f32 pairs
  /// of each column tile divided by it (zeros where it saw none).
  struct NormalizedRow {
    Value sum, positive;
    SmallVector<Value> pairs;
  };
  NormalizedRow normalizeRow(ArrayRef<Value> results, int64_t mt, int64_t half);
  /// A barrier of the threads holding query rows (the producer aside).
  void rowsBarrier();

  // The online softmax (AttentionKernel.cpp). Loop state: m, then l, of
  // rows quadRow and quadRow + 8 of each row tile, then the output
  // accumulators (per row tile, D/8 tiles of 4).
  int64_t maxAt(int64_t mt, int64_t half) const { return mt * 2 + half; }
  int64_t sumAt(int64_t mt, int64_t half) const {
    return 2 * split.rowTiles() + mt * 2 + half;
  }
  int64_t accAt(int64_t mt, int64_t d) const {
    return 4 * split.rowTiles() + (mt * headDim / 8 + d) * 4;
  }
  /// Scores scaled to log2 units (softcapped), then -inf where the mask
  /// hides them; returns the tile's end.
  Value maskScores(Tiles &scores, Value tileStart);
  /// The online softmax of a masked tile: `next` gets m and l from `state`
  /// (and O rescaled, if `rescale`), `scores` become p; returns each
  /// (row tile, half)'s correction exp2(m_old - m_new).
  SmallVector<Value> softmaxStep(Tiles &scores, ValueRange state,
                                 SmallVector<Value> &next, bool rescale);
  /// P as A operands: the accumulator layout of two 8-key tiles is the A
  /// layout of one 16-key step.
  Tiles probabilitiesOf(Tiles &scores);
  /// The A operand registers of row tile `mt`, 16-column step `kk` of Q.
  SmallVector<Value> queryOperand(int64_t mt, int64_t kk);

  // The loops over key tiles (AttentionTileLoops.cpp); each returns the
  // loop state after the last tile.
  /// A tile at a time: its scores, softmax and P·V.
  SmallVector<Value> sequentialTiles();
  /// FlashAttention-3's overlap (warpgroups): QKᵀ of tile n with P·V of
  /// tile n - 1.
  SmallVector<Value> overlappedTiles();
  /// Specialized: the producer's loop (its thread 0's), each tile's K and
  /// V loads, each once both tile warpgroups have freed its buffer's use
  /// before.
  void produce();

  // Tiles in shared memory (AttentionKernel.cpp).
  /// Copies `count` rows (a tile's keys, or the block's rows of Q) from
  /// `first` of head `head` of `source` ([B, H, S, D]) into the swizzled shared
  /// buffer `tile`, rows at or past `limit` read as row `limit - 1` (they are
  /// masked or never stored), as one commit group. K and V tiles are limited to
  /// the batch's kv length: a cache's rows past it may never have been written,
  /// and a NaN there would survive its probability of 0 in P·V. With `buffer`,
  /// into that buffer of a double-buffered `tile`.
  void copyTile(Value source, Value head, Value first, Value limit, Value tile,
                int64_t count, Value buffer = nullptr);
  /// TMA: thread 0's loads of the tile's rows from `first` of KV head `head`
  /// through `map` into the panels of `tile` (of its buffer `buffer` if
  /// double-buffered), counted on `barrier`; rows past the cache are
  /// zeros.
  void loadTileBoxes(Value map, Value head, Value first, Value tile,
                     Value barrier, Value buffer = nullptr);
  /// Zeros in the rows of panelled `tile` (its buffer `buffer` if
  /// double-buffered) from `firstRow` on (every row if null), stored
  /// through the generic proxy: wgmma needs them fenced.
  void zeroRowsFrom(Value tile, Value firstRow, Value buffer = nullptr);
  /// zeroRowsFrom, fenced and published by the block's barrier, or
  /// specialized by the tile warpgroup's own (kOwnBarrier + its index).
  void zeroRowsForWgmma(Value tile, Value firstRow, Value buffer = nullptr);
  /// Specialized: the barrier of this tile warpgroup's 128 threads
  /// (kOwnBarrier + its index).
  void ownBarrier();
  /// The tiles that cp.async brought have landed, for every thread (and
  /// for wgmma, which reads shared memory through the async proxy).
  void waitForTiles();
  /// The shared address of `tile`'s buffer `buffer` (of the whole tile if
  /// null).
  Value bufferAddress(Value tile, Value buffer);
  /// The ldmatrix.x4 registers whose lane reads row `row` (low 3 bits: the
  /// lane's) and chunk `chunkBase ^ laneXor` of a swizzled tile.
  SmallVector<Value> loadSwizzled(Value tile, Value row, int64_t chunkBase,
                                  Value laneXor, bool transpose) {
    return loadMatrices(tile, {row, mul(xorIndex(laneXor, chunkBase), 8)},
                        transpose);
  }
  /// The A operand registers of rows `low` and `high` (a lane's rows g
  /// and g + 8), columns [column, column + 16) of `q`: read from global
  /// memory once per block, unless copied.
  SmallVector<Value> loadQuery(QueryRow low, QueryRow high, Value column);
  /// When copied: the warp's rows of Q (clamped to the last query) into
  /// `qs` by cp.async, 16-byte chunks, a warp's along rows, as one commit
  /// group.
  void copyQuery();

  // Warps and warpgroups (AttentionKernel.cpp).
  Value shuffleXor(Value value, int32_t offset);
  /// The maximum (or sum) of a row held by the 4 lanes of a quad.
  Value quadReduce(Value value, bool sum);
  /// Ping-pong: this tile warpgroup waits for its turn to issue products
  /// (named barrier kTurnBarrier + its index, which it syncs on with the
  /// other's 128 arrivals), and passes the turn to the other.
  void waitForTurn() { turnBarrier(tileGroup, /*wait=*/true); }
  void passTurn() {
    turnBarrier(arith::SubIOp::create(b, loc, i32(1), tileGroup),
                /*wait=*/false);
  }
  void turnBarrier(Value group, bool wait);
  Value i32(int32_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
  }
  /// Specialized: this tile warpgroup is done with buffer `buffer` of K
  /// (or V) for this tile (one arrival per tile warpgroup).
  void release(Value freedBarrier);
  /// The descriptors of `count` B operands at shared address `base` +
  /// `offset(i)`. Computed before a batch's fence: ptxas serializes every
  /// wgmma of a batch where other instructions define their inputs between
  /// them.
  SmallVector<Value> descriptors(Value base, int64_t count,
                                 function_ref<int64_t(int64_t)> offset,
                                 int64_t leadingBytes);
  /// The products issued only (no fence, commit or wait).
  SmallVector<Value> issueProducts(ArrayRef<SmallVector<Value>> a,
                                   ArrayRef<Value> bDescriptors,
                                   bool transposeB, SmallVector<Value> acc);
  /// The warpgroup's wgmma products of one batch, waited for: `acc` +
  /// Σ_i a[i]·B_i, where B_i is at shared address `base` + `offset(i)`
  /// (`leadingBytes` apart in the descriptor), N-major if `transposeB`.
  SmallVector<Value> warpgroupProducts(ArrayRef<SmallVector<Value>> a,
                                       Value base,
                                       function_ref<int64_t(int64_t)> offset,
                                       int64_t leadingBytes, bool transposeB,
                                       SmallVector<Value> acc);

  // TMA: K's and V's barrier objects; specialized, K's and V's buffer
  // freed.
  Value kBarrier(Value buffer) { return barrierPointer(io.barriers, buffer); }
  Value vBarrier(Value buffer) {
    return barrierPointer(io.barriers, add(buffer, split.buffers()));
  }
  Value kFreed(Value buffer) {
    return barrierPointer(io.barriers, add(buffer, 2 * split.buffers()));
  }
  Value vFreed(Value buffer) {
    return barrierPointer(io.barriers, add(buffer, 3 * split.buffers()));
  }
  bool leftBounded() const { return mask.getLeft() != MaskAttr::kUnbounded; }
  bool rightBounded() const { return mask.getRight() != MaskAttr::kUnbounded; }

  BufferAttentionOp op;
  RowSplit split;
  int64_t headDim, chunks, group;
  MaskAttr mask;
  /// Scores are kept as log2: exp2(s·scale·log2e - m).
  double scale, log2e;
  std::optional<double> softcap;

  gpu::LaunchOp launch;
  KernelOperands io;
  // Per thread; specialized, `tid` counts from the tile warpgroups' first
  // thread, and `tileGroup` is the thread's tile warpgroup (an i32 that
  // every thread of a warp holds from lane 0).
  Value tid, warp, lane, quadRow, quadColumn, batch, tileGroup;
  // The block: its heads, its key range (packed), its query rows
  // [firstRow, rowEnd) of `queries`, and those rows' positions (row i sits
  // at position i + offset).
  Value head, kvHead, range, queries, firstRow, rowEnd;
  Value offset, firstPosition, lastPosition;
  // The keys: the batch's kv length `keyEnd`, and the tiles walked,
  // [tileBegin, tileLimit).
  Value keyEnd, tileBegin, tileLimit;
  // The warp's first row in the block, a lane's rows (per row tile, halves
  // quadRow and quadRow + 8), its first column in an 8-column tile.
  Value warpRow, columnInTile;
  SmallVector<std::array<QueryRow, 2>> rows;
  // ldmatrix.x4 addressing: matrices 0..3 as rows +0/+8 then chunks +0/+1
  // (A operands, and V's transposed B operands of P·V), or chunks +0/+1
  // then rows +0/+8 (K's B operands of QKᵀ).
  Value rowsThenChunks, chunksThenRows, xorRowsThenChunks, xorChunksThenRows;
  /// Q in registers ([row tile][16-column step]), unless shared.
  Tiles queryRegs;
  Value negInf, zero;
  /// The loop state before the first tile.
  SmallVector<Value> init;
};

/// The packed kernel's key ranges combined: out[b, h, s, d] = Σ_r
/// 2^(lse_r - max) · partial[r, b, h, s, d] / Σ_r 2^(lse_r - max), 0 where
/// no range saw a key; a block of D threads per (query, head, batch), its
/// x extent 0 (no launch) for a single range.
void combineRanges(OpBuilder &b, Location loc, Value ranges, Value partial,
                   Value lse, Value out);

} // namespace mlir::tfm::attention

#endif // TFM_LIB_CODEGEN_GPU_ATTENTIONKERNEL_H
