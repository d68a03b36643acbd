//===- TensorCoreMatmul.cpp - projections on tensor cores -----------------===//
//
// Replaces a bufferized bf16/f16 projection, the contraction
// C[m, n] += A[m, k] · B[n, k] (nn.Linear's weight layout) into an f32 C,
// by one tensor-core kernel (MatmulKernel.h): blocks of warps compute
// tiles of C, by default 128x256 (a warp 64x64, or a warpgroup 64x256 on
// sm_90a), accumulated in f32 registers; C is written once, or not at all
// when the kernel computes the elementwise op that alone reads it (its
// epilogue: rounding, residual, act(gate) · up) as it stores. Projections
// of at most `few-rows` rows run on the few-rows kernel (FewRowsMatmul.cpp)
// instead. Here: what a projection is, the tiling chosen for it, and the
// launch the host code makes.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "KernelLaunch.h"
#include "MatmulKernel.h"
#include "Projection.h"
#include "RowPrologue.h"
#include "ViewedBuffer.h"

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
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUTENSORCOREMATMULPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::matmul;

namespace {

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

/// Whether `p` of at most `fewRows` rows can run on the few-rows kernel:
/// its row count is dynamic or that few.
bool mayHaveFewRows(const Projection &p, int64_t fewRows) {
  int64_t rows = cast<MemRefType>(p.a.getType()).getDimSize(0);
  return fewRows > 0 && (ShapedType::isDynamic(rows) || rows <= fewRows);
}

/// The norms that `projections`' few-rows kernels compute (RowPrologue.h),
/// where all that reads a norm's output can; each projection of one points
/// to it.
SmallVector<std::unique_ptr<RowPrologue>>
matchPrologues(MutableArrayRef<Projection> projections, int64_t fewRows) {
  SmallVector<std::unique_ptr<RowPrologue>> prologues;
  DenseMap<Operation *, RowPrologue *> byNorm;
  for (Projection &p : projections) {
    if (!mayHaveFewRows(p, fewRows))
      continue;
    Operation *launchPoint =
        p.epilogue ? p.epilogue.getOperation() : p.contraction;
    std::optional<RowPrologue> prologue =
        matchRowPrologue(p.a, p.contraction, launchPoint);
    if (!prologue)
      continue;
    RowPrologue *&shared = byNorm[prologue->norm];
    if (!shared) {
      prologues.push_back(std::make_unique<RowPrologue>(std::move(*prologue)));
      shared = prologues.back().get();
    } else {
      shared->projections.push_back(p.contraction);
    }
    p.prologue = shared;
  }
  // A projection's epilogue becomes its kernel: it is not there to be
  // another's prologue.
  DenseSet<Operation *> epilogues;
  for (Projection &p : projections)
    if (p.epilogue)
      epilogues.insert(p.epilogue);
  DenseSet<const RowPrologue *> rejected;
  for (std::unique_ptr<RowPrologue> &prologue : prologues)
    if (epilogues.contains(prologue->norm) || !isReadOnlyByPrologue(*prologue))
      rejected.insert(prologue.get());
  for (Projection &p : projections)
    if (rejected.contains(p.prologue))
      p.prologue = nullptr;
  llvm::erase_if(prologues, [&](const std::unique_ptr<RowPrologue> &prologue) {
    return rejected.contains(prologue.get());
  });
  return prologues;
}

/// Whether every use of `buffer`, through views, is `reader`, `p`'s fill or
/// contraction, or a free.
bool onlyReadBy(Value buffer, Operation *reader, const Projection &p) {
  for (Operation *user : buffer.getUsers()) {
    if (user == reader || user == p.contraction || user == p.fill ||
        isa<memref::DeallocOp>(user))
      continue;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (!view || view.getViewSource() != buffer ||
        !llvm::all_of(user->getResults(), [&](Value result) {
          return onlyReadBy(result, reader, p);
        }))
      return false;
  }
  return true;
}

/// The projection whose f32 sums only `p`'s epilogue reads (gate, for up's
/// act(gate) · up), when p's few-rows kernel can compute them too: the
/// same rows (or norm), K, N and element type, zero-filled, with no
/// epilogue of its own, and nothing between it and p's kernel but p's
/// fill and contraction and ops that touch no memory.
Projection *matchSibling(const Projection &p,
                         MutableArrayRef<Projection> projections) {
  linalg::GenericOp epilogue = p.epilogue;
  if (!epilogue)
    return nullptr;
  for (Projection &other : projections) {
    if (&other == &p || other.epilogue || !other.fill || other.a != p.a ||
        other.prologue != p.prologue || other.b.getType() != p.b.getType() ||
        other.c.getType() != p.c.getType() ||
        !other.c.getDefiningOp<memref::AllocOp>() ||
        other.contraction->getBlock() != p.contraction->getBlock() ||
        !other.contraction->isBeforeInBlock(p.contraction) ||
        !llvm::any_of(
            epilogue.getDpsInputs(),
            [&](Value input) { return viewedBuffer(input) == other.c; }) ||
        !onlyReadBy(other.c, epilogue, other))
      continue;
    bool quiet = true;
    for (Operation *op = other.contraction->getNextNode();
         op != epilogue.getOperation() && quiet; op = op->getNextNode())
      quiet = op == p.fill || op == p.contraction || isa<memref::AllocOp>(op) ||
              isMemoryEffectFree(op);
    if (quiet)
      return &other;
  }
  return nullptr;
}

/// The CUDA runtime's function (lib/Runtime/CUDA) that gives the device's
/// multiprocessor count, asked once a process.
constexpr StringLiteral kMultiprocessorsFunction = "tfmCudaMultiprocessors";

/// The device's multiprocessor count as an index, asked of the runtime
/// once at the start of `function` (and declared in its module the first
/// time). At the start, because gpu-async-region makes the host wait for
/// the stream before any call it finds among the launches.
Value askMultiprocessors(func::FuncOp function) {
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
      Value multiprocessors =
          t.multiprocessors
              ? constant(t.multiprocessors)
              : askMultiprocessors(
                    p.contraction->getParentOfType<func::FuncOp>());
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
    // The sums staged for the stores over the stages, once free.
    Value staging;
    if (t.stagesResults(columnCount))
      staging = sharedView(rewriter, loc, shared,
                           {t.blockRows, t.blockColumns + kStagingPad},
                           rewriter.getF32Type(), 0);
    MatmulKernelBuilder(rewriter, loc, p, t)
        .build(launch, as, bs, operands, barriers, aMap, bMap, staging);
  }
  if (mayHaveFewRows(p, fewRows) && !p.computedBySibling) {
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
    // The host functions' projections (the module's func.func ops).
    for (auto function : getOperation().getOps<func::FuncOp>())
      function.walk([&](linalg::GenericOp op) {
        if (std::optional<Projection> p = matchProjection(op))
          projections.push_back(*p);
      });
    SmallVector<std::unique_ptr<RowPrologue>> prologues;
    if (normPrologues)
      prologues = matchPrologues(projections, fewRows);
    // Gate's sums computed by up's few-rows kernel.
    for (Projection &p : projections) {
      if (!mayHaveFewRows(p, fewRows))
        continue;
      if (Projection *sibling = matchSibling(p, projections);
          sibling && !sibling->computedBySibling && !sibling->sibling) {
        p.sibling = sibling;
        sibling->computedBySibling = true;
      }
    }
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
    for (std::unique_ptr<RowPrologue> &prologue : prologues)
      skipForFewRows(rewriter, *prologue, fewRows);
  }
};

} // namespace

Value mlir::tfm::evaluateEpilogue(OpBuilder &b, Location loc,
                                  const Projection &p, ArrayRef<Value> operands,
                                  ArrayRef<Value> sums, Value row, Value column,
                                  ArrayRef<Value> siblingSums,
                                  llvm::MaybeAlign alignment) {
  linalg::GenericOp epilogue = p.epilogue;
  Block &body = epilogue.getRegion().front();
  int64_t width = sums.size();
  // Per input: the vector loaded, or the sums it stands for.
  SmallVector<Value> loaded;
  SmallVector<ArrayRef<Value>> given;
  for (auto [input, operand] : llvm::zip(epilogue.getDpsInputs(), operands)) {
    Type type = cast<MemRefType>(input.getType()).getElementType();
    bool sibling = !siblingSums.empty() && viewedBuffer(input) == p.sibling->c;
    given.push_back(!operand  ? sums
                    : sibling ? siblingSums
                              : ArrayRef<Value>());
    loaded.push_back(
        operand && !sibling
            ? vector::LoadOp::create(b, loc, VectorType::get({width}, type),
                                     operand, ValueRange{row, column},
                                     /*nontemporal=*/false, alignment)
                  .getResult()
            : Value());
  }
  SmallVector<Value> values;
  for (int64_t e = 0; e < width; ++e) {
    IRMapping map;
    for (auto [i, vector] : llvm::enumerate(loaded))
      map.map(body.getArgument(i),
              vector ? vector::ExtractOp::create(b, loc, vector, e).getResult()
                     : given[i][e]);
    for (Operation &op : body.without_terminator())
      b.clone(op, map);
    values.push_back(map.lookupOrDefault(body.getTerminator()->getOperand(0)));
  }
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({width}, values[0].getType()), values);
}
