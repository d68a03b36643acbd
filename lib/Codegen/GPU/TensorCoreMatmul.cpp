//===- TensorCoreMatmul.cpp - projections on tensor cores -----------------===//
//
// Replaces a bufferized bf16/f16 projection, the contraction
// C[m, n] += A[m, k] · B[n, k] (nn.Linear's weight layout) into an f32 C,
// by one tensor-core kernel: blocks
// of 8 warps compute 128x128 tiles of C (a warp 64x32), walking K in steps
// of 32 through a 3-stage cp.async pipeline in shared memory; products are
// mma.sync m16n8k16 fed by ldmatrix, accumulated in f32 registers, and C is
// written once.
//
// Shared rows are 32 elements (4 chunks of 16 bytes); chunk c of row r is
// stored at c ^ ((r / 2) mod 4), so that the 8 rows an ldmatrix matrix
// reads fall into 8 different bank groups.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "TensorCoreBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUTENSORCOREMATMULPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

// Three stages of [128, 32] A and B tiles: 48 KiB, all the static shared
// memory a block may have. (Dynamic shared memory would allow more, but
// LLVM's NVPTX back end demotes MLIR's extern shared array to a one-byte
// variable after internalization: issue 16's notes.)
constexpr int64_t kBlockRows = 128, kBlockColumns = 128, kStep = 32;
constexpr int64_t kStages = 3;
constexpr int64_t kWarpRows = 64, kWarpColumns = 32; // 2 x 4 warps
constexpr int64_t kThreads = 256;

/// A projection the kernel computes.
struct Projection {
  linalg::GenericOp contraction;
  /// The zero fill of C right before, if any: then the accumulators start
  /// at zero and the fill goes; else they start from C's values.
  linalg::FillOp fill;
  Value a, b, c;
  int64_t k;
  /// A is f32 (a gated FFN's hidden rows, which the CPU keeps in f32): the
  /// kernel reads a copy rounded to B's type, as GPU frameworks do.
  bool narrowA;
  /// The elementwise op that alone reads C (directly or through the
  /// expand_shape `view`) and writes it rounded to bf16/f16 into `rounded`
  /// (the projection's result, as the lowering leaves it), if any: the
  /// kernel writes `rounded` itself, and C's f32 values are never stored.
  linalg::GenericOp rounding;
  memref::ExpandShapeOp view;
};

/// The op that rounds projection `p`'s f32 result into another buffer, and
/// that result's view, when nothing else reads the result.
void matchRounding(Projection &p) {
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
  auto rounding = dyn_cast_or_null<linalg::GenericOp>(reader);
  if (!rounding || rounding.getNumDpsInputs() != 1 ||
      rounding.getNumDpsInits() != 1 ||
      rounding.getNumParallelLoops() != rounding.getNumLoops() ||
      !llvm::all_of(rounding.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return;
  Block &body = rounding.getRegion().front();
  auto truncate =
      body.getTerminator()->getOperand(0).getDefiningOp<arith::TruncFOp>();
  Type element = cast<MemRefType>(p.b.getType()).getElementType();
  auto output = cast<MemRefType>(rounding.getDpsInits()[0].getType());
  if (!truncate || truncate.getIn() != body.getArgument(0) ||
      truncate.getType() != element || !output.getLayout().isIdentity() ||
      rounding->getBlock() != p.contraction->getBlock() ||
      !p.contraction->isBeforeInBlock(rounding))
    return;
  // Nothing between the projection and the rounding touches memory, and
  // the rounded result's buffer exists before the projection.
  for (Operation *between = p.contraction->getNextNode(); between != rounding;
       between = between->getNextNode())
    if (!isMemoryEffectFree(between))
      return;
  Operation *definition = rounding.getDpsInits()[0].getDefiningOp();
  if (definition && (definition->getBlock() != p.contraction->getBlock() ||
                     !definition->isBeforeInBlock(p.contraction)))
    return;
  p.rounding = rounding;
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

/// Whether the innermost stride of `type` is 1.
bool isRowContiguous(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !strides.empty() && strides.back() == 1;
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
  bool narrowA = aType.getElementType().isF32();
  if ((!element.isBF16() && !element.isF16()) ||
      (aType.getElementType() != element && !narrowA) ||
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
  Projection p{op, fill, a, b, c, depth, narrowA, nullptr, nullptr};
  matchRounding(p);
  return p;
}

class MatmulKernelBuilder : TensorCoreBuilder {
public:
  MatmulKernelBuilder(OpBuilder &b, Location loc, const Projection &p)
      : TensorCoreBuilder(
            b, loc, cast<MemRefType>(p.b.getType()).getElementType()),
        p(p) {}

  /// The kernel body; `as` and `bs` are the [stages, 128, 32] shared tiles;
  /// the result goes to `out`: C, or the [M, N] buffer C is rounded into.
  void build(gpu::LaunchOp launch, Value as, Value bs, Value out);

private:
  /// Copies step `step` (K columns [32 step, 32 step + 32)) of the block's
  /// rows of A and B into stage `stage`; rows past the end read the last
  /// row (their results are never stored), columns past K are zeros.
  void copyStep(Value stage, Value step);

  const Projection &p;
  Value tid, firstRow, firstColumn, rows, columns, lastRow, lastColumn, as,
      bs;
};

void MatmulKernelBuilder::copyStep(Value stage, Value step) {
  Value k0 = mul(step, kStep);
  constexpr int64_t chunks = kStep / 8;
  for (int64_t i = 0; i < kBlockRows * chunks / kThreads; ++i) {
    Value id = add(tid, i * kThreads);
    Value row = div(id, chunks), chunk = rem(id, chunks);
    Value column = mul(xorIndex(chunk, rem(div(row, 2), 4)), 8);
    Value sourceColumn = add(k0, mul(chunk, 8));
    Value sourceElements;
    if (p.k % kStep != 0) {
      // The last step reads zeros past K (from column 0, which exists).
      Value inside = cmp(arith::CmpIPredicate::slt, sourceColumn, index(p.k));
      sourceElements =
          arith::SelectOp::create(b, loc, inside, index(8), index(0));
      sourceColumn =
          arith::SelectOp::create(b, loc, inside, sourceColumn, index(0));
    }
    copy16Bytes(as, {stage, row, column}, p.a,
                {min(add(firstRow, row), lastRow), sourceColumn},
                sourceElements);
    copy16Bytes(bs, {stage, row, column}, p.b,
                {min(add(firstColumn, row), lastColumn), sourceColumn},
                sourceElements);
  }
}

void MatmulKernelBuilder::build(gpu::LaunchOp launch, Value aTiles,
                                Value bTiles, Value out) {
  as = aTiles;
  bs = bTiles;
  tid = launch.getThreadIds().x;
  Value warp = div(tid, 32), lane = rem(tid, 32);
  Value warpRow = mul(div(warp, kBlockColumns / kWarpColumns), kWarpRows);
  Value warpColumn =
      mul(rem(warp, kBlockColumns / kWarpColumns), kWarpColumns);
  firstColumn = mul(launch.getBlockIds().x, kBlockColumns);
  firstRow = mul(launch.getBlockIds().y, kBlockRows);
  rows = memref::DimOp::create(b, loc, p.a, 0);
  columns = memref::DimOp::create(b, loc, p.c, 1);
  lastRow = sub(rows, index(1));
  lastColumn = sub(columns, index(1));
  int64_t steps = llvm::divideCeil(p.k, kStep);

  // Stages 0 .. kStages - 2 in flight; one commit group per stage, empty
  // past the last step, so that waits count uniformly.
  for (int64_t s = 0; s < kStages - 1; ++s) {
    if (s < steps)
      copyStep(index(s), index(s));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }

  // Lane addresses of the ldmatrix matrices: A tiles are rows +0/+8 then
  // chunks +0/+1, B tiles chunks +0/+1 then rows +0/+8; a row's swizzle
  // (row / 2) mod 4 depends on the lane only.
  Value low3 = rem(lane, 8), matrix = div(lane, 8);
  Value laneSwizzle = div(low3, 2);
  Value aRow = add(warpRow, add(low3, mul(rem(matrix, 2), 8)));
  Value aXor = xorIndex(div(matrix, 2), laneSwizzle);
  Value bRow = add(warpColumn, add(low3, mul(div(matrix, 2), 8)));
  Value bXor = xorIndex(rem(matrix, 2), laneSwizzle);

  constexpr int64_t mTiles = kWarpRows / 16, nTiles = kWarpColumns / 8;
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
        // This step has landed, and every warp is past the last step: its
        // stage may be refilled.
        NVVM::CpAsyncWaitGroupOp::create(b, loc, kStages - 2);
        gpu::BarrierOp::create(b, loc);
        Value next = add(step, kStages - 1);
        auto more = scf::IfOp::create(
            b, loc, cmp(arith::CmpIPredicate::slt, next, index(steps)));
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(more.thenBlock());
          copyStep(rem(next, kStages), next);
        }
        NVVM::CpAsyncCommitGroupOp::create(b, loc);

        Value stage = rem(step, kStages);
        SmallVector<Value> acc(state.begin(), state.end());
        for (int64_t kk = 0; kk < kStep / 16; ++kk) {
          SmallVector<SmallVector<Value>> aRegs, bRegs;
          for (int64_t mt = 0; mt < mTiles; ++mt)
            aRegs.push_back(loadMatrices(
                as,
                {stage, add(aRow, mt * 16), mul(xorIndex(aXor, 2 * kk), 8)},
                /*transpose=*/false));
          for (int64_t pair = 0; pair < nTiles / 2; ++pair) {
            SmallVector<Value> regs = loadMatrices(
                bs,
                {stage, add(bRow, pair * 16), mul(xorIndex(bXor, 2 * kk), 8)},
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
        scf::YieldOp::create(b, loc, acc);
      });

  // The result, two values at a time, inside the matrix.
  auto outType = cast<MemRefType>(out.getType());
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t half = 0; half < 2; ++half) {
        Value row = rowOf(mt, half), column = columnOf(nt);
        auto store = scf::IfOp::create(b, loc, inside(row, column));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(store.thenBlock());
        int64_t at = (mt * nTiles + nt) * 4 + half * 2;
        Value pair = vector::FromElementsOp::create(
            b, loc, pairType,
            ValueRange{loop.getResult(at), loop.getResult(at + 1)});
        if (!outType.getElementType().isF32())
          pair = arith::TruncFOp::create(
              b, loc, VectorType::get({2}, outType.getElementType()), pair);
        vector::StoreOp::create(b, loc, pair, out, ValueRange{row, column});
      }
}

/// The projection's fill and contraction -> the kernel's gpu.launch. With
/// no rows its grid is empty, which the runtime skips (mgpuLaunchKernel):
/// no host branch around it, which would make gpu-async-region wait for
/// the stream before and after it.
void launchKernel(IRRewriter &rewriter, Projection p) {
  Location loc = p.contraction.getLoc();
  rewriter.setInsertionPoint(p.contraction);
  Value rows = memref::DimOp::create(rewriter, loc, p.a, 0);
  Type element = cast<MemRefType>(p.b.getType()).getElementType();
  Value narrowed;
  if (p.narrowA) {
    // A rounded to B's type, by an elementwise op the generic mapping runs.
    auto aType = cast<MemRefType>(p.a.getType());
    auto type = MemRefType::get(aType.getShape(), element);
    SmallVector<Value> sizes;
    if (aType.isDynamicDim(0))
      sizes.push_back(rows);
    narrowed = memref::AllocOp::create(rewriter, loc, type, sizes);
    AffineMap identity = rewriter.getMultiDimIdentityMap(2);
    linalg::GenericOp::create(
        rewriter, loc, ValueRange{p.a}, ValueRange{narrowed},
        ArrayRef<AffineMap>{identity, identity},
        ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                      utils::IteratorType::parallel},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(
              b, loc, arith::TruncFOp::create(b, loc, element, args[0])
                          .getResult());
        });
    p.a = narrowed;
  }
  // Where the result goes: C, or the [M, N] view of the buffer it is
  // rounded into.
  Value out = p.c;
  if (p.rounding) {
    out = p.rounding.getDpsInits()[0];
    if (p.view)
      out = memref::CollapseShapeOp::create(
          rewriter, loc, out, p.view.getReassociationIndices());
  }
  auto constant = [&](int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  Value columns = memref::DimOp::create(rewriter, loc, p.c, 1);
  Value one = constant(1);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc,
      arith::CeilDivUIOp::create(rewriter, loc, columns,
                                 constant(kBlockColumns)),
      arith::CeilDivUIOp::create(rewriter, loc, rows, constant(kBlockRows)),
      one, constant(kThreads), one, one);
  auto workgroup = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                              gpu::AddressSpace::Workgroup);
  auto tileType = MemRefType::get({kStages, kBlockRows, kStep}, element,
                                  MemRefLayoutAttrInterface(), workgroup);
  Value as = launch.addWorkgroupAttribution(tileType, loc);
  Value bs = launch.addWorkgroupAttribution(tileType, loc);
  rewriter.setInsertionPointToStart(&launch.getBody().front());
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPoint(terminator);
  MatmulKernelBuilder(rewriter, loc, p).build(launch, as, bs, out);
  if (narrowed) {
    rewriter.setInsertionPointAfter(p.contraction);
    memref::DeallocOp::create(rewriter, loc, narrowed);
  }
  rewriter.eraseOp(p.contraction);
  if (p.fill)
    rewriter.eraseOp(p.fill);
  if (p.rounding)
    rewriter.eraseOp(p.rounding);
  if (p.view)
    rewriter.eraseOp(p.view);
}

struct TfmGPUTensorCoreMatmulPass
    : tfm::impl::TfmGPUTensorCoreMatmulPassBase<TfmGPUTensorCoreMatmulPass> {
  void runOnOperation() override {
    SmallVector<Projection> projections;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Projection> p = matchProjection(op))
        projections.push_back(*p);
    });
    IRRewriter rewriter(&getContext());
    for (Projection &p : projections)
      launchKernel(rewriter, p);
  }
};

} // namespace
