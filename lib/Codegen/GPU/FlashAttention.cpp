//===- FlashAttention.cpp - tfm.attention on tensor cores -----------------===//
//
// Three passes: tfm-gpu-flash-attention puts a bf16/f16 `tfm.attention` on
// buffers (tfm.buffer_attention) before bufferization, and
// tfm-gpu-lower-buffer-attention replaces that by one FlashAttention-2
// style kernel once buffers and their deallocation are final:
// a block of 8 warps per (batch, query head, 128 query rows), each warp 16
// rows whose Q it keeps in registers; the block walks the visible key range
// in tiles of 64 keys that cp.async brings into shared memory (V of a tile
// while its scores are computed, K of the next while P·V runs), QKᵀ and P·V
// as mma.sync m16n8k16 with f32 accumulators fed by ldmatrix, the online
// softmax in the accumulators' registers (a row is held by the 4 lanes of a
// quad), and mask checks only in the tiles the mask cuts. With split-kv,
// decode packs a KV head's whole group of queries into one warp's 16 rows,
// the blocks split the keys, and a second kernel combines their partial
// results by their log-sum-exp (FlashDecoding). Between the two,
// tfm-gpu-fold-attention-transposes has the kernel read and write its
// operands through transposed views, and turns transposes that move only
// unit dims into reshapes.
//
// Shared-memory rows are D/8 chunks of 16 bytes stored with the chunk index
// XORed by the row's low 3 bits, so that the 8 row addresses of an
// ldmatrix matrix fall into 8 different bank groups.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "KernelLaunch.h"
#include "TensorCoreBuilder.h"

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Utils/AttentionChecks.h"
#include "tfm/Dialect/Tfm/Utils/AttentionDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUFLASHATTENTIONPASS
#define GEN_PASS_DEF_TFMGPUFOLDATTENTIONTRANSPOSESPASS
#define GEN_PASS_DEF_TFMGPULOWERBUFFERATTENTIONPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

constexpr int64_t kRows = 128; // query rows of a block
constexpr int64_t kKeys = 64;  // keys of a tile
/// With warpgroup MMA, K and V tiles are stored as panels of 64 columns of
/// D (128-byte rows, wgmma's swizzle atoms), this many bytes apart.
constexpr int64_t kPanelBytes = kKeys * 128;
/// Warp-specialized, the registers a thread of the producer warpgroup
/// keeps and those a thread of a tile warpgroup takes: 40 · 128 + 232 · 256
/// is what 384 threads have at 168 each (CUTLASS's split).
constexpr int32_t kProducerRegisters = 40;
constexpr int32_t kTileRegisters = 232;
/// Named barriers: 0 is the block's, kOwnBarrier + i tile warpgroup i's own
/// (its 128 threads), kTurnBarrier + i tile warpgroup i's turn (ping-pong).
constexpr int32_t kOwnBarrier = 1;
constexpr int32_t kTurnBarrier = 3;

/// Whether the kernel computes attention of `query` and `value` types: both
/// bf16 or both f16, head dim 64 or 128 (shared memory holds a [64, D] K
/// and V tile; chunk swizzling needs D/8 >= 8).
bool kernelTakes(ShapedType query, ShapedType value) {
  Type element = query.getElementType();
  int64_t dim = query.getDimSize(kHead);
  return (element.isBF16() || element.isF16()) &&
         value.getElementType() == element && (dim == 64 || dim == 128) &&
         value.getDimSize(kHead) == dim;
}

/// Split-KV decode: blocks over a batch's KV range aim at about this many
/// (some 4 a multiprocessor of an H100), each walking at least
/// kMinSplitKeys keys.
constexpr int64_t kTargetBlocks = 512;
constexpr int64_t kMinSplitKeys = 128;

/// How a block's query rows are split among its warps.
struct RowSplit {
  /// 16: 8 warps, each its rows' Q in registers. 32 (FlashAttention-2's
  /// split): 4 warps, each K and V fragment read from shared memory feeding
  /// two row tiles; Q in registers at head dim 64, and at 128 in shared
  /// memory, read per key tile (registers would not hold it beside the 128
  /// accumulators).
  int64_t warpRows;
  int64_t headDim;
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
  bool queryShared() const { return warpRows > 16 && headDim > 64; }
  /// K and V tiles (each double-buffered with overlap or specialized), then
  /// the zeroed tile or Q's if shared, then with TMA a barrier object (8
  /// bytes) per K and V buffer, and specialized a second one each.
  int64_t buffers() const { return overlap || specialized ? 2 : 1; }
  bool zeroTile() const { return specialized && overlap; }
  int64_t tilesBytes() const {
    return (2 * buffers() + (zeroTile() ? 1 : 0)) * tileBytes();
  }
  int64_t barrierObjects() const {
    return tma ? (specialized ? 4 : 2) * buffers() : 0;
  }
  int64_t tileBytes() const { return kKeys * headDim * 2; }
  int64_t sharedBytes() const {
    return tilesBytes() + (queryShared() ? blockRows() * headDim * 2 : 0) +
           barrierObjects() * 8;
  }
};

/// Builds the kernel of one attention op inside a gpu.launch.
class KernelBuilder : TensorCoreBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, BufferAttentionOp op,
                RowSplit split)
      : TensorCoreBuilder(b, loc, op.getQuery().getType().getElementType()),
        op(op), split(split) {
    MemRefType query = op.getQuery().getType();
    headDim = query.getDimSize(kHead);
    chunks = headDim / 8;
    group = query.getDimSize(kHeads) / op.getKey().getType().getDimSize(kHeads);
    mask = op.getMaskOrNone();
  }

  /// The kernel body, reading memrefs `q`, `k`, `v` (and `lengths`) and
  /// writing `out`; `ks`, `vs` are its [64, D] shared buffers, `qs` the
  /// block's [128, D] rows of Q when the split keeps them shared. A packed
  /// split with several key ranges writes `partial` ([ranges, B, H, Sq, D]
  /// f32, each row divided by its own sum) and `lse` ([ranges, B, H, Sq],
  /// log2 of each row's sum of exp2, -inf where it saw no key) instead.
  /// With TMA, `barriers` holds K's and V's barrier objects (i64), and
  /// `kMap` and `vMap` are K's and V's tensor maps (pointers).
  void build(gpu::LaunchOp launch, Value q, Value k, Value v, Value lengths,
             Value out, Value ks, Value vs, Value qs, Value partial, Value lse,
             Value barriers = nullptr, Value kMap = nullptr,
             Value vMap = nullptr, Value zeroTile = nullptr);

private:
  /// A query row of the block as a lane holds it: its head and its query
  /// index (clamped into range, so loads stay in bounds), and whether it
  /// exists.
  struct QueryRow {
    Value head, query, exists;
  };

  /// Copies `count` rows from `first` of head `head` of `source` ([B, H, S,
  /// D]) into the swizzled shared buffer `tile`, rows at or past `limit`
  /// read as row `limit - 1` (they are masked or never stored), as one
  /// commit group. K and V tiles are limited to the batch's kv length: a
  /// cache's rows past it may never have been written, and a NaN there
  /// would survive its probability of 0 in P·V.
  /// With `buffer`, into that buffer of a double-buffered `tile`.
  void copyTile(Value source, Value head, Value first, Value limit,
                Value tile, int64_t count = kKeys, Value buffer = nullptr);
  /// TMA: thread 0's loads of the 64 rows from `first` of KV head `head`
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
  void zeroRowsForWgmma(Value tile, Value firstRow, Value buffer = nullptr) {
    zeroRowsFrom(tile, firstRow, buffer);
    fenceAsyncProxy();
    if (!split.specialized) {
      gpu::BarrierOp::create(b, loc);
      return;
    }
    NVVM::BarrierOp::create(
        b, loc, TypeRange{},
        arith::AddIOp::create(b, loc, tileGroup, i32(kOwnBarrier)), i32(128),
        NVVM::BarrierReductionAttr{}, Value{});
  }
  /// Ping-pong: this tile warpgroup waits for its turn to issue products
  /// (named barrier kTurnBarrier + its index, which it syncs on with the
  /// other's 128 arrivals), and passes the turn to the other.
  void waitForTurn() { turnBarrier(tileGroup, /*wait=*/true); }
  void passTurn() {
    turnBarrier(arith::SubIOp::create(b, loc, i32(1), tileGroup),
                /*wait=*/false);
  }
  void turnBarrier(Value group, bool wait) {
    Value id = arith::AddIOp::create(b, loc, group, i32(kTurnBarrier));
    if (wait)
      NVVM::BarrierOp::create(b, loc, TypeRange{}, id, i32(256),
                              NVVM::BarrierReductionAttr{}, Value{});
    else
      NVVM::BarrierArriveOp::create(b, loc, id, i32(256));
  }
  Value i32(int32_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
  }
  /// Specialized: the producer's loop (its thread 0's), each tile's K and
  /// V loads, each once both tile warpgroups have freed its buffer's use
  /// before.
  void produce(Value ks, Value vs, Value tileBegin, Value tileLimit,
               Value kvHead);
  /// The shared address of `tile`'s buffer `buffer` (of the whole tile if
  /// null).
  Value bufferAddress(Value tile, Value buffer) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile);
    return buffer ? add(base, mul(buffer, split.tileBytes())) : base;
  }
  /// Specialized: this tile warpgroup is done with buffer `buffer` of K
  /// (or V) for this tile (one arrival per tile warpgroup).
  void release(Value freedBarrier);
  /// The ldmatrix.x4 registers whose lane reads row `row` (low 3 bits: the
  /// lane's) and chunk `chunkBase ^ laneXor` of a swizzled tile.
  SmallVector<Value> loadSwizzled(Value tile, Value row, int64_t chunkBase,
                                  Value laneXor, bool transpose) {
    return loadMatrices(tile, {row, mul(xorIndex(laneXor, chunkBase), 8)},
                        transpose);
  }
  /// The A operand registers of rows `low` and `high` (a lane's rows g
  /// and g + 8), columns [column, column + 16) of `q`: read from global
  /// memory once per block.
  SmallVector<Value> loadQuery(Value q, QueryRow low, QueryRow high,
                               Value column);
  Value shuffleXor(Value value, int32_t offset);
  /// The maximum (or sum) of a row held by the 4 lanes of a quad.
  Value quadReduce(Value value, bool sum);
  /// The tiles that cp.async brought have landed, for every thread (and
  /// for wgmma, which reads shared memory through the async proxy).
  void waitForTiles();
  /// The warpgroup's wgmma products of one batch, waited for: `acc` +
  /// Σ_i a[i]·B_i, where B_i is at shared address `base` + `offset(i)`
  /// (`leadingBytes` apart in the descriptor), N-major if `transposeB`.
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
  SmallVector<Value> warpgroupProducts(ArrayRef<SmallVector<Value>> a,
                                       Value base,
                                       function_ref<int64_t(int64_t)> offset,
                                       int64_t leadingBytes, bool transposeB,
                                       SmallVector<Value> acc);

  BufferAttentionOp op;
  RowSplit split;
  int64_t headDim, chunks, group;
  MaskAttr mask;
  // Per thread; specialized, `tid` counts from the tile warpgroups' first
  // thread, and `tileGroup` is the thread's tile warpgroup (an i32 that
  // every thread of a warp holds from lane 0).
  Value tid, lane, batch, tileGroup;
  // Specialized with overlap: the zeroed tile.
  Value zeros;
  // TMA: K's and V's barrier objects and tensor maps.
  Value barriers, kMap, vMap;
  Value kBarrier(Value buffer) { return barrierPointer(barriers, buffer); }
  Value vBarrier(Value buffer) {
    return barrierPointer(barriers, add(buffer, split.buffers()));
  }
  // Specialized: K's and V's buffer freed.
  Value kFreed(Value buffer) {
    return barrierPointer(barriers, add(buffer, 2 * split.buffers()));
  }
  Value vFreed(Value buffer) {
    return barrierPointer(barriers, add(buffer, 3 * split.buffers()));
  }
};

void KernelBuilder::loadTileBoxes(Value map, Value head, Value first,
                                  Value tile, Value barrier, Value buffer) {
  arriveExpectingBytes(barrier, split.tileBytes());
  Value start = buffer ? mul(buffer, split.tileBytes()) : index(0);
  // Boxes at (the panel's first column, the row, the head, the batch).
  for (int64_t panel = 0; panel < headDim / 64; ++panel)
    loadBox(map, {index(panel * 64), first, head, batch}, tile,
            add(start, panel * kPanelBytes), barrier);
}

void KernelBuilder::produce(Value ks, Value vs, Value tileBegin,
                            Value tileLimit, Value kvHead) {
  scf::ForOp::create(
      b, loc, tileBegin, tileLimit, index(kKeys), ValueRange{},
      [&](OpBuilder &, Location, Value tileStart, ValueRange) {
        // Tile n goes to buffer n mod 2 as its use u = n / 2, which waits
        // for the buffer's freed barrier object to complete phase u - 1.
        Value tileIndex = div(sub(tileStart, tileBegin), kKeys);
        Value buffer = rem(tileIndex, 2), use = div(tileIndex, 2);
        auto waitUntilFreed = [&](Value freed) {
          auto reused = scf::IfOp::create(
              b, loc, cmp(arith::CmpIPredicate::ugt, use, index(0)));
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(reused.thenBlock());
          waitForPhase(freed, rem(sub(use, index(1)), 2));
        };
        waitUntilFreed(kFreed(buffer));
        loadTileBoxes(kMap, kvHead, tileStart, ks, kBarrier(buffer), buffer);
        waitUntilFreed(vFreed(buffer));
        loadTileBoxes(vMap, kvHead, tileStart, vs, vBarrier(buffer), buffer);
        scf::YieldOp::create(b, loc);
      });
}

void KernelBuilder::release(Value freedBarrier) {
  onFirstThread(rem(tid, 128), [&] { arrive(freedBarrier); });
}

void KernelBuilder::zeroRowsFrom(Value tile, Value firstRow, Value buffer) {
  auto zeros = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(VectorType::get({8}, element),
                             b.getZeroAttr(element)));
  int64_t threads = split.zeroingThreads();
  Value first = split.specialized ? rem(tid, 128) : tid;
  for (int64_t i = 0; i < kKeys * chunks / threads; ++i) {
    Value id = add(first, i * threads);
    Value row = div(id, chunks), chunk = rem(id, chunks);
    OpBuilder::InsertionGuard guard(b);
    if (firstRow) {
      auto past = scf::IfOp::create(
          b, loc, cmp(arith::CmpIPredicate::sge, row, firstRow));
      b.setInsertionPointToStart(past.thenBlock());
    }
    // Every chunk of the row, in whatever order the swizzle keeps them.
    SmallVector<Value> at = {div(chunk, 8), row, mul(rem(chunk, 8), 8)};
    if (buffer)
      at.insert(at.begin(), buffer);
    vector::StoreOp::create(b, loc, zeros, tile, at);
  }
}

void KernelBuilder::copyTile(Value source, Value head, Value first,
                             Value limit, Value tile, int64_t count,
                             Value buffer) {
  Value lastRow = sub(limit, index(1));
  for (int64_t i = 0; i < count * chunks / split.threads(); ++i) {
    Value id = add(tid, i * split.threads());
    Value row = div(id, chunks), chunk = rem(id, chunks);
    Value sourceRow = min(add(first, row), lastRow);
    SmallVector<Value> at = {row, mul(xorIndex(chunk, rem(row, 8)), 8)};
    if (split.warpgroups)
      at = {div(chunk, 8), row, mul(xorIndex(rem(chunk, 8), rem(row, 8)), 8)};
    if (buffer)
      at.insert(at.begin(), buffer);
    copy16Bytes(tile, at, source, {batch, head, sourceRow, mul(chunk, 8)});
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

SmallVector<Value> KernelBuilder::loadQuery(Value q, QueryRow low,
                                            QueryRow high, Value column) {
  // a0: (low, column), a1: (high, column), a2: (low, column + 8),
  // a3: (high, column + 8).
  SmallVector<Value> registers;
  for (int64_t i = 0; i < 4; ++i) {
    const QueryRow &row = i % 2 ? high : low;
    registers.push_back(loadPair(
        q, {batch, row.head, row.query, add(column, (i / 2) * 8)}));
  }
  return registers;
}

Value KernelBuilder::shuffleXor(Value value, int32_t offset) {
  return gpu::ShuffleOp::create(b, loc, value, offset, /*width=*/32,
                                gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

Value KernelBuilder::quadReduce(Value value, bool sum) {
  for (int32_t offset : {1, 2}) {
    Value other = shuffleXor(value, offset);
    value = sum ? arith::AddFOp::create(b, loc, value, other).getResult()
                : arith::MaximumFOp::create(b, loc, value, other).getResult();
  }
  return value;
}

void KernelBuilder::waitForTiles() {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  if (split.warpgroups)
    fenceAsyncProxy();
  gpu::BarrierOp::create(b, loc);
}

SmallVector<Value>
KernelBuilder::descriptors(Value base, int64_t count,
                           function_ref<int64_t(int64_t)> offset,
                           int64_t leadingBytes) {
  SmallVector<Value> result;
  for (int64_t i = 0; i < count; ++i)
    result.push_back(sharedDescriptor(add(base, offset(i)), leadingBytes,
                                      /*strideBytes=*/1024));
  return result;
}

SmallVector<Value>
KernelBuilder::issueProducts(ArrayRef<SmallVector<Value>> a,
                             ArrayRef<Value> bDescriptors, bool transposeB,
                             SmallVector<Value> acc) {
  for (auto [registers, descriptor] : llvm::zip_equal(a, bDescriptors))
    acc = warpgroupMma(registers, descriptor, acc, transposeB);
  return acc;
}

SmallVector<Value>
KernelBuilder::warpgroupProducts(ArrayRef<SmallVector<Value>> a, Value base,
                                 function_ref<int64_t(int64_t)> offset,
                                 int64_t leadingBytes, bool transposeB,
                                 SmallVector<Value> acc) {
  SmallVector<Value> bDescriptors =
      descriptors(base, a.size(), offset, leadingBytes);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  acc = issueProducts(a, bDescriptors, transposeB, acc);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
  return acc;
}

void KernelBuilder::build(gpu::LaunchOp launch, Value q, Value k, Value v,
                          Value lengths, Value out, Value ks, Value vs,
                          Value qs, Value partial, Value lse,
                          Value barrierObjects, Value kTensorMap,
                          Value vTensorMap, Value zeroTile) {
  barriers = barrierObjects;
  zeros = zeroTile;
  kMap = kTensorMap;
  vMap = vTensorMap;
  int64_t rowTiles = split.rowTiles();
  Value threadId = launch.getThreadIds().x;
  tid = split.specialized ? sub(threadId, index(128)) : threadId;
  Value warp = div(tid, 32);
  lane = rem(tid, 32);
  Value quadRow = div(lane, 4), quadColumn = rem(lane, 4);
  batch = launch.getBlockIds().z;
  Value queries = memref::DimOp::create(b, loc, q, kSeq);
  // Packed: the block's rows are every query of the group, and x is the
  // key range. Otherwise x is a tile of 128 rows of head y, the last tiles
  // first: under a causal mask they have the most keys, and the short ones
  // then fill the tail of the grid.
  Value head, kvHead, firstRow, rowEnd, range;
  if (split.packed) {
    kvHead = launch.getBlockIds().y;
    range = launch.getBlockIds().x;
    firstRow = index(0);
    rowEnd = queries;
  } else {
    head = launch.getBlockIds().y;
    kvHead = div(head, group);
    Value queryTile = sub(
        sub(launch.getGridSize().x, launch.getBlockIds().x), index(1));
    firstRow = mul(queryTile, kRows);
    rowEnd = min(add(firstRow, kRows), queries);
  }

  Value keys = memref::DimOp::create(b, loc, k, kSeq);
  Value keyEnd = keys;
  if (lengths) {
    Value length = memref::LoadOp::create(b, loc, lengths, batch);
    length = arith::IndexCastOp::create(b, loc, b.getIndexType(), length);
    keyEnd = max(index(0), min(length, keys));
  }
  // Query row i sits at position i + Skv - Sq (bottom-right alignment).
  Value offset = sub(keys, queries);
  Value firstPosition = add(firstRow, offset);
  Value lastPosition = add(sub(rowEnd, index(1)), offset);
  bool leftBounded = mask.getLeft() != MaskAttr::kUnbounded;
  bool rightBounded = mask.getRight() != MaskAttr::kUnbounded;
  // The keys any row of the block sees: [keyBegin, keyLimit).
  Value keyBegin = index(0), keyLimit = keyEnd;
  if (leftBounded)
    keyBegin = max(index(0), sub(firstPosition, index(mask.getLeft())));
  if (rightBounded)
    keyLimit = min(keyEnd, add(lastPosition, mask.getRight() + 1));
  // The tiles walked: [tileBegin, tileLimit), within the block's key range
  // when packed (ranges of whole tiles, as many as the grid's x).
  Value tileBegin = mul(div(keyBegin, kKeys), kKeys), tileLimit = keyLimit;
  if (split.packed) {
    Value ranges = launch.getGridSize().x;
    Value rangeKeys = mul(
        div(add(arith::CeilDivUIOp::create(b, loc, keys, ranges), kKeys - 1),
            kKeys),
        kKeys);
    Value rangeBegin = arith::MulIOp::create(b, loc, range, rangeKeys);
    tileBegin = max(tileBegin, rangeBegin);
    tileLimit = min(tileLimit, add(rangeBegin, rangeKeys));
  }

  // Specialized, the producer warpgroup (the first) runs its loop, and
  // the rest of the kernel is the tile warpgroups'.
  if (split.specialized) {
    onFirstThread(threadId, [&] {
      // Loads land on one arrival (the producer's) and their bytes; a
      // buffer is freed by one arrival of each tile warpgroup.
      SmallVector<int64_t> arrivals(2 * split.buffers(), 1);
      arrivals.append(2 * split.buffers(), split.warps() / 4);
      initBarriers(barriers, arrivals);
    });
    gpu::BarrierOp::create(b, loc);
    Value warpgroup = splitWarpgroups(
        threadId,
        [&] {
          onFirstThread(threadId,
                        [&] { produce(ks, vs, tileBegin, tileLimit, kvHead); });
        },
        kProducerRegisters, kTileRegisters);
    tileGroup = arith::SubIOp::create(b, loc, warpgroup, i32(1));
  }

  // The warp's rows in the block: row tiles of 16 from warpRow.
  Value warpRow = mul(warp, split.warpRows);
  Value lastRow = sub(queries, index(1));
  // A lane's rows: quadRow + 8·half of row tile mt.
  SmallVector<std::array<QueryRow, 2>> rows(rowTiles);
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t half = 0; half < 2; ++half) {
      Value row = add(add(warpRow, quadRow), mt * 16 + half * 8);
      QueryRow &at = rows[mt][half];
      if (split.packed) {
        // Row r: query r mod Sq of the group's head r / Sq.
        Value packedRows = mul(queries, group);
        at.exists = cmp(arith::CmpIPredicate::slt, row, packedRows);
        row = min(row, sub(packedRows, index(1)));
        at.head = add(mul(kvHead, group),
                      arith::DivUIOp::create(b, loc, row, queries));
        at.query = arith::RemUIOp::create(b, loc, row, queries);
      } else {
        row = add(firstRow, row);
        at.exists = cmp(arith::CmpIPredicate::slt, row, queries);
        at.head = head;
        at.query = min(row, lastRow);
      }
    }
  Value low3 = rem(lane, 8), matrix = div(lane, 8);
  // Matrices 0..3 of an ldmatrix.x4 as rows +0/+8 then chunks +0/+1 (A
  // operands, and V's transposed B operands of P·V), or chunks +0/+1 then
  // rows +0/+8 (K's B operands of QKᵀ).
  Value rowsThenChunks = add(low3, mul(rem(matrix, 2), 8));
  Value chunksThenRows = add(low3, mul(div(matrix, 2), 8));
  Value xorRowsThenChunks = xorIndex(div(matrix, 2), low3);
  Value xorChunksThenRows = xorIndex(rem(matrix, 2), low3);

  // Q in registers for the whole key loop, read from global memory once
  // ([row tile][16-column step]), unless the split keeps it shared.
  SmallVector<SmallVector<SmallVector<Value>>> queryRegs(rowTiles);
  if (!split.queryShared()) {
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      for (int64_t kk = 0; kk < headDim / 16; ++kk)
        queryRegs[mt].push_back(loadQuery(q, rows[mt][0], rows[mt][1],
                                          add(mul(quadColumn, 2), kk * 16)));
  }
  // The A operand registers of row tile `mt`, 16-column step `kk`.
  auto queryOperand = [&](int64_t mt, int64_t kk) -> SmallVector<Value> {
    if (!split.queryShared())
      return queryRegs[mt][kk];
    return loadSwizzled(qs, add(rowsThenChunks, add(warpRow, mt * 16)),
                        2 * kk, xorRowsThenChunks, /*transpose=*/false);
  };

  // With TMA, thread 0 readies the barrier objects before anyone waits
  // (specialized, before the roles).
  if (split.tma && !split.specialized) {
    onFirstThread(tid, [&] {
      initBarriers(barriers, SmallVector<int64_t>(2 * split.buffers(), 1));
    });
    gpu::BarrierOp::create(b, loc);
  }
  // K of the first tile (and the block's Q if shared), if any; specialized,
  // the producer's.
  if (!split.specialized) {
    auto anyTile = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::slt, tileBegin, tileLimit));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(anyTile.thenBlock());
    if (split.queryShared())
      copyTile(q, head, firstRow, queries, qs, split.blockRows());
    if (split.overlap) {
      // V buffer 1 zeroed: the first tile's P·V of "the tile before" reads
      // it (with P zeros; 0·NaN would be NaN).
      zeroRowsFrom(vs, /*firstRow=*/nullptr, index(1));
      if (split.tma) {
        // For wgmma's reads once the loop's first barrier has published
        // them.
        fenceAsyncProxy();
        onFirstThread(tid, [&] {
          loadTileBoxes(kMap, kvHead, tileBegin, ks, kBarrier(index(0)),
                        index(0));
        });
      } else {
        copyTile(k, kvHead, tileBegin, keyEnd, ks, kKeys, index(0));
      }
    } else if (split.tma) {
      onFirstThread(tid, [&] {
        loadTileBoxes(kMap, kvHead, tileBegin, ks, kBarrier(index(0)));
      });
    } else {
      copyTile(k, kvHead, tileBegin, keyEnd, ks);
    }
  }

  // Scores are kept as log2: exp2(s·scale·log2e - m).
  double log2e = 1.0 / std::log(2.0);
  double scale = op.getScaleOrDefault();
  std::optional<double> softcap;
  if (FloatAttr cap = op.getSoftcapAttr())
    softcap = cap.getValueAsDouble();
  Value negInf = f32(-INFINITY), zero = f32(0.0);

  // Loop state: m, then l, of rows quadRow and quadRow + 8 of each row tile,
  // then the output accumulators (per row tile, D/8 tiles of 4).
  auto maxAt = [&](int64_t mt, int64_t half) { return mt * 2 + half; };
  auto sumAt = [&](int64_t mt, int64_t half) {
    return 2 * rowTiles + mt * 2 + half;
  };
  auto accAt = [&](int64_t mt, int64_t d) {
    return 4 * rowTiles + (mt * headDim / 8 + d) * 4;
  };
  SmallVector<Value> init(2 * rowTiles, negInf);
  init.append(2 * rowTiles + rowTiles * headDim / 8 * 4, zero);
  Value columnInTile = mul(quadColumn, 2);
  using Tiles = SmallVector<SmallVector<SmallVector<Value>>>;
  // Scores scaled to log2 units (softcapped), then -inf where the mask
  // hides them; returns the tile's end.
  auto maskScores = [&](Tiles &scores, Value tileStart) -> Value {
    for (auto &tiles : scores)
      for (auto &tile : tiles)
        for (Value &s : tile) {
          if (softcap) {
            Value capped = math::TanhOp::create(
                b, loc,
                arith::MulFOp::create(b, loc, s, f32(scale / *softcap)));
            s = arith::MulFOp::create(b, loc, capped,
                                      f32(*softcap * log2e));
          } else {
            s = arith::MulFOp::create(b, loc, s, f32(scale * log2e));
          }
        }

    // Masks, in the tiles they cut: key j of row p is visible iff
    // j < keyEnd and p - left <= j <= p + right.
    Value tileEnd = add(tileStart, kKeys);
    Value whole = cmp(arith::CmpIPredicate::sle, tileEnd, keyEnd);
    if (leftBounded)
      whole = both(whole, cmp(arith::CmpIPredicate::sge, tileStart,
                              sub(lastPosition,
                                  index(mask.getLeft()))));
    if (rightBounded)
      whole = both(whole, cmp(arith::CmpIPredicate::sle,
                              sub(tileEnd, index(1)),
                              add(firstPosition, mask.getRight())));
    SmallVector<Value> flat;
    for (auto &tiles : scores)
      for (auto &tile : tiles)
        flat.append(tile);
    SmallVector<Type> types(flat.size(), b.getF32Type());
    auto masked = scf::IfOp::create(b, loc, types, whole,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(masked.thenBlock());
      scf::YieldOp::create(b, loc, flat);
      b.setInsertionPointToStart(masked.elseBlock());
      SmallVector<Value> kept;
      for (int64_t mt = 0; mt < rowTiles; ++mt)
        for (int64_t n = 0; n < kKeys / 8; ++n)
          for (int64_t e = 0; e < 4; ++e) {
            Value key = add(add(tileStart, columnInTile), n * 8 + e % 2);
            Value position = add(rows[mt][e / 2].query, offset);
            Value visible = cmp(arith::CmpIPredicate::slt, key, keyEnd);
            if (leftBounded)
              visible = both(visible,
                             cmp(arith::CmpIPredicate::sge, key,
                                 sub(position, index(mask.getLeft()))));
            if (rightBounded)
              visible = both(visible,
                             cmp(arith::CmpIPredicate::sle, key,
                                 add(position, mask.getRight())));
            kept.push_back(arith::SelectOp::create(
                b, loc, visible, scores[mt][n][e], negInf));
          }
      scf::YieldOp::create(b, loc, kept);
    }
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      for (int64_t n = 0; n < kKeys / 8; ++n)
        for (int64_t e = 0; e < 4; ++e)
          scores[mt][n][e] =
              masked.getResult((mt * kKeys / 8 + n) * 4 + e);
    return tileEnd;
  };
  // The online softmax of a masked tile: `next` gets m and l from `state`
  // (and O rescaled, if `rescale`), `scores` become p; returns each
  // (row tile, half)'s correction exp2(m_old - m_new).
  auto softmaxStep = [&](Tiles &scores, ValueRange state,
                         SmallVector<Value> &next,
                         bool rescale) -> SmallVector<Value> {
    SmallVector<Value> corrections;
    // Online softmax of rows quadRow (half 0) and quadRow + 8 (half 1)
    // of each row tile.
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      for (int64_t half = 0; half < 2; ++half) {
        Value rowMax = negInf;
        for (auto &tile : scores[mt])
          for (int64_t e = 2 * half; e < 2 * half + 2; ++e)
            rowMax = arith::MaximumFOp::create(b, loc, rowMax, tile[e]);
        rowMax = quadReduce(rowMax, /*sum=*/false);
        Value oldMax = state[maxAt(mt, half)];
        Value newMax = arith::MaximumFOp::create(b, loc, oldMax, rowMax);
        // A row that has seen no key yet subtracts 0, not -inf.
        Value seen = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OGT, newMax, negInf);
        Value base = arith::SelectOp::create(b, loc, seen, newMax, zero);
        Value correction = math::Exp2Op::create(
            b, loc, arith::SubFOp::create(b, loc, oldMax, base));
        Value sum = arith::MulFOp::create(b, loc, state[sumAt(mt, half)],
                                          correction);
        for (auto &tile : scores[mt])
          for (int64_t e = 2 * half; e < 2 * half + 2; ++e) {
            tile[e] = math::Exp2Op::create(
                b, loc, arith::SubFOp::create(b, loc, tile[e], base));
            sum = arith::AddFOp::create(b, loc, sum, tile[e]);
          }
        next[maxAt(mt, half)] = newMax;
        next[sumAt(mt, half)] = sum;
        corrections.push_back(correction);
        if (!rescale)
          continue;
        for (int64_t d = 0; d < headDim / 8; ++d)
          for (int64_t e = 2 * half; e < 2 * half + 2; ++e)
            next[accAt(mt, d) + e] = arith::MulFOp::create(
                b, loc, state[accAt(mt, d) + e], correction);
      }
    return corrections;
  };
  auto probabilitiesOf = [&](Tiles &scores) -> Tiles {
    // P as A operands: the accumulator layout of two 8-key tiles is the
    // A layout of one 16-key step.
    Tiles probabilities(rowTiles);
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      for (int64_t j = 0; j < kKeys / 16; ++j) {
        auto &lo = scores[mt][2 * j], &hi = scores[mt][2 * j + 1];
        probabilities[mt].push_back({pack(lo[0], lo[1]),
                                     pack(lo[2], lo[3]),
                                     pack(hi[0], hi[1]),
                                     pack(hi[2], hi[3])});
      }
    return probabilities;
  };
  // FlashAttention-3's overlap (warpgroups): per tile n, QKᵀ of tile n and
  // P·V of tile n - 1 are issued as two wgmma groups, the softmax of tile n
  // runs once the first is done, while the second runs, and O is rescaled
  // after it. K and V are double-buffered (tile n in buffer n mod 2); P of
  // the last tile joins the loop state, and its P·V follows the loop. Before
  // the first tile, P is zeros against a zeroed V buffer (specialized, the
  // zeroed tile, which each tile warpgroup zeroes for itself).
  auto overlappedTiles = [&]() -> SmallVector<Value> {
    Value zerosBase;
    if (split.zeroTile()) {
      zeroRowsForWgmma(zeros, /*firstRow=*/nullptr);
      zerosBase = bufferAddress(zeros, nullptr);
    }
    // Ping-pong: tile warpgroup 0 has the first turn (its own arrival
    // stands in for the other's). Each then takes as many turns as there
    // are tiles, which leaves that one arrival unmatched at the end, as in
    // FlashAttention-3.
    if (split.pingpong) {
      auto first = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tileGroup,
                                i32(0)));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(first.thenBlock());
      turnBarrier(i32(0), /*wait=*/false);
    }
    int64_t pAt = init.size();
    SmallVector<Value> initial(init);
    initial.append(kKeys / 4,
                   arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
    Value kBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, ks);
    Value vBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, vs);
    int64_t bytes = split.tileBytes();
    auto kOffset = [](int64_t kk) {
      return (kk / 4) * kPanelBytes + (kk % 4) * 32;
    };
    auto vOffset = [](int64_t j) { return j * 16 * 128; };
    int64_t outputs = headDim / 2, outputAt = accAt(0, 0);
    auto tiles = scf::ForOp::create(
        b, loc, tileBegin, tileLimit, index(kKeys), initial,
        [&](OpBuilder &, Location, Value tileStart, ValueRange state) {
          Value tileIndex = div(sub(tileStart, tileBegin), kKeys);
          Value current = rem(tileIndex, 2);
          Value other = sub(index(1), current);
          Value tileEnd = add(tileStart, kKeys);
          // K of this tile and V of the last have landed, and every
          // warpgroup is done with the tile before the last: its buffers
          // take V of this tile and K of the next.
          auto more = [&] {
            return cmp(arith::CmpIPredicate::slt, tileEnd, tileLimit);
          };
          if (split.tma) {
            // Specialized, the producer's loads; only waits here.
            if (!split.specialized) {
              gpu::BarrierOp::create(b, loc);
              onFirstThread(tid, [&] {
                loadTileBoxes(vMap, kvHead, tileStart, vs, vBarrier(current),
                              current);
                auto next = scf::IfOp::create(b, loc, more());
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPointToStart(next.thenBlock());
                loadTileBoxes(kMap, kvHead, tileEnd, ks, kBarrier(other),
                              other);
              });
            }
            // Buffer n mod 2 holds tiles n, n + 2, ...: tile n is its
            // use n / 2. Before the first tile, "the last V" is the zeroed
            // buffer, which no load fills.
            waitForPhase(kBarrier(current), rem(div(tileIndex, 2), 2));
            auto previous = scf::IfOp::create(
                b, loc, cmp(arith::CmpIPredicate::ugt, tileIndex, index(0)));
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(previous.thenBlock());
            waitForPhase(vBarrier(other),
                         rem(div(sub(tileIndex, index(1)), 2), 2));
          } else {
            waitForTiles();
            copyTile(v, kvHead, tileStart, keyEnd, vs, kKeys, current);
            auto next = scf::IfOp::create(b, loc, more());
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(next.thenBlock());
            copyTile(k, kvHead, tileEnd, keyEnd, ks, kKeys, other);
          }
          SmallVector<Value> keyDescriptors =
              descriptors(add(kBase, mul(current, bytes)), headDim / 16,
                          kOffset, /*leadingBytes=*/16);
          Value lastValues = add(vBase, mul(other, bytes));
          if (split.zeroTile())
            lastValues = arith::SelectOp::create(
                b, loc, cmp(arith::CmpIPredicate::eq, tileIndex, index(0)),
                zerosBase, lastValues);
          SmallVector<Value> valueDescriptors =
              descriptors(lastValues, kKeys / 16, vOffset,
                          /*leadingBytes=*/kPanelBytes);
          SmallVector<SmallVector<Value>> previous;
          for (int64_t j = 0; j < kKeys / 16; ++j)
            previous.emplace_back(state.begin() + pAt + 4 * j,
                                  state.begin() + pAt + 4 * j + 4);
          if (split.pingpong)
            waitForTurn();
          NVVM::WgmmaFenceAlignedOp::create(b, loc);
          SmallVector<Value> acc =
              issueProducts(queryRegs[0], keyDescriptors, /*transposeB=*/false,
                            SmallVector<Value>(kKeys / 2, zero));
          NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
          SmallVector<Value> output = issueProducts(
              previous, valueDescriptors, /*transposeB=*/true,
              SmallVector<Value>(state.begin() + outputAt,
                                 state.begin() + outputAt + outputs));
          NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
          if (split.pingpong)
            passTurn();
          // This tile's scores are done (specialized, its K buffer is
          // free); the last tile's P·V may run on.
          NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(1));
          if (split.specialized)
            release(kFreed(current));
          Tiles scores(1);
          for (int64_t n = 0; n < kKeys / 8; ++n)
            scores[0].emplace_back(acc.begin() + 4 * n,
                                   acc.begin() + 4 * n + 4);
          maskScores(scores, tileStart);
          SmallVector<Value> next(state.begin(), state.end());
          SmallVector<Value> corrections =
              softmaxStep(scores, state, next, /*rescale=*/false);
          NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
          // Specialized, the last tile's V buffer is free (before the first
          // tile that was the zeroed tile).
          if (split.specialized) {
            auto loaded = scf::IfOp::create(
                b, loc, cmp(arith::CmpIPredicate::ugt, tileIndex, index(0)));
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(loaded.thenBlock());
            release(vFreed(other));
          }
          // Packed only now: the new P may take the registers of the last
          // P, which the P·V just waited for was reading.
          Tiles probabilities = probabilitiesOf(scores);
          for (int64_t i = 0; i < outputs; ++i)
            next[outputAt + i] = arith::MulFOp::create(
                b, loc, output[i], corrections[(i % 4) / 2]);
          for (int64_t j = 0; j < kKeys / 16; ++j)
            std::copy(probabilities[0][j].begin(), probabilities[0][j].end(),
                      next.begin() + pAt + 4 * j);
          scf::YieldOp::create(b, loc, next);
        });
    // The last tile's P·V, from the buffer its V went to.
    SmallVector<Value> state(tiles.getResults());
    SmallVector<Type> types(outputs, b.getF32Type());
    auto last = scf::IfOp::create(
        b, loc, types, cmp(arith::CmpIPredicate::slt, tileBegin, tileLimit),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      SmallVector<Value> output(state.begin() + outputAt,
                                state.begin() + outputAt + outputs);
      b.setInsertionPointToStart(last.elseBlock());
      scf::YieldOp::create(b, loc, output);
      b.setInsertionPointToStart(last.thenBlock());
      if (!split.tma)
        waitForTiles();
      Value count = arith::CeilDivUIOp::create(
          b, loc, sub(tileLimit, tileBegin), index(kKeys));
      Value lastIndex = sub(count, index(1));
      Value buffer = rem(lastIndex, 2);
      if (split.tma) {
        waitForPhase(vBarrier(buffer), rem(div(lastIndex, 2), 2));
        // The rows of the last tile past the kv length (see the other
        // loop).
        if (lengths) {
          Value lastStart = add(tileBegin, mul(lastIndex, kKeys));
          auto cut = scf::IfOp::create(
              b, loc,
              cmp(arith::CmpIPredicate::sgt, add(lastStart, kKeys), keyEnd));
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(cut.thenBlock());
          zeroRowsForWgmma(vs, sub(keyEnd, lastStart), buffer);
        }
      }
      SmallVector<SmallVector<Value>> finalP;
      for (int64_t j = 0; j < kKeys / 16; ++j)
        finalP.emplace_back(state.begin() + pAt + 4 * j,
                            state.begin() + pAt + 4 * j + 4);
      SmallVector<Value> valueDescriptors =
          descriptors(add(vBase, mul(buffer, bytes)), kKeys / 16, vOffset,
                      /*leadingBytes=*/kPanelBytes);
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      output = issueProducts(finalP, valueDescriptors, /*transposeB=*/true,
                             output);
      NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
      scf::YieldOp::create(b, loc, output);
    }
    state.resize(pAt);
    for (int64_t i = 0; i < outputs; ++i)
      state[outputAt + i] = last.getResult(i);
    return state;
  };
  SmallVector<Value> results;
  if (split.overlap) {
    results = overlappedTiles();
  } else {
    auto loop = scf::ForOp::create(
        b, loc, tileBegin, tileLimit, index(kKeys), init,
        [&](OpBuilder &, Location, Value tileStart, ValueRange state) {
          // K of this tile has landed, and every warp is past the last
          // tile's P·V: V may be overwritten. With TMA each barrier object
          // completes a phase per tile: the tile's parity. Specialized,
          // tile n is buffer n mod 2's use n / 2, and only this
          // warpgroup waits.
          Value parity, buffer;
          if (split.specialized) {
            Value tileIndex = div(sub(tileStart, tileBegin), kKeys);
            buffer = rem(tileIndex, 2);
            parity = rem(div(tileIndex, 2), 2);
            waitForPhase(kBarrier(buffer), parity);
          } else if (split.tma) {
            parity = rem(div(sub(tileStart, tileBegin), kKeys), 2);
            gpu::BarrierOp::create(b, loc);
            onFirstThread(tid, [&] {
              loadTileBoxes(vMap, kvHead, tileStart, vs, vBarrier(index(0)));
            });
            waitForPhase(kBarrier(index(0)), parity);
          } else {
            waitForTiles();
            copyTile(v, kvHead, tileStart, keyEnd, vs);
          }

          // S = Q Kᵀ: per row tile, 8 tiles of 8 keys; each K fragment feeds
          // every row tile.
          SmallVector<SmallVector<SmallVector<Value>>> scores(
              rowTiles, SmallVector<SmallVector<Value>>(
                            kKeys / 8, SmallVector<Value>(4, zero)));
          if (split.warpgroups) {
            // The warpgroup's 64 rows by the 64 keys, a wgmma m64n64k16 per
            // 16 columns of D: K-major (a key's D contiguous), step kk in
            // panel kk / 4 at byte 32·(kk mod 4) of each row.
            SmallVector<Value> acc = warpgroupProducts(
                queryRegs[0], bufferAddress(ks, buffer),
                [](int64_t kk) {
                  return (kk / 4) * kPanelBytes + (kk % 4) * 32;
                },
                /*leadingBytes=*/16, /*transposeB=*/false,
                SmallVector<Value>(kKeys / 2, zero));
            // The products are done reading K.
            if (split.specialized)
              release(kFreed(buffer));
            for (int64_t n = 0; n < kKeys / 8; ++n)
              for (int64_t e = 0; e < 4; ++e)
                scores[0][n][e] = acc[n * 4 + e];
          } else {
            for (int64_t kk = 0; kk < headDim / 16; ++kk) {
              SmallVector<SmallVector<Value>> queryA;
              for (int64_t mt = 0; mt < rowTiles; ++mt)
                queryA.push_back(queryOperand(mt, kk));
              for (int64_t pair = 0; pair < kKeys / 16; ++pair) {
                SmallVector<Value> keyRegs =
                    loadSwizzled(ks, add(chunksThenRows, pair * 16), 2 * kk,
                                 xorChunksThenRows, false);
                for (int64_t mt = 0; mt < rowTiles; ++mt) {
                  auto &tiles = scores[mt];
                  tiles[2 * pair] = mma(queryA[mt], {keyRegs[0], keyRegs[1]},
                                        tiles[2 * pair]);
                  tiles[2 * pair + 1] = mma(
                      queryA[mt], {keyRegs[2], keyRegs[3]}, tiles[2 * pair + 1]);
                }
              }
            }
          }
          Value tileEnd = maskScores(scores, tileStart);
          SmallVector<Value> next(state.begin(), state.end());
          softmaxStep(scores, state, next, /*rescale=*/true);
          Tiles probabilities = probabilitiesOf(scores);

          // V has landed and every warp is done with K: fetch the next K.
          auto more = [&] {
            return cmp(arith::CmpIPredicate::slt, tileEnd, tileLimit);
          };
          if (split.specialized) {
            waitForPhase(vBarrier(buffer), parity);
            if (lengths) {
              auto cut = scf::IfOp::create(
                  b, loc, cmp(arith::CmpIPredicate::sgt, tileEnd, keyEnd));
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(cut.thenBlock());
              zeroRowsForWgmma(vs, sub(keyEnd, tileStart), buffer);
            }
          } else if (split.tma) {
            gpu::BarrierOp::create(b, loc);
            onFirstThread(tid, [&] {
              auto next = scf::IfOp::create(b, loc, more());
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(next.thenBlock());
              loadTileBoxes(kMap, kvHead, tileEnd, ks, kBarrier(index(0)));
            });
            waitForPhase(vBarrier(index(0)), parity);
            // A cache's rows past the kv length may never have been
            // written; TMA brought them whole (only rows past the cache
            // come as zeros), and a NaN there would survive its
            // probability of 0 in P·V.
            if (lengths) {
              auto cut = scf::IfOp::create(
                  b, loc, cmp(arith::CmpIPredicate::sgt, tileEnd, keyEnd));
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(cut.thenBlock());
              zeroRowsForWgmma(vs, sub(keyEnd, tileStart));
            }
          } else {
            waitForTiles();
            auto next = scf::IfOp::create(b, loc, more());
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(next.thenBlock());
            copyTile(k, kvHead, tileEnd, keyEnd, ks);
          }

          if (split.warpgroups) {
            // O += P V, a wgmma m64nDk16 per 16 keys: V N-major (a key's D
            // contiguous), keys 16j.. from row 16j, the panels of D
            // kPanelBytes apart.
            int64_t at = accAt(0, 0);
            SmallVector<Value> acc = warpgroupProducts(
                probabilities[0], bufferAddress(vs, buffer),
                [](int64_t j) { return j * 16 * 128; },
                /*leadingBytes=*/kPanelBytes, /*transposeB=*/true,
                SmallVector<Value>(next.begin() + at,
                                   next.begin() + at + headDim / 2));
            std::copy(acc.begin(), acc.end(), next.begin() + at);
            if (split.specialized)
              release(vFreed(buffer));
          } else {
            // O += P V; each V fragment feeds every row tile.
            for (int64_t j = 0; j < kKeys / 16; ++j)
              for (int64_t pair = 0; pair < headDim / 16; ++pair) {
                SmallVector<Value> valueRegs =
                    loadSwizzled(vs, add(rowsThenChunks, j * 16), 2 * pair,
                                 xorRowsThenChunks, true);
                for (int64_t mt = 0; mt < rowTiles; ++mt)
                  for (int64_t half = 0; half < 2; ++half) {
                    int64_t at = accAt(mt, 2 * pair + half);
                    SmallVector<Value> acc(next.begin() + at,
                                           next.begin() + at + 4);
                    acc = mma(probabilities[mt][j],
                              {valueRegs[2 * half], valueRegs[2 * half + 1]}, acc);
                    std::copy(acc.begin(), acc.end(), next.begin() + at);
                  }
              }
          }
          scf::YieldOp::create(b, loc, next);
        });
    results.assign(loop.getResults().begin(), loop.getResults().end());
  }

  // O / l (0 for a row that saw no key), stored as pairs; when packed with
  // several key ranges, in f32 with log2 of the row's sum of exp2 beside.
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t half = 0; half < 2; ++half) {
      Value sum = quadReduce(results[sumAt(mt, half)], /*sum=*/true);
      Value positive = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OGT, sum, zero);
      Value inverse = arith::SelectOp::create(
          b, loc, positive, arith::DivFOp::create(b, loc, f32(1.0), sum),
          zero);
      const QueryRow &row = rows[mt][half];
      auto exists = scf::IfOp::create(b, loc, row.exists);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(exists.thenBlock());
      // The lane's two values of column tile d, divided by the sum.
      auto values = [&](int64_t d) -> Value {
        SmallVector<Value> pair;
        for (int64_t e = 2 * half; e < 2 * half + 2; ++e)
          pair.push_back(arith::MulFOp::create(
              b, loc, results[accAt(mt, d) + e], inverse));
        return vector::FromElementsOp::create(
            b, loc, VectorType::get({2}, b.getF32Type()), pair);
      };
      auto storeResult = [&] {
        for (int64_t d = 0; d < headDim / 8; ++d) {
          Value narrow = arith::TruncFOp::create(
              b, loc, VectorType::get({2}, element), values(d));
          vector::StoreOp::create(b, loc, narrow, out,
                                  ValueRange{batch, row.head, row.query,
                                             add(columnInTile, d * 8)});
        }
      };
      if (!split.packed) {
        storeResult();
        continue;
      }
      auto oneRange = scf::IfOp::create(
          b, loc,
          cmp(arith::CmpIPredicate::eq, launch.getGridSize().x, index(1)),
          /*withElseRegion=*/true);
      b.setInsertionPointToStart(oneRange.thenBlock());
      storeResult();
      b.setInsertionPointToStart(oneRange.elseBlock());
      for (int64_t d = 0; d < headDim / 8; ++d)
        vector::StoreOp::create(b, loc, values(d), partial,
                                ValueRange{range, batch, row.head, row.query,
                                           add(columnInTile, d * 8)});
      auto firstLane = scf::IfOp::create(
          b, loc, cmp(arith::CmpIPredicate::eq, quadColumn, index(0)));
      b.setInsertionPointToStart(firstLane.thenBlock());
      Value logSum = arith::AddFOp::create(
          b, loc, results[maxAt(mt, half)],
          math::Log2Op::create(b, loc, sum));
      memref::StoreOp::create(
          b, loc, arith::SelectOp::create(b, loc, positive, logSum, negInf),
          lse, ValueRange{range, batch, row.head, row.query});
    }
}

/// The packed kernel's key ranges combined: out[b, h, s, d] = Σ_r
/// 2^(lse_r - max) · partial[r, b, h, s, d] / Σ_r 2^(lse_r - max), 0 where
/// no range saw a key; a block of D threads per (query, head, batch), its
/// x extent 0 (no launch) for a single range.
void combineRanges(OpBuilder &b, Location loc, Value ranges, Value partial,
                   Value lse, Value out) {
  auto type = cast<MemRefType>(partial.getType());
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value zeroIndex = constant(0), one = constant(1);
  Value several = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                        ranges, one);
  Value queries = arith::SelectOp::create(b, loc, several,
                                          constant(type.getDimSize(3)),
                                          zeroIndex);
  Value batches = memref::DimOp::create(b, loc, partial, 1);
  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launch =
      createLaunch(b, loc, {queries, constant(type.getDimSize(2)), batches},
                   constant(type.getDimSize(4)));
  Value column = launch.getThreadIds().x, query = launch.getBlockIds().x,
        head = launch.getBlockIds().y, batch = launch.getBlockIds().z;
  auto f32 = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  };
  Value negInf = f32(-INFINITY), zero = f32(0.0);
  auto logSum = [&](Value r) -> Value {
    return memref::LoadOp::create(b, loc, lse,
                                  ValueRange{r, batch, head, query});
  };
  auto largest = scf::ForOp::create(
      b, loc, zeroIndex, ranges, one, ValueRange{negInf},
      [&](OpBuilder &, Location, Value r, ValueRange state) {
        scf::YieldOp::create(b, loc,
                             ValueRange{arith::MaximumFOp::create(
                                 b, loc, state[0], logSum(r))});
      });
  // With no key anywhere every weight is 2^-inf = 0.
  Value seen = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                     largest.getResult(0), negInf);
  Value base =
      arith::SelectOp::create(b, loc, seen, largest.getResult(0), zero);
  auto sums = scf::ForOp::create(
      b, loc, zeroIndex, ranges, one, ValueRange{zero, zero},
      [&](OpBuilder &, Location, Value r, ValueRange state) {
        Value weight = math::Exp2Op::create(
            b, loc, arith::SubFOp::create(b, loc, logSum(r), base));
        Value value = memref::LoadOp::create(
            b, loc, partial, ValueRange{r, batch, head, query, column});
        scf::YieldOp::create(
            b, loc,
            ValueRange{arith::AddFOp::create(
                           b, loc, state[0],
                           arith::MulFOp::create(b, loc, weight, value)),
                       arith::AddFOp::create(b, loc, state[1], weight)});
      });
  Value total = sums.getResult(1);
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, total, zero);
  Value result = arith::SelectOp::create(
      b, loc, positive,
      arith::DivFOp::create(b, loc, sums.getResult(0), total), zero);
  memref::StoreOp::create(
      b, loc,
      arith::TruncFOp::create(
          b, loc, cast<MemRefType>(out.getType()).getElementType(), result),
      out, ValueRange{batch, head, query, column});
}

/// A memref type for reading `type` in place: any offset and outer strides,
/// unit innermost stride (what cp.async needs).
MemRefType bufferType(RankedTensorType type) {
  int64_t rank = type.getRank();
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  strides.back() = 1;
  return MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic,
                             strides));
}

/// tfm.attention -> to_buffer of its operands, tfm.buffer_attention into a
/// new buffer, to_tensor of that buffer.
void bufferize(IRRewriter &rewriter, AttentionOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  RankedTensorType resultType = op.getType();
  auto read = [&](Value tensor) -> Value {
    if (!tensor)
      return nullptr;
    return bufferization::ToBufferOp::create(
        rewriter, loc, bufferType(cast<RankedTensorType>(tensor.getType())),
        tensor, /*readOnly=*/true);
  };
  Value q = read(op.getQuery()), k = read(op.getKey()), v = read(op.getValue());
  Value lengths = read(op.getKvLengths());

  // Sizes the verifier could not compare must agree at run time (asserts
  // that tfm-insert-runtime-checks turns into entry checks).
  assertSameDims(rewriter, loc, op);

  SmallVector<Value> dynamicSizes;
  for (int64_t d : {kBatch, kSeq})
    if (resultType.isDynamicDim(d))
      dynamicSizes.push_back(memref::DimOp::create(rewriter, loc, q, d));
  auto outType =
      MemRefType::get(resultType.getShape(), resultType.getElementType());
  Value out = memref::AllocOp::create(rewriter, loc, outType, dynamicSizes);
  BufferAttentionOp::create(rewriter, loc, q, k, v, lengths, out,
                            op.getMaskAttr(), op.getScaleAttr(),
                            op.getSoftcapAttr());
  rewriter.replaceOp(op, bufferization::ToTensorOp::create(
                             rewriter, loc, resultType, out,
                             /*restrict=*/true, /*writable=*/true));
}

struct TfmGPUFlashAttentionPass
    : tfm::impl::TfmGPUFlashAttentionPassBase<TfmGPUFlashAttentionPass> {
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      if (!op.getDenseMask() && !op.getBias() &&
          kernelTakes(op.getQuery().getType(), op.getValue().getType()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops)
      bufferize(rewriter, op);
  }
};

/// Whether `permutation` keeps the innermost dim innermost (a transposed
/// view then still has unit-stride rows).
bool keepsRows(ArrayRef<int64_t> permutation) {
  return !permutation.empty() &&
         permutation.back() == int64_t(permutation.size()) - 1;
}

/// An operand read as to_buffer(linalg.transpose(y)), by kernels alone,
/// becomes the transposed view of to_buffer(y): no transposed copy (q, k
/// and v split into heads, [B, S, H, D] -> [B, H, S, D]).
void readTransposedView(RewriterBase &rewriter,
                        bufferization::ToBufferOp read) {
  auto transpose = read.getTensor().getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !read.getReadOnly() ||
      !keepsRows(transpose.getPermutation()) ||
      !llvm::all_of(read->getUsers(),
                    [](Operation *user) { return isa<BufferAttentionOp>(user); }))
    return;
  rewriter.setInsertionPoint(read);
  Location loc = read.getLoc();
  Value source = transpose.getInput();
  Value buffer = bufferization::ToBufferOp::create(
      rewriter, loc, bufferType(cast<RankedTensorType>(source.getType())),
      source, /*readOnly=*/true);
  Value view = memref::TransposeOp::create(
      rewriter, loc, buffer,
      AffineMapAttr::get(AffineMap::getPermutationMap(
          transpose.getPermutation(), rewriter.getContext())));
  if (view.getType() != read.getType())
    view = memref::CastOp::create(rewriter, loc, read.getType(), view);
  rewriter.replaceOp(read, view);
}

/// A kernel result read only by a linalg.transpose (attention's heads
/// merged, [B, H, S, D] -> [B, S, H, D]) is written through the transposed
/// view of a buffer in the transpose's layout, which replaces it.
void writeTransposedView(RewriterBase &rewriter, BufferAttentionOp op) {
  auto alloc = op.getResult().getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  bufferization::ToTensorOp read;
  for (Operation *user : alloc->getUsers()) {
    auto asRead = dyn_cast<bufferization::ToTensorOp>(user);
    if (user == op)
      continue;
    if (!asRead || read)
      return;
    read = asRead;
  }
  if (!read || !read->hasOneUse())
    return;
  auto transpose = dyn_cast<linalg::TransposeOp>(*read->getUsers().begin());
  if (!transpose || !keepsRows(transpose.getPermutation()))
    return;
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  rewriter.setInsertionPoint(alloc);
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> sizes = alloc.getMixedSizes();
  SmallVector<OpFoldResult> transposedSizes;
  for (int64_t d : permutation)
    transposedSizes.push_back(sizes[d]);
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicSizes;
  dispatchIndexOpFoldResults(transposedSizes, dynamicSizes, shape);
  auto type = MemRefType::get(shape, alloc.getType().getElementType());
  Value buffer = memref::AllocOp::create(rewriter, loc, type, dynamicSizes);
  // Dim d of the view is dim inverse[d] of the buffer.
  SmallVector<int64_t> inverse = invertPermutationVector(permutation);
  Value view = memref::TransposeOp::create(
      rewriter, loc, buffer,
      AffineMapAttr::get(
          AffineMap::getPermutationMap(inverse, rewriter.getContext())));
  op.getResultMutable().assign(view);
  rewriter.setInsertionPoint(read);
  rewriter.replaceOp(transpose, bufferization::ToTensorOp::create(
                                    rewriter, loc, transpose.getResultTypes()[0],
                                    buffer, /*restrict=*/true,
                                    /*writable=*/true));
  rewriter.eraseOp(read);
  rewriter.eraseOp(alloc);
}

/// Reassociation indices that group each dim of `shape` that is not 1 with
/// the unit dims before it (those after the last join its group): the
/// collapse of `shape` to its other dims, or their expansion back to it.
SmallVector<ReassociationIndices> unitDimsJoined(ArrayRef<int64_t> shape) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0, rank = shape.size(); d < rank; ++d) {
    pending.push_back(d);
    if (shape[d] != 1) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!groups.empty())
    llvm::append_range(groups.back(), pending);
  return groups;
}

/// A transpose that moves only unit dims, the others keeping their order
/// (decode's new k and v, [B, 1, H, D] -> [B, H, 1, D], on their way into
/// the KV caches), is the same data in the same order: a collapse to the
/// other dims and an expansion, views where the transpose was a copy.
void transposeAsReshape(RewriterBase &rewriter, linalg::TransposeOp op) {
  if (!op.hasPureTensorSemantics())
    return;
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  auto outType = cast<RankedTensorType>(op.getResult()[0].getType());
  ArrayRef<int64_t> permutation = op.getPermutation();
  int64_t previous = -1;
  for (int64_t d : permutation) {
    if (inType.getDimSize(d) == 1)
      continue;
    if (d < previous)
      return;
    previous = d;
  }
  SmallVector<ReassociationIndices> inGroups =
      unitDimsJoined(inType.getShape());
  SmallVector<ReassociationIndices> outGroups =
      unitDimsJoined(outType.getShape());
  // Nothing to gain where every dim is 1, or nothing moves.
  if (inGroups.empty() || llvm::equal(permutation, llvm::seq<int64_t>(
                                                       0, permutation.size())))
    return;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value rows =
      tensor::CollapseShapeOp::create(rewriter, loc, op.getInput(), inGroups);
  SmallVector<OpFoldResult> inSizes =
      tensor::getMixedSizes(rewriter, loc, op.getInput());
  SmallVector<OpFoldResult> outSizes;
  for (int64_t d : permutation)
    outSizes.push_back(inSizes[d]);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, outType, rows,
                                                     outGroups, outSizes);
}

struct TfmGPUFoldAttentionTransposesPass
    : tfm::impl::TfmGPUFoldAttentionTransposesPassBase<
          TfmGPUFoldAttentionTransposesPass> {
  void runOnOperation() override {
    SmallVector<bufferization::ToBufferOp> reads;
    SmallVector<BufferAttentionOp> ops;
    getOperation().walk([&](Operation *op) {
      if (auto read = dyn_cast<bufferization::ToBufferOp>(op))
        reads.push_back(read);
      else if (auto attention = dyn_cast<BufferAttentionOp>(op))
        ops.push_back(attention);
    });
    IRRewriter rewriter(&getContext());
    // Views first, where the attention kernel reads or writes a transpose.

    for (bufferization::ToBufferOp read : reads)
      readTransposedView(rewriter, read);
    for (BufferAttentionOp op : ops)
      writeTransposedView(rewriter, op);
    // The rest, where it only moves unit dims.
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp transpose) {
      if (!transpose->use_empty())
        transposes.push_back(transpose);
    });
    for (linalg::TransposeOp transpose : transposes)
      transposeAsReshape(rewriter, transpose);
  }
};

/// When the result buffer is a fresh allocation that is only copied into
/// another buffer right after the kernel (an entry point's output, as
/// bufferization leaves it), the kernel writes that buffer instead: no copy.
void writeIntoCopyTarget(BufferAttentionOp op) {
  auto alloc = op.getResult().getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  memref::CopyOp copy;
  memref::DeallocOp dealloc;
  for (Operation *user : alloc->getUsers()) {
    if (user == op)
      continue;
    auto asCopy = dyn_cast<memref::CopyOp>(user);
    auto asDealloc = dyn_cast<memref::DeallocOp>(user);
    if (asCopy && !copy && asCopy.getSource() == alloc.getResult())
      copy = asCopy;
    else if (asDealloc && !dealloc)
      dealloc = asDealloc;
    else
      return;
  }
  if (!copy || copy->getBlock() != op->getBlock() ||
      copy.getTarget().getType() != alloc.getType())
    return;
  // The target exists before the kernel, and nothing between the kernel
  // and the copy touches memory.
  Value target = copy.getTarget();
  Operation *definition = target.getDefiningOp();
  if (definition && (definition->getBlock() != op->getBlock() ||
                     !definition->isBeforeInBlock(op)))
    return;
  if (!isa<BlockArgument>(target) && !definition)
    return;
  for (Operation *between = op->getNextNode(); between != copy;
       between = between->getNextNode())
    if (!isMemoryEffectFree(between))
      return;
  op.getResultMutable().assign(target);
  copy->erase();
  if (dealloc)
    dealloc->erase();
  alloc->erase();
}

/// tfm.buffer_attention -> the kernel's gpu.launch. With no batches or no
/// queries its grid is empty, which the runtime skips (mgpuLaunchKernel):
/// no host branch around it, which would make gpu-async-region wait for
/// the stream before and after it.
void launchKernel(IRRewriter &rewriter, BufferAttentionOp op, int64_t warpRows,
                  bool splitKV, bool warpgroupMma, bool overlap, bool tma,
                  bool warpSpecialized, bool pingpong) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value q = op.getQuery();
  MemRefType queryType = op.getQuery().getType();
  MemRefType resultType = op.getResult().getType();
  int64_t heads = queryType.getDimSize(kHeads);
  int64_t kvHeads = op.getKey().getType().getDimSize(kHeads);
  int64_t queries = queryType.getDimSize(kSeq);
  RowSplit split{warpRows, resultType.getDimSize(kHead)};
  split.packed = splitKV && !ShapedType::isDynamic(queries) && queries > 0 &&
                 heads / kvHeads * queries <= 16;
  if (split.packed)
    split.warpRows = 16;
  split.warpgroups = warpgroupMma && !split.packed;
  split.overlap = split.warpgroups && overlap;
  split.tma = split.warpgroups && tma;
  split.specialized = split.tma && warpSpecialized;
  split.pingpong = split.specialized && split.overlap && pingpong;
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  Value batches = memref::DimOp::create(rewriter, loc, q, kBatch);
  // Grid: (query tiles, heads, batches), or packed (key ranges, KV heads,
  // batches) with enough ranges for about kTargetBlocks blocks.
  Value gridX, gridY, ranges, partial, lse;
  if (split.packed) {
    Value keys = memref::DimOp::create(rewriter, loc, op.getKey(), kSeq);
    gridY = constant(kvHeads);
    Value blocks = arith::MaxUIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, batches, gridY), constant(1));
    ranges = arith::MaxUIOp::create(
        rewriter, loc, constant(1),
        arith::MinUIOp::create(
            rewriter, loc,
            arith::CeilDivUIOp::create(rewriter, loc, keys,
                                       constant(kMinSplitKeys)),
            arith::CeilDivUIOp::create(rewriter, loc,
                                       constant(kTargetBlocks), blocks)));
    gridX = ranges;
    Type f32 = rewriter.getF32Type();
    int64_t dynamic = ShapedType::kDynamic;
    partial = memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get({dynamic, dynamic, heads, queries, split.headDim},
                        f32),
        ValueRange{ranges, batches});
    lse = memref::AllocOp::create(
        rewriter, loc, MemRefType::get({dynamic, dynamic, heads, queries}, f32),
        ValueRange{ranges, batches});
  } else {
    gridX = arith::CeilDivUIOp::create(
        rewriter, loc, memref::DimOp::create(rewriter, loc, q, kSeq),
        constant(kRows));
    gridY = constant(heads);
  }
  // With TMA, K's and V's tensor maps, in boxes of 64 keys by 64 columns.
  Value kMap, vMap;
  if (split.tma) {
    kMap = createTensorMap(rewriter, loc, op.getKey(), {1, 1, kKeys, 64});
    vMap = createTensorMap(rewriter, loc, op.getValue(), {1, 1, kKeys, 64});
  }
  // The tiles in dynamic shared memory: K, V and Q tiles of head dim 128
  // pass the 48 KiB of static shared memory.
  gpu::LaunchOp launch;
  Value shared;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    std::tie(launch, shared) =
        createSharedMemoryLaunch(rewriter, loc, {gridX, gridY, batches},
                                 split.threads(), split.sharedBytes());
    auto tile = [&](int64_t rows, int64_t offset) {
      SmallVector<int64_t> shape = {rows, split.headDim};
      if (split.warpgroups)
        shape = {split.headDim / 64, rows, 64};
      if (split.buffers() > 1)
        shape.insert(shape.begin(), split.buffers());
      return sharedView(rewriter, loc, shared, shape,
                        resultType.getElementType(), offset);
    };
    int64_t buffers = split.buffers();
    Value ks = tile(kKeys, 0), vs = tile(kKeys, buffers * split.tileBytes());
    Value qs = split.queryShared()
                   ? tile(split.blockRows(), 2 * buffers * split.tileBytes())
                   : Value();
    // (No Q tile with warpgroups, hence with TMA.)
    Value zeros = split.zeroTile() ? sharedView(rewriter, loc, shared,
                                                {split.headDim / 64, kKeys, 64},
                                                resultType.getElementType(),
                                                2 * buffers * split.tileBytes())
                                   : Value();
    Value barriers =
        split.tma ? sharedView(rewriter, loc, shared, {split.barrierObjects()},
                               rewriter.getI64Type(), split.tilesBytes())
                  : Value();
    KernelBuilder(rewriter, loc, op, split)
        .build(launch, q, op.getKey(), op.getValue(), op.getKvLengths(),
               op.getResult(), ks, vs, qs, partial, lse, barriers, kMap, vMap,
               zeros);
  }
  if (split.packed) {
    rewriter.setInsertionPointAfter(launch);
    combineRanges(rewriter, loc, ranges, partial, lse, op.getResult());
    memref::DeallocOp::create(rewriter, loc, partial);
    memref::DeallocOp::create(rewriter, loc, lse);
  }
  rewriter.eraseOp(op);
}

struct TfmGPULowerBufferAttentionPass
    : tfm::impl::TfmGPULowerBufferAttentionPassBase<
          TfmGPULowerBufferAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<BufferAttentionOp> ops;
    getOperation().walk([&](BufferAttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    if (warpRows != 16 && warpRows != 32) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: warp-rows "
                               "must be 16 or 32, not ")
          << int64_t(warpRows);
      return signalPassFailure();
    }
    if (warpgroupOverlap && !warpgroupMma) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: "
                               "warpgroup-overlap takes warpgroup-mma");
      return signalPassFailure();
    }
    if (tma && !warpgroupMma) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: tma takes "
                               "warpgroup-mma");
      return signalPassFailure();
    }
    if (warpSpecialized && !tma) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: "
                               "warp-specialized takes tma");
      return signalPassFailure();
    }
    if (pingpong && !(warpSpecialized && warpgroupOverlap)) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: pingpong "
                               "takes warp-specialized and "
                               "warpgroup-overlap");
      return signalPassFailure();
    }
    if (warpgroupMma && warpRows != 16) {
      getOperation().emitError("tfm-gpu-lower-buffer-attention: "
                               "warpgroup-mma takes warp-rows 16");
      return signalPassFailure();
    }
    for (BufferAttentionOp op : ops) {
      if (!kernelTakes(op.getQuery().getType(), op.getValue().getType())) {
        op.emitOpError("has no GPU kernel for these types: it takes bf16 or "
                       "f16 with head dim 64 or 128");
        return signalPassFailure();
      }
      writeIntoCopyTarget(op);
      launchKernel(rewriter, op, warpRows, splitKV, warpgroupMma,
                   warpgroupOverlap, tma, warpSpecialized, pingpong);
    }
  }
};

} // namespace
