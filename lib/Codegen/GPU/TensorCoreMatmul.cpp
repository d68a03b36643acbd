//===- TensorCoreMatmul.cpp - projections on tensor cores -----------------===//
//
// Replaces a bufferized bf16/f16 projection, the contraction
// C[m, n] += A[m, k] · B[n, k] (nn.Linear's weight layout) into an f32 C,
// by one tensor-core kernel: blocks of warps compute tiles of C (by
// default 128x256, a warp 64x64), walking K in steps of 32 or 64 through a
// cp.async pipeline of several stages in dynamic shared memory; products
// are mma.sync m16n8k16 fed by ldmatrix (or wgmma on sm_90a, whose stages
// TMA may fill instead: one thread's loads through tensor maps the host
// makes, a barrier object per stage), accumulated in f32 registers; C is
// written once, or not at all when the kernel computes the elementwise op
// that alone reads it (its epilogue: rounding, residual, act(gate) · up)
// as it stores. Projections of at most
// `few-rows` rows run on the few-rows kernel (FewRowsMatmul.cpp) instead.
//
// Shared rows are `step` elements (chunks of 16 bytes); chunk c of row r is
// stored at c ^ ((r / rows per 128 bytes) mod chunks per row), so that the
// 8 rows an ldmatrix matrix reads fall into 8 different bank groups.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "Projection.h"
#include "KernelLaunch.h"
#include "TensorCoreBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUTENSORCOREMATMULPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

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
  int64_t threads() const {
    return (warpgroups ? 128 : 32) * units() + (specialized ? 128 : 0);
  }
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

/// 128x128 tiles of 4 warps of 64x64, 3 stages of 64 columns (96 KiB: two
/// blocks per multiprocessor); narrow projections (N <= 512, a GQA model's
/// k and v) 64x64 tiles of 4 warps of 32x32, 4 stages of 32 columns, so
/// that a few thousand rows still give every multiprocessor blocks.
/// Measured on an H100 against 128x256 and 256x128 tiles of 8 warps and
/// other steps and stage counts (docs/PERFORMANCE.md).
/// With warpgroup MMA: 128x256 tiles of 2 warpgroups of 64x256, 4 stages
/// of 64 columns (192 KiB); N <= 512: 64x128 tiles of one warpgroup (also
/// measured on an H100, docs/PERFORMANCE.md).
Tiling defaultTiling(int64_t columns, bool warpgroups) {
  if (warpgroups) {
    if (columns <= 512)
      return {64, 128, 64, 4, 64, 128, true};
    return {128, 256, 64, 4, 64, 256, true};
  }
  if (columns <= 512)
    return {64, 64, 32, 4, 32, 32};
  return {128, 128, 64, 3, 64, 64};
}

/// Why `t` cannot tile a kernel, or "" if it can.
std::string checkTiling(const Tiling &t) {
  if (t.step != 32 && t.step != 64)
    return "its step must be 32 or 64";
  if (t.stages < 2)
    return "it needs at least 2 stages";
  if (t.warpgroups &&
      (t.step != 64 || t.warpRows != 64 || t.warpColumns % 16 != 0 ||
       t.warpColumns > 256))
    return "a warpgroup's tile has 64 rows, at most 256 columns (a multiple "
           "of 16), and steps of 64";
  // A TMA box spans at most 256 rows.
  if (t.tma && (t.blockRows > 256 || t.blockColumns > 256))
    return "a TMA load brings at most 256 rows of A or B";
  if (t.warpgroups && t.stages < 2 + kWgmmaInFlight)
    return "warpgroup MMA needs at least " +
           std::to_string(2 + kWgmmaInFlight) + " stages";
  if (t.warpRows <= 0 || t.warpColumns <= 0 || t.warpRows % 16 != 0 ||
      t.warpColumns % 16 != 0)
    return "a warp's rows and columns must be positive multiples of 16";
  if (t.blockRows <= 0 || t.blockColumns <= 0 ||
      t.blockRows % t.warpRows != 0 || t.blockColumns % t.warpColumns != 0)
    return "a block's rows and columns must be multiples of a warp's";
  if (t.threads() > 1024)
    return "a block may have at most 32 warps";
  // cp.async's copies are shared by every thread (TMA's are one thread's).
  if (!t.tma && ((t.blockRows * t.chunks()) % t.threads() != 0 ||
                 (t.blockColumns * t.chunks()) % t.threads() != 0))
    return "every thread must copy the same number of 16-byte chunks of a "
           "step";
  int64_t maxBytes = t.warpgroups ? kMaxSharedBytesSm90 : kMaxSharedBytes;
  if (t.sharedBytes() > maxBytes)
    return "its stages need " + std::to_string(t.sharedBytes()) +
           " bytes of shared memory, more than a block has (" +
           std::to_string(maxBytes) + ")";
  return "";
}

/// Whether the innermost stride of `type` is 1.
bool isRowContiguous(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

/// The elementwise op that computes projection `p`'s result from its f32
/// sums, when nothing else reads them, and their view.
void matchEpilogue(Projection &p) {
  auto alloc = p.c.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  Operation *reader = nullptr;
  for (Operation *user : alloc->getUsers()) {
    if (user == p.contraction || user == p.fill ||
        isa<memref::DeallocOp>(user))
      continue;
    if (reader)
      return;
    reader = user;
  }
  auto view = dyn_cast_or_null<memref::ExpandShapeOp>(reader);
  if (view) {
    if (!view->hasOneUse())
      return;
    reader = *view->getUsers().begin();
  }
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(reader);
  if (!epilogue || !epilogue.hasPureBufferSemantics() ||
      epilogue.getNumDpsInits() != 1 ||
      epilogue.getNumParallelLoops() != epilogue.getNumLoops() ||
      !llvm::all_of(epilogue.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      epilogue->getBlock() != p.contraction->getBlock() ||
      !p.contraction->isBeforeInBlock(epilogue))
    return;
  // C read once; every other operand dense (identity layout), so that the
  // kernel reads and writes it two aligned values at a time at C's
  // [row, column], through an [M, N] view where C is seen as [B, S, N].
  Value sums = view ? view.getResult() : p.c;
  if (llvm::count(epilogue.getDpsInputs(), sums) != 1)
    return;
  for (OpOperand &operand : epilogue->getOpOperands())
    if (operand.get() != sums &&
        !cast<MemRefType>(operand.get().getType()).getLayout().isIdentity())
      return;
  // An elementwise function of the operands' values at the same index.
  Block &body = epilogue.getRegion().front();
  if (!body.getArguments().back().use_empty() ||
      llvm::any_of(body.without_terminator(), [](Operation &op) {
        return isa<linalg::IndexOp>(op) || !isMemoryEffectFree(&op);
      }))
    return;
  // The kernel runs where the epilogue is: what lies between only makes
  // buffers or views, and touches no memory.
  for (Operation *between = p.contraction->getNextNode(); between != epilogue;
       between = between->getNextNode())
    if (!isMemoryEffectFree(between) && !isa<memref::AllocOp>(between))
      return;
  p.epilogue = epilogue;
  p.view = view;
}

/// Whether `value` is block argument `index` of `block` as f32: the
/// argument itself or its `extf`.
bool isArgumentAsF32(Value value, Block &block, unsigned index) {
  if (value == block.getArgument(index))
    return value.getType().isF32();
  auto extend = value.getDefiningOp<arith::ExtFOp>();
  return extend && extend.getIn() == block.getArgument(index);
}

std::optional<Projection> matchProjection(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  if (iterators.size() != 3 ||
      iterators[0] != utils::IteratorType::parallel ||
      iterators[1] != utils::IteratorType::parallel ||
      iterators[2] != utils::IteratorType::reduction)
    return std::nullopt;
  MLIRContext *context = op.getContext();
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  auto maps = op.getIndexingMapsArray();
  if (maps[0] != AffineMap::get(3, 0, {m, k}, context) ||
      maps[1] != AffineMap::get(3, 0, {n, k}, context) ||
      maps[2] != AffineMap::get(3, 0, {m, n}, context))
    return std::nullopt;

  // out + extf(a) * extf(b)
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto sum = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!sum)
    return std::nullopt;
  Value product = sum.getLhs() == body.getArgument(2) ? sum.getRhs()
                  : sum.getRhs() == body.getArgument(2) ? sum.getLhs()
                                                        : Value();
  auto multiply = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!multiply ||
      !((isArgumentAsF32(multiply.getLhs(), body, 0) &&
         isArgumentAsF32(multiply.getRhs(), body, 1)) ||
        (isArgumentAsF32(multiply.getLhs(), body, 1) &&
         isArgumentAsF32(multiply.getRhs(), body, 0))))
    return std::nullopt;

  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  auto aType = cast<MemRefType>(a.getType());
  auto bType = cast<MemRefType>(b.getType());
  auto cType = cast<MemRefType>(c.getType());
  Type element = bType.getElementType();
  if ((!element.isBF16() && !element.isF16()) ||
      aType.getElementType() != element ||
      !cType.getElementType().isF32() ||
      !isRowContiguous(aType) || !isRowContiguous(bType) ||
      !isRowContiguous(cType))
    return std::nullopt;
  // Rows of whole 16-byte chunks; pairs of columns (C is written two values
  // at a time).
  int64_t depth = aType.getDimSize(1), columns = cType.getDimSize(1);
  if (ShapedType::isDynamic(depth) || depth % 8 != 0 ||
      bType.getDimSize(1) != depth || ShapedType::isDynamic(columns) ||
      columns % 2 != 0)
    return std::nullopt;

  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (fill && (fill.getDpsInits()[0] != c ||
               !matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat())))
    fill = nullptr;
  Projection p{op, fill, a, b, c, depth, nullptr, nullptr};
  matchEpilogue(p);
  return p;
}

class MatmulKernelBuilder : TensorCoreBuilder {
public:
  MatmulKernelBuilder(OpBuilder &b, Location loc, const Projection &p,
                      const Tiling &t)
      : TensorCoreBuilder(
            b, loc, cast<MemRefType>(p.b.getType()).getElementType()),
        p(p), t(t) {}

  /// The kernel body; `as` and `bs` are the [stages, block rows or columns,
  /// step] shared tiles. The result goes to C, or with an epilogue to its
  /// output; `operands` are [M, N] views of the epilogue's operands (null
  /// for C's sums), its output last. With TMA, `barriers` are the stages'
  /// barrier objects (i64), `aMap` and `bMap` A's and B's tensor maps
  /// (pointers to global memory).
  void build(gpu::LaunchOp launch, Value as, Value bs, ArrayRef<Value> operands,
             Value barriers = nullptr, Value aMap = nullptr,
             Value bMap = nullptr);

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
  /// The wgmma descriptor of the 64-column step in stage `stage` of `tiles`
  /// ([stages, rows, 64]) from row `row`, at column 16·`kk`: K-major,
  /// 128-byte swizzle (what swizzle() stores: chunk c of row r at
  /// c ^ (r mod 8)), 8-row groups 1024 bytes apart.
  Value descriptor(Value tiles, Value stage, Value row, int64_t kk);

  const Projection &p;
  const Tiling &t;
  Value tid, blockId, gridSize, rowBlocks, firstRow, firstColumn, rows, columns,
      lastRow, lastColumn, as, bs, barriers, aMap, bMap;
  int64_t columnBlocks = 0;
  // Per lane: where its ldmatrix matrices start (mma.sync), and its unit's
  // (warp's or warpgroup's) first row and column in the block's tile.
  Value aRow, aXor, bRow, bXor, unitRow, unitColumn;
};

void MatmulKernelBuilder::copyStep(Value stage, Value step) {
  Value k0 = mul(step, t.step);
  copyRows(as, p.a, firstRow, lastRow, t.blockRows, stage, k0);
  copyRows(bs, p.b, firstColumn, lastColumn, t.blockColumns, stage, k0);
}

void MatmulKernelBuilder::copyRows(Value tiles, Value source, Value first,
                                   Value last, int64_t count, Value stage,
                                   Value k0) {
  int64_t chunks = t.chunks();
  for (int64_t i = 0; i < count * chunks / t.threads(); ++i) {
    Value id = add(tid, i * t.threads());
    Value row = div(id, chunks), chunk = rem(id, chunks);
    Value column = mul(swizzle(chunk, row), 8);
    Value sourceColumn = add(k0, mul(chunk, 8));
    Value sourceElements;
    if (p.k % t.step != 0) {
      // The last step reads zeros past K (from column 0, which exists).
      Value inside = cmp(arith::CmpIPredicate::slt, sourceColumn, index(p.k));
      sourceElements =
          arith::SelectOp::create(b, loc, inside, index(8), index(0));
      sourceColumn =
          arith::SelectOp::create(b, loc, inside, sourceColumn, index(0));
    }
    copy16Bytes(tiles, {stage, row, column}, source,
                {min(add(first, row), last), sourceColumn}, sourceElements);
  }
}

void MatmulKernelBuilder::loadStep(Value stage, Value step) {
  Value barrier = barrierPointer(barriers, stage);
  arriveExpectingBytes(barrier, t.stageBytes());
  // Boxes at (K's column, the block's first row).
  Value k0 = mul(step, t.step);
  loadBox(aMap, {k0, firstRow}, as, mul(stage, t.blockRows * t.step * 2),
          barrier);
  loadBox(bMap, {k0, firstColumn}, bs, mul(stage, t.blockColumns * t.step * 2),
          barrier);
}

void MatmulKernelBuilder::waitForStep(Value stage, Value count) {
  // A stage's n-th use is the block's step n · stages + stage.
  waitForPhase(barrierPointer(barriers, stage), rem(div(count, t.stages), 2));
}

void MatmulKernelBuilder::produce(int64_t steps) {
  forEachTile(steps, [&](Value, Value first) {
    scf::ForOp::create(
        b, loc, index(0), index(steps), index(1), ValueRange{},
        [&](OpBuilder &, Location, Value step, ValueRange) {
          Value count = add(first, step);
          Value stage = rem(count, t.stages);
          // Its use before (count - stages) released: that use's parity.
          auto reused = scf::IfOp::create(
              b, loc, cmp(arith::CmpIPredicate::uge, count, index(t.stages)));
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(reused.thenBlock());
            waitForPhase(freedBarrier(stage),
                         rem(sub(div(count, t.stages), index(1)), 2));
          }
          loadStep(stage, step);
          scf::YieldOp::create(b, loc);
        });
  });
}

void MatmulKernelBuilder::placeTile(Value tile) {
  // Blocks run in groups of kGroupRowBlocks row blocks, column block by
  // column block, each column block's row blocks together, so that the
  // tiles running at once share their B tiles in L2 and a group's rows of
  // A stay there while the group walks the columns (rather than all the
  // weights streamed from memory once per row block).
  Value firstRowBlock =
      mul(div(tile, kGroupRowBlocks * columnBlocks), kGroupRowBlocks);
  Value groupRows = min(sub(rowBlocks, firstRowBlock), index(kGroupRowBlocks));
  Value within = rem(tile, kGroupRowBlocks * columnBlocks);
  firstRow =
      mul(add(firstRowBlock, arith::RemUIOp::create(b, loc, within, groupRows)),
          t.blockRows);
  firstColumn =
      mul(arith::DivUIOp::create(b, loc, within, groupRows), t.blockColumns);
}

void MatmulKernelBuilder::forEachTile(int64_t steps,
                                      function_ref<void(Value, Value)> body) {
  if (!t.persistent) {
    body(blockId, index(0));
    return;
  }
  Value tiles = mul(rowBlocks, columnBlocks);
  scf::ForOp::create(b, loc, blockId, tiles, gridSize, ValueRange{},
                     [&](OpBuilder &, Location, Value tile, ValueRange) {
                       placeTile(tile);
                       // The block's tiles before this one, times their steps.
                       body(tile, mul(arith::DivUIOp::create(
                                          b, loc, sub(tile, blockId), gridSize),
                                      steps));
                       scf::YieldOp::create(b, loc);
                     });
}

void MatmulKernelBuilder::warpStep(Value stage, SmallVectorImpl<Value> &acc) {
  int64_t mTiles = t.warpRows / 16, nTiles = t.warpColumns / 8;
  for (int64_t kk = 0; kk < t.step / 16; ++kk) {
    SmallVector<SmallVector<Value>> aRegs, bRegs;
    for (int64_t mt = 0; mt < mTiles; ++mt)
      aRegs.push_back(loadMatrices(
          as, {stage, add(aRow, mt * 16), mul(xorIndex(aXor, 2 * kk), 8)},
          /*transpose=*/false));
    for (int64_t pair = 0; pair < nTiles / 2; ++pair) {
      SmallVector<Value> regs = loadMatrices(
          bs, {stage, add(bRow, pair * 16), mul(xorIndex(bXor, 2 * kk), 8)},
          /*transpose=*/false);
      bRegs.push_back({regs[0], regs[1]});
      bRegs.push_back({regs[2], regs[3]});
    }
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t nt = 0; nt < nTiles; ++nt) {
        int64_t at = (mt * nTiles + nt) * 4;
        SmallVector<Value> c(acc.begin() + at, acc.begin() + at + 4);
        c = mma(aRegs[mt], bRegs[nt], c);
        std::copy(c.begin(), c.end(), acc.begin() + at);
      }
  }
}

Value MatmulKernelBuilder::descriptor(Value tiles, Value stage, Value row,
                                      int64_t kk) {
  int64_t rowsPerStage = cast<MemRefType>(tiles.getType()).getDimSize(1);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tiles);
  Value address =
      add(add(base, mul(add(mul(stage, rowsPerStage), row), t.step * 2)),
          kk * 32);
  // The leading byte offset is unused by swizzled K-major operands.
  return sharedDescriptor(address, /*leadingBytes=*/16, /*strideBytes=*/1024);
}

void MatmulKernelBuilder::warpgroupStep(Value stage,
                                        SmallVectorImpl<Value> &acc) {
  MLIRContext *context = b.getContext();
  Type f32Type = b.getF32Type();
  auto structType = LLVM::LLVMStructType::getLiteral(
      context, SmallVector<Type>(acc.size(), f32Type));
  Value packed = LLVM::PoisonOp::create(b, loc, structType);
  for (auto [i, value] : llvm::enumerate(acc))
    packed = LLVM::InsertValueOp::create(b, loc, packed, value,
                                         ArrayRef<int64_t>{int64_t(i)});
  auto type = element.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  auto operandType = NVVM::WGMMATypesAttr::get(context, type);
  auto one = NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kk = 0; kk < t.step / 16; ++kk)
    packed = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, structType, packed, descriptor(as, stage, unitRow, kk),
        descriptor(bs, stage, unitColumn, kk),
        NVVM::MMAShapeAttr::get(context, 64, t.warpColumns, 16), operandType,
        operandType,
        NVVM::WGMMATypesAttr::get(context, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(context, NVVM::WGMMAScaleOut::one), one,
        one, NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::row),
        NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::col),
        /*satfinite=*/nullptr);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // The step before is done: after the next step's barrier, its stage may
  // be refilled.
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc,
                                     b.getI64IntegerAttr(kWgmmaInFlight));
  for (size_t i = 0; i < acc.size(); ++i)
    acc[i] = LLVM::ExtractValueOp::create(b, loc, packed,
                                          ArrayRef<int64_t>{int64_t(i)});
}

void MatmulKernelBuilder::build(gpu::LaunchOp launch, Value aTiles,
                                Value bTiles, ArrayRef<Value> operands,
                                Value stageBarriers, Value aTensorMap,
                                Value bTensorMap) {
  as = aTiles;
  bs = bTiles;
  barriers = stageBarriers;
  aMap = aTensorMap;
  bMap = bTensorMap;
  // Specialized, threads 0-127 are the producer and the tile's warpgroups
  // follow: `tid` counts from their first.
  Value threadId = launch.getThreadIds().x;
  tid = t.specialized ? sub(threadId, index(128)) : threadId;
  Value warp = div(tid, 32), lane = rem(tid, 32);
  Value unit = t.warpgroups ? div(tid, 128) : warp;
  int64_t unitsPerRow = t.blockColumns / t.warpColumns;
  unitRow = mul(div(unit, unitsPerRow), t.warpRows);
  unitColumn = mul(rem(unit, unitsPerRow), t.warpColumns);
  // The rows of C this warp's accumulators hold: its unit's, or in a
  // warpgroup, the warp's 16 of its 64.
  Value warpRow = t.warpgroups ? add(unitRow, mul(rem(warp, 4), 16)) : unitRow;
  Value warpColumn = unitColumn;
  rows = memref::DimOp::create(b, loc, p.a, 0);
  columns = index(cast<MemRefType>(p.c.getType()).getDimSize(1));
  columnBlocks = llvm::divideCeil(cast<MemRefType>(p.c.getType()).getDimSize(1),
                                  t.blockColumns);
  rowBlocks = arith::CeilDivUIOp::create(b, loc, rows, index(t.blockRows));
  blockId = launch.getBlockIds().x;
  gridSize = launch.getGridSize().x;
  // A block's one tile; persistent blocks place each of theirs.
  if (!t.persistent)
    placeTile(blockId);
  lastRow = sub(rows, index(1));
  lastColumn = sub(columns, index(1));
  int64_t steps = llvm::divideCeil(p.k, t.step);

  // Copies run `lead` steps ahead: with mma.sync, stages - 1 (a stage is
  // refilled right after the products that read it); with wgmma, stages - 2,
  // as a step's products may still run while the next step is issued.
  int64_t lead = t.stages - 1 - (t.warpgroups ? kWgmmaInFlight : 0);
  // With TMA, thread 0 issues every load.
  if (t.tma) {
    // A stage's barrier object waits for one arrival (the issuing
    // thread's) and its loads' bytes, its second (specialized) for each
    // warpgroup of the tile; initialized before any thread uses them.
    SmallVector<int64_t> arrivals(t.stages, 1);
    if (t.specialized)
      arrivals.append(t.stages, t.units());
    onFirstThread(threadId, [&] { initBarriers(barriers, arrivals); });
    gpu::BarrierOp::create(b, loc);
    if (t.specialized) {
      // The producer warpgroup's thread 0 runs the loads; the rest of the
      // kernel is the tile's warpgroups'. Persistent, two of them hold the
      // tile loop's state beside their accumulators: the producer gives
      // them registers (168 a thread at entry, 384 threads).
      splitWarpgroups(
          threadId, [&] { onFirstThread(threadId, [&] { produce(steps); }); },
          t.movesRegisters() ? kProducerRegisters : 0,
          t.movesRegisters() ? kTileRegisters : 0);
    } else {
      onFirstThread(tid, [&] {
        for (int64_t s = 0; s < std::min(lead, steps); ++s)
          loadStep(index(s), index(s));
      });
    }
  } else {
    // Steps 0 .. lead - 1 in flight; one commit group per step, empty past
    // the last step, so that waits count uniformly.
    for (int64_t s = 0; s < lead; ++s) {
      if (s < steps)
        copyStep(index(s), index(s));
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    }
  }

  // Lane addresses of the ldmatrix matrices: A tiles are rows +0/+8 then
  // chunks +0/+1, B tiles chunks +0/+1 then rows +0/+8; a row's swizzle
  // depends on the lane only (the other terms of its row are multiples of
  // 8).
  if (!t.warpgroups) {
    Value low3 = rem(lane, 8), matrix = div(lane, 8);
    Value laneSwizzle = rem(div(low3, t.rowsPerLine()), t.chunks());
    aRow = add(warpRow, add(low3, mul(rem(matrix, 2), 8)));
    aXor = xorIndex(div(matrix, 2), laneSwizzle);
    bRow = add(warpColumn, add(low3, mul(div(matrix, 2), 8)));
    bXor = xorIndex(rem(matrix, 2), laneSwizzle);
  }

  // A warpgroup's accumulators are, per warp, those of one 16-row tile by
  // N / 8 8-column tiles, in the layout of mma.sync's.
  int64_t mTiles = t.warpgroups ? 1 : t.warpRows / 16;
  int64_t nTiles = t.warpColumns / 8;
  Value quadRow = div(lane, 4), quadColumn = mul(rem(lane, 4), 2);
  // Where accumulator (mt, nt, half) goes in C.
  auto rowOf = [&](int64_t mt, int64_t half) {
    return add(add(add(firstRow, warpRow), quadRow), mt * 16 + half * 8);
  };
  auto columnOf = [&](int64_t nt) {
    return add(add(add(firstColumn, warpColumn), quadColumn), nt * 8);
  };
  auto inside = [&](Value row, Value column) {
    return both(cmp(arith::CmpIPredicate::slt, row, rows),
                cmp(arith::CmpIPredicate::slt, column, columns));
  };
  auto pairType = VectorType::get({2}, b.getF32Type());
  Value zero = f32(0.0);
  forEachTile(steps, [&](Value, Value first) {
    SmallVector<Value> init(mTiles * nTiles * 4, zero);
    if (!p.fill) {
      // C's values (a bias, say) are the starting sums: read at clamped
      // indices, 0 outside C.
      for (int64_t mt = 0; mt < mTiles; ++mt)
        for (int64_t nt = 0; nt < nTiles; ++nt)
          for (int64_t half = 0; half < 2; ++half) {
            Value row = rowOf(mt, half), column = columnOf(nt);
            Value pair = vector::LoadOp::create(
                b, loc, pairType, p.c,
                ValueRange{min(row, lastRow), min(column, lastColumn)});
            Value in = inside(row, column);
            for (int64_t e = 0; e < 2; ++e)
              init[(mt * nTiles + nt) * 4 + half * 2 + e] =
                  arith::SelectOp::create(
                      b, loc, in, vector::ExtractOp::create(b, loc, pair, e),
                      zero);
          }
    }
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(steps), index(1), init,
        [&](OpBuilder &, Location, Value step, ValueRange state) {
          SmallVector<Value> acc(state.begin(), state.end());
          if (t.tma) {
            Value count = add(first, step);
            Value stage = rem(count, t.stages);
            if (!t.specialized) {
              Value next = add(step, lead);
              Value more = cmp(arith::CmpIPredicate::slt, next, index(steps));
              // Every warpgroup is past the products that read the stage
              // refilled next; then this step's tiles have landed.
              gpu::BarrierOp::create(b, loc);
              onFirstThread(tid, [&] {
                auto load = scf::IfOp::create(b, loc, more);
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPointToStart(load.thenBlock());
                loadStep(rem(next, t.stages), next);
              });
            }
            waitForStep(stage, count);
            warpgroupStep(stage, acc);
            if (t.specialized) {
              // The step before's products are done (the warpgroup waited
              // for all but this step's): its stage goes back to the
              // producer, one arrival per warpgroup.
              auto release = scf::IfOp::create(
                  b, loc,
                  both(cmp(arith::CmpIPredicate::ugt, step, index(0)),
                       cmp(arith::CmpIPredicate::eq, rem(tid, 128), index(0))));
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(release.thenBlock());
              arrive(freedBarrier(rem(sub(count, index(1)), t.stages)));
            }
            scf::YieldOp::create(b, loc, acc);
            return;
          }
          // This step has landed, and every warp is past the products that
          // read the stage refilled next.
          NVVM::CpAsyncWaitGroupOp::create(b, loc, lead - 1);
          if (t.warpgroups)
            fenceAsyncProxy();
          gpu::BarrierOp::create(b, loc);
          Value next = add(step, lead);
          auto more = scf::IfOp::create(
              b, loc, cmp(arith::CmpIPredicate::slt, next, index(steps)));
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(more.thenBlock());
            copyStep(rem(next, t.stages), next);
          }
          NVVM::CpAsyncCommitGroupOp::create(b, loc);

          Value stage = rem(step, t.stages);
          if (t.warpgroups)
            warpgroupStep(stage, acc);
          else
            warpStep(stage, acc);
          scf::YieldOp::create(b, loc, acc);
        });
    if (t.warpgroups)
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
    if (t.persistent) {
      // The tile's last step is done too: its stage goes back to the
      // producer, which may be loading the next tile's steps already.
      onFirstThread(rem(tid, 128), [&] {
        arrive(freedBarrier(rem(add(first, steps - 1), t.stages)));
      });
    }

    // The result, two values at a time, inside the matrix: the sums, or the
    // epilogue's values.
    Value out = p.epilogue ? operands.back() : p.c;
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t half = 0; half < 2; ++half) {
          Value row = rowOf(mt, half), column = columnOf(nt);
          auto store = scf::IfOp::create(b, loc, inside(row, column));
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(store.thenBlock());
          int64_t at = (mt * nTiles + nt) * 4 + half * 2;
          SmallVector<Value> sums = {loop.getResult(at),
                                     loop.getResult(at + 1)};
          Value pair =
              p.epilogue
                  ? evaluateEpilogue(b, loc, p, operands, sums, row, column)
                  : vector::FromElementsOp::create(b, loc, pairType, sums);
          vector::StoreOp::create(b, loc, pair, out, ValueRange{row, column});
        }
  });
}

/// The CUDA runtime's function (lib/Runtime/CUDA) that gives the device's
/// multiprocessor count, asked once a process.
constexpr StringLiteral kMultiprocessorsFunction = "tfmCudaMultiprocessors";

/// The device's multiprocessor count as an index, asked of the runtime
/// once at the start of the function around `user` (and declared in its
/// module the first time). At the start, because gpu-async-region makes
/// the host wait for the stream before any call it finds among the
/// launches.
Value askMultiprocessors(Operation *user) {
  auto function = user->getParentOfType<func::FuncOp>();
  Block &entry = function.getBody().front();
  for (auto call : entry.getOps<func::CallOp>())
    if (call.getCallee() == kMultiprocessorsFunction)
      for (Operation *castOp : call.getResult(0).getUsers())
        if (auto cast = dyn_cast<arith::IndexCastUIOp>(castOp))
          return cast;
  auto module = function->getParentOfType<ModuleOp>();
  auto declaration =
      module.lookupSymbol<func::FuncOp>(kMultiprocessorsFunction);
  if (!declaration) {
    OpBuilder atStart = OpBuilder::atBlockBegin(module.getBody());
    declaration = func::FuncOp::create(
        atStart, module.getLoc(), kMultiprocessorsFunction,
        atStart.getFunctionType({}, {atStart.getI32Type()}));
    declaration.setPrivate();
  }
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = function.getLoc();
  Value count = func::CallOp::create(b, loc, declaration).getResult(0);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), count);
}

/// The projection's fill, contraction and epilogue -> the kernel's
/// gpu.launch, where the epilogue was (else the contraction). With no rows
/// its grid is empty, which the runtime skips (mgpuLaunchKernel): no host
/// branch around it, which would make gpu-async-region wait for the stream
/// before and after it.
void launchKernel(IRRewriter &rewriter, Projection p, const Tiling &t,
                  int64_t fewRows) {
  Location loc = p.contraction.getLoc();
  rewriter.setInsertionPoint(p.epilogue ? p.epilogue.getOperation()
                                        : p.contraction.getOperation());
  Value rows = memref::DimOp::create(rewriter, loc, p.a, 0);
  Type element = cast<MemRefType>(p.b.getType()).getElementType();
  // The epilogue's operands as [M, N], C's sums aside.
  SmallVector<Value> operands;
  if (p.epilogue) {
    Value sums = p.view ? p.view.getResult() : p.c;
    for (Value operand : p.epilogue->getOperands())
      operands.push_back(
          operand == sums ? Value()
          : p.view        ? memref::CollapseShapeOp::create(
                         rewriter, loc, operand,
                         p.view.getReassociationIndices())
                         .getResult()
                          : operand);
  }
  auto constant = [&](int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  int64_t columnCount = cast<MemRefType>(p.c.getType()).getDimSize(1);
  Value columns = constant(columnCount);
  Value one = constant(1), zero = constant(0);
  // 1 to fewRows rows go to the few-rows kernel, more to the tiles: each
  // kernel's grid is empty when the rows are the other's (no host branch),
  // and a kernel the static row count rules out is not built.
  int64_t staticRows = cast<MemRefType>(p.a.getType()).getDimSize(0);
  bool dynamicRows = ShapedType::isDynamic(staticRows);
  if (dynamicRows || staticRows > fewRows) {
    // One block per tile, in a one-dimensional grid (the kernel orders the
    // tiles); the stages in dynamic shared memory.
    Value blocks = arith::MulIOp::create(
        rewriter, loc,
        arith::CeilDivUIOp::create(rewriter, loc, columns,
                                   constant(t.blockColumns)),
        arith::CeilDivUIOp::create(rewriter, loc, rows,
                                   constant(t.blockRows)));
    if (t.persistent) {
      Value multiprocessors = t.multiprocessors
                                  ? constant(t.multiprocessors)
                                  : askMultiprocessors(p.contraction);
      blocks = arith::MinUIOp::create(
          rewriter, loc, blocks,
          rewriter.createOrFold<arith::MulIOp>(
              loc, multiprocessors, constant(t.blocksPerMultiprocessor())));
    }
    if (dynamicRows && fewRows > 0)
      blocks = arith::SelectOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ugt,
                                rows, constant(fewRows)),
          blocks, zero);
    Value aMap, bMap;
    if (t.tma) {
      aMap = createTensorMap(rewriter, loc, p.a, {t.blockRows, t.step});
      bMap = createTensorMap(rewriter, loc, p.b, {t.blockColumns, t.step});
    }
    OpBuilder::InsertionGuard guard(rewriter);
    gpu::LaunchOp launch;
    Value shared;
    std::tie(launch, shared) = createSharedMemoryLaunch(
        rewriter, loc, {blocks, one, one}, t.threads(), t.sharedBytes());
    auto tiles = [&](int64_t rows, int64_t offset) {
      return sharedView(rewriter, loc, shared, {t.stages, rows, t.step},
                        element, offset);
    };
    Value as = tiles(t.blockRows, 0);
    Value bs = tiles(t.blockColumns, t.stages * t.blockRows * t.step * 2);
    Value barriers;
    if (t.tma)
      barriers = sharedView(rewriter, loc, shared, {t.barriers()},
                            rewriter.getI64Type(), t.stages * t.stageBytes());
    MatmulKernelBuilder(rewriter, loc, p, t)
        .build(launch, as, bs, operands, barriers, aMap, bMap);
  }
  if (fewRows > 0 && (dynamicRows || staticRows <= fewRows)) {
    // Rows in [1, fewRows]: rows - 1 < fewRows, unsigned.
    Value blocks = constant(staticRows == 0 ? 0 : fewRowsBlocks(columnCount));
    if (dynamicRows)
      blocks = arith::SelectOp::create(
          rewriter, loc,
          arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::ult,
              arith::SubIOp::create(rewriter, loc, rows, one),
              constant(fewRows)),
          blocks, zero);
    buildFewRowsKernel(rewriter, loc, p, fewRows, blocks, operands);
  }
  if (p.epilogue)
    rewriter.eraseOp(p.epilogue);
  if (p.view)
    rewriter.eraseOp(p.view);
  rewriter.eraseOp(p.contraction);
  if (p.fill)
    rewriter.eraseOp(p.fill);
  // C's buffer, when the epilogue took its only reader, is never used.
  auto alloc = p.c.getDefiningOp<memref::AllocOp>();
  if (alloc && llvm::all_of(alloc->getUsers(), [](Operation *user) {
        return isa<memref::DeallocOp>(user);
      })) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      rewriter.eraseOp(user);
    rewriter.eraseOp(alloc);
  }
}

struct TfmGPUTensorCoreMatmulPass
    : tfm::impl::TfmGPUTensorCoreMatmulPassBase<TfmGPUTensorCoreMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<Tiling> chosen;
    bool warpgroups = warpgroupMma;
    if (tma && !warpgroups) {
      getOperation().emitError(
          "tfm-gpu-tensor-core-matmul: tma needs warpgroup-mma");
      return signalPassFailure();
    }
    if (warpSpecialized && !tma) {
      getOperation().emitError(
          "tfm-gpu-tensor-core-matmul: warp-specialized needs tma");
      return signalPassFailure();
    }
    if (multiprocessors < 0) {
      getOperation().emitError("tfm-gpu-tensor-core-matmul: multiprocessors "
                               "must not be negative, not ")
          << int64_t(multiprocessors);
      return signalPassFailure();
    }
    if (multiprocessors > 0 && !persistent) {
      getOperation().emitError(
          "tfm-gpu-tensor-core-matmul: multiprocessors sizes persistent "
          "grids: it needs persistent");
      return signalPassFailure();
    }
    if (persistent && !warpSpecialized) {
      getOperation().emitError(
          "tfm-gpu-tensor-core-matmul: persistent needs warp-specialized");
      return signalPassFailure();
    }
    if (!tile.empty()) {
      if (tile.size() != 6) {
        getOperation().emitError(
            "tfm-gpu-tensor-core-matmul: tile takes 6 numbers (block rows, "
            "block columns, step, stages, warp rows, warp columns), not ")
            << tile.size();
        return signalPassFailure();
      }
      chosen = Tiling{tile[0], tile[1],    tile[2], tile[3],        tile[4],
                      tile[5], warpgroups, tma,     warpSpecialized};
      if (std::string why = checkTiling(*chosen); !why.empty()) {
        getOperation().emitError("tfm-gpu-tensor-core-matmul: tile ")
            << llvm::join(llvm::map_range(
                              tile, [](int64_t v) { return std::to_string(v); }),
                          ",")
            << " cannot tile a kernel: " << why;
        return signalPassFailure();
      }
    }
    if (fewRows < 0 || fewRows > kMaxFewRows) {
      getOperation().emitError("tfm-gpu-tensor-core-matmul: few-rows must be "
                               "in [0, ")
          << kMaxFewRows << "], not " << int64_t(fewRows);
      return signalPassFailure();
    }
    SmallVector<Projection> projections;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Projection> p = matchProjection(op))
        projections.push_back(*p);
    });
    IRRewriter rewriter(&getContext());
    for (Projection &p : projections) {
      int64_t columns = cast<MemRefType>(p.c.getType()).getDimSize(1);
      Tiling t = chosen ? *chosen : defaultTiling(columns, warpgroups);
      t.tma = tma;
      t.specialized = warpSpecialized;
      t.persistent = persistent;
      t.multiprocessors = multiprocessors;
      launchKernel(rewriter, p, t, fewRows);
    }
  }
};

} // namespace

Value mlir::tfm::evaluateEpilogue(OpBuilder &b, Location loc,
                                  const Projection &p,
                                  ArrayRef<Value> operands,
                                  ArrayRef<Value> sums, Value row,
                                  Value column) {
  linalg::GenericOp epilogue = p.epilogue;
  Block &body = epilogue.getRegion().front();
  SmallVector<Value> pairs;
  for (auto [input, operand] : llvm::zip(epilogue.getDpsInputs(), operands)) {
    Type type = cast<MemRefType>(input.getType()).getElementType();
    pairs.push_back(operand ? vector::LoadOp::create(
                                  b, loc, VectorType::get({2}, type), operand,
                                  ValueRange{row, column})
                            : Value());
  }
  SmallVector<Value> values;
  for (int64_t e = 0; e < 2; ++e) {
    IRMapping map;
    for (auto [i, pair] : llvm::enumerate(pairs))
      map.map(body.getArgument(i),
              pair ? vector::ExtractOp::create(b, loc, pair, e).getResult()
                   : sums[e]);
    for (Operation &op : body.without_terminator())
      b.clone(op, map);
    values.push_back(map.lookupOrDefault(body.getTerminator()->getOperand(0)));
  }
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, values[0].getType()), values);
}
