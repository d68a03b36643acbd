//===- MatmulKernel.h - the tensor-core projection kernel -------*- C++ -*-===//
//
// The kernel tfm-gpu-tensor-core-matmul (TensorCoreMatmul.cpp) launches for
// a projection: blocks of warps (or warpgroups) compute tiles of C, walking
// K in steps through a pipeline of stages in dynamic shared memory, filled
// by every thread's cp.async or by TMA (one thread, or a producer
// warpgroup of its own); products are mma.sync m16n8k16 fed by ldmatrix or
// wgmma on descriptors of the shared tiles, accumulated in f32 registers;
// C (or the epilogue's output) is written once.
//
// Shared rows are `step` elements (chunks of 16 bytes); chunk c of row r is
// stored at c ^ ((r / rows per 128 bytes) mod chunks per row), so that the
// 8 rows an ldmatrix matrix reads fall into 8 different bank groups.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CODEGEN_GPU_MATMULKERNEL_H
#define TFM_LIB_CODEGEN_GPU_MATMULKERNEL_H

#include "Projection.h"
#include "TensorCoreBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <algorithm>

namespace mlir::tfm::matmul {

/// The columns a thread stores at once from the staged sums (16 bytes of
/// bf16/f16), and the floats that pad each staged row: 32 bytes, so that
/// the 8 rows of an accumulator tile fall on different banks in pairs.
constexpr int64_t kChunkColumns = 8;
constexpr int64_t kStagingPad = 8;

/// How a kernel tiles its projection.
struct Tiling {
  int64_t blockRows, blockColumns, step, stages, warpRows, warpColumns;
  /// Warpgroup MMA (sm_90a): the "warp" tile is a warpgroup's (4 warps,
  /// 64 rows, wgmma m64nNk16 with N = warpColumns), its operands read from
  /// shared memory through descriptors.
  bool warpgroups = false;
  /// With warpgroups: each step's tiles brought by two TMA loads (one
  /// thread issues them; the tensor maps zero-fill past M, N and K), whose
  /// arrival a barrier object per stage tracks, rather than by every
  /// thread's cp.async.
  bool tma = false;
  /// With TMA (warp specialization): a warpgroup of its own issues the
  /// loads, each stage waiting to be refilled on a second barrier object
  /// that the tile's warpgroups arrive on once their products have read it
  /// (no block barrier per step).
  bool specialized = false;
  /// When specialized, persistent: a grid of at most as many blocks as
  /// the GPU's multiprocessors hold at once (rather than a block per tile),
  /// each walking tiles `grid size` apart, its producer loading the next
  /// tile's first steps while the warpgroups store the last.
  bool persistent = false;
  /// When persistent, the grid is sized for this many multiprocessors; 0:
  /// the device's count, asked by the host before each launch.
  int64_t multiprocessors = 0;

  /// Warps, or warpgroups.
  int64_t units() const {
    return (blockRows / warpRows) * (blockColumns / warpColumns);
  }
  int64_t threads() const { return tileThreads() + (specialized ? 128 : 0); }
  /// 16-byte chunks per shared row.
  int64_t chunks() const { return step / 8; }
  /// Shared rows per 128 bytes (the 32 banks): what the swizzle divides by.
  int64_t rowsPerLine() const { return 64 / step; }
  /// The bytes of one stage: A's and B's tiles, bf16/f16.
  int64_t stageBytes() const { return (blockRows + blockColumns) * step * 2; }
  /// Barrier objects (8 bytes each): with TMA, one a stage (its tiles have
  /// landed), and when specialized a second (it may be refilled).
  int64_t barriers() const {
    return stages * ((tma ? 1 : 0) + (specialized ? 1 : 0));
  }
  /// The stages, then the barrier objects.
  int64_t sharedBytes() const { return stages * stageBytes() + barriers() * 8; }
  /// The threads that compute the tile (the producer aside).
  int64_t tileThreads() const { return (warpgroups ? 128 : 32) * units(); }
  /// The bytes of the tile's f32 sums staged in shared memory for the
  /// stores (rows padded by kStagingPad floats).
  int64_t stagingBytes() const {
    return blockRows * (blockColumns + kStagingPad) * 4;
  }
  /// Whether the tile's results go through shared memory (see build) when
  /// C has `columns` columns: the stages are free once the tile's products
  /// are done, unless persistent (the producer is filling them with the
  /// next tile's steps), and must hold the sums; a chunk of 8 columns is
  /// whole inside C or outside it; every tile thread stores as many.
  bool stagesResults(int64_t columns) const {
    return !persistent && columns % kChunkColumns == 0 &&
           stagingBytes() <= stages * stageBytes() &&
           (blockRows * blockColumns / kChunkColumns) % tileThreads() == 0;
  }
  /// Persistent with two warpgroups of products: the producer gives them
  /// registers (setmaxnreg), and the block takes the whole register file.
  bool movesRegisters() const {
    return specialized && persistent && units() == 2;
  }
  /// The blocks a multiprocessor of sm_90 holds at once: 228 KiB of shared
  /// memory, of which each block takes 1 KiB more than it asks for, and
  /// 2048 threads; one when the block moves registers.
  int64_t blocksPerMultiprocessor() const {
    if (movesRegisters())
      return 1;
    return std::max<int64_t>(
        1, std::min((228 * 1024) / (sharedBytes() + 1024), 2048 / threads()));
  }
};

/// The most dynamic shared memory a block may have on sm_80, and on sm_90
/// (where warpgroup MMA runs).
constexpr int64_t kMaxSharedBytes = 163 * 1024;
constexpr int64_t kMaxSharedBytesSm90 = 227 * 1024;

/// When a block moves registers (Tiling::movesRegisters): those a thread
/// of the producer and of the others keeps (setmaxnreg; 40 · 128 +
/// 232 · 256 fit the 64K of a multiprocessor).
constexpr int32_t kProducerRegisters = 40;
constexpr int32_t kTileRegisters = 232;

/// Row blocks that walk the columns together (see build).
constexpr int64_t kGroupRowBlocks = 16;

/// Steps of wgmma products a warpgroup leaves running while it issues the
/// next.
constexpr int64_t kWgmmaInFlight = 1;

/// Builds the kernel of one projection and tiling into a `gpu.launch`.
class MatmulKernelBuilder : TensorCoreBuilder {
public:
  MatmulKernelBuilder(OpBuilder &b, Location loc, const Projection &p,
                      const Tiling &t)
      : TensorCoreBuilder(b, loc,
                          cast<MemRefType>(p.b.getType()).getElementType()),
        p(p), t(t) {}

  /// The kernel body; `as` and `bs` are the [stages, block rows or columns,
  /// step] shared tiles. The result goes to C, or with an epilogue to its
  /// output; `operands` are [M, N] views of the epilogue's operands (null
  /// for C's sums), its output last. With TMA, `barriers` are the stages'
  /// barrier objects (i64), `aMap` and `bMap` A's and B's tensor maps
  /// (pointers to global memory). With `staging` (a [block rows, block
  /// columns + kStagingPad] f32 view over the stages, when
  /// Tiling::stagesResults), the sums go through it (storeStaged).
  void build(gpu::LaunchOp launch, Value as, Value bs, ArrayRef<Value> operands,
             Value barriers = nullptr, Value aMap = nullptr,
             Value bMap = nullptr, Value staging = nullptr);

private:
  /// Copies step `step` (K columns [step·t.step, (step + 1)·t.step)) of the
  /// block's rows of A and B into stage `stage`; rows past the end read the
  /// last row (their results are never stored), columns past K are zeros.
  void copyStep(Value stage, Value step);
  /// The same for one operand: `count` rows of `source` from `first`.
  void copyRows(Value tiles, Value source, Value first, Value last,
                int64_t count, Value stage, Value k0);
  /// TMA: one thread's loads of step `step` into stage `stage`, and the
  /// stage's barrier told to expect their bytes.
  void loadStep(Value stage, Value step);
  /// TMA: waits until the loads into stage `stage` of the block's step
  /// `count` (counted over its tiles) have landed.
  void waitForStep(Value stage, Value count);
  /// Specialized: the producer's loop over the block's tiles and their
  /// steps, each step's loads once the tile's warpgroups have released its
  /// stage's use before.
  void produce(int64_t steps);
  /// Sets firstRow and firstColumn to those of tile `tile` (see build).
  void placeTile(Value tile);
  /// `body(tile, first)` for each of the block's tiles: its own, or
  /// persistent, one every grid size tiles from it; `first` is the block's
  /// step count before the tile (0 when not persistent).
  void forEachTile(int64_t steps, function_ref<void(Value, Value)> body);
  /// Specialized: stage `stage`'s second barrier object (free to refill).
  Value freedBarrier(Value stage) {
    return barrierPointer(barriers, add(stage, t.stages));
  }
  /// The swizzled chunk of shared row `row` where chunk `chunk` is stored.
  Value swizzle(Value chunk, Value row) {
    return xorIndex(chunk, rem(div(row, t.rowsPerLine()), t.chunks()));
  }
  /// One step's products of the warp's tile with mma.sync (operands through
  /// ldmatrix), added to `acc`.
  void warpStep(Value stage, SmallVectorImpl<Value> &acc);
  /// One step's products of the warpgroup's tile with wgmma (operands read
  /// from shared memory through descriptors), added to `acc`.
  void warpgroupStep(Value stage, SmallVectorImpl<Value> &acc);
  /// Where accumulator (mt, nt, half) is in the block's tile: its row and
  /// the first of its two columns.
  Value accumulatorRow(int64_t mt, int64_t half) {
    return add(add(warpRow, quadRow), mt * 16 + half * 8);
  }
  Value accumulatorColumn(int64_t nt) {
    return add(add(unitColumn, quadColumn), nt * 8);
  }
  /// The tile's results (the epilogue's values, or the sums), each pair of
  /// accumulators stored where it is, inside C: a warp's store spans 8
  /// rows.
  void storeDirect(ArrayRef<Value> sums, ArrayRef<Value> operands);
  /// The same through shared memory: the accumulators are stored into
  /// `staging`, then each thread reads kChunkColumns sums of a row at a
  /// time and stores their results at once, a warp's stores along rows
  /// (16-byte stores where every operand's rows are 16-byte aligned, asked
  /// at run time), and the epilogue's loads alike.
  void storeStaged(ArrayRef<Value> sums, ArrayRef<Value> operands);
  /// A barrier of the tile's threads (the producer aside).
  void tileBarrier();
  /// Whether [row, column] is inside C.
  Value insideC(Value row, Value column) {
    return both(cmp(arith::CmpIPredicate::slt, row, rows),
                cmp(arith::CmpIPredicate::slt, column, columns));
  }

  /// The wgmma descriptor of the 64-column step in stage `stage` of `tiles`
  /// ([stages, rows, 64]) from row `row`, at column 16·`kk`: K-major,
  /// 128-byte swizzle (what swizzle() stores: chunk c of row r at
  /// c ^ (r mod 8)), 8-row groups 1024 bytes apart.
  Value descriptor(Value tiles, Value stage, Value row, int64_t kk);

  const Projection &p;
  const Tiling &t;
  Value tid, blockId, gridSize, rowBlocks, firstRow, firstColumn, rows, columns,
      lastRow, lastColumn, as, bs, barriers, aMap, bMap, staging;
  int64_t columnBlocks = 0;
  // Per lane: where its ldmatrix matrices start (mma.sync), and its unit's
  // (warp's or warpgroup's) first row and column in the block's tile.
  Value aRow, aXor, bRow, bXor, unitRow, unitColumn;
  // The first row of the warp's accumulators in the block's tile (in a
  // warpgroup, the warp's 16 of its 64), and the lane's row and column in
  // an accumulator tile.
  Value warpRow, quadRow, quadColumn;
  int64_t mTiles = 0, nTiles = 0;
};

} // namespace mlir::tfm::matmul

#endif // TFM_LIB_CODEGEN_GPU_MATMULKERNEL_H
