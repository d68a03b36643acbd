//===- MapToKernels.cpp - host loops to GPU kernels -----------------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUMAPTOKERNELSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// `memref.copy %from, %to` as a parallel loop of loads and stores, which
/// is then mapped like any other loop (the views may be strided).
void copyAsLoop(RewriterBase &rewriter, memref::CopyOp copy) {
  rewriter.setInsertionPoint(copy);
  Location loc = copy.getLoc();
  Value target = copy.getTarget();
  auto type = cast<MemRefType>(target.getType());
  if (type.getRank() == 0) {
    Value value = memref::LoadOp::create(rewriter, loc, copy.getSource());
    memref::StoreOp::create(rewriter, loc, value, target);
    rewriter.eraseOp(copy);
    return;
  }
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> lower(type.getRank(), zero), step(type.getRank(), one);
  SmallVector<Value> upper;
  for (int64_t d = 0; d < type.getRank(); ++d)
    upper.push_back(memref::DimOp::create(rewriter, loc, target, d));
  scf::ParallelOp::create(
      rewriter, loc, lower, upper, step,
      [&](OpBuilder &b, Location loc, ValueRange ivs) {
        Value value = memref::LoadOp::create(b, loc, copy.getSource(), ivs);
        memref::StoreOp::create(b, loc, value, target, ivs);
      });
  rewriter.eraseOp(copy);
}

/// Replaces `loop` by nested scf.for loops over its dims (inside a kernel,
/// where one thread runs it).
LogicalResult sequentialize(RewriterBase &rewriter, scf::ParallelOp loop) {
  if (loop.getNumReductions() != 0)
    return loop.emitOpError("with reductions cannot run inside a GPU thread");
  rewriter.setInsertionPoint(loop);
  IRMapping mapping;
  Location loc = loop.getLoc();
  for (auto [lb, ub, step, iv] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
                 loop.getInductionVars())) {
    auto inner = scf::ForOp::create(rewriter, loc, lb, ub, step);
    mapping.map(iv, inner.getInductionVar());
    rewriter.setInsertionPoint(inner.getBody()->getTerminator());
  }
  for (Operation &op : loop.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  rewriter.eraseOp(loop);
  return success();
}

/// Constants and reads of host globals (constant tables) used inside
/// `launch` are cloned into it. A constant stays a constant in the kernel
/// (an index divided by 32 is a shift, not a division by a kernel
/// argument), and outlining takes a global into the kernel module (device
/// memory) instead of passing a host address.
void sinkIntoLaunch(RewriterBase &rewriter, gpu::LaunchOp launch) {
  Block &body = launch.getBody().front();
  DenseMap<Value, Value> copies;
  launch.getBody().walk([&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      Operation *global = operand.get().getDefiningOp();
      if (!global || launch->isAncestor(global) ||
          !(isa<memref::GetGlobalOp>(global) ||
            global->hasTrait<OpTrait::ConstantLike>()))
        continue;
      Value &copy = copies[operand.get()];
      if (!copy) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(&body);
        copy = rewriter.clone(*global)->getResult(0);
      }
      rewriter.modifyOpInPlace(op, [&] { operand.set(copy); });
    }
  });
}

/// Prepares `root` to run inside one GPU thread: nested parallel loops run
/// sequentially, scratch allocations become thread-local allocas.
LogicalResult prepareKernelBody(RewriterBase &rewriter, Operation *root) {
  SmallVector<scf::ParallelOp> nested;
  SmallVector<memref::AllocOp> allocs;
  SmallVector<memref::DeallocOp> deallocs;
  root->walk([&](Operation *op) {
    if (op == root)
      return;
    if (auto loop = dyn_cast<scf::ParallelOp>(op))
      nested.push_back(loop);
    else if (auto alloc = dyn_cast<memref::AllocOp>(op))
      allocs.push_back(alloc);
    else if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
      deallocs.push_back(dealloc);
  });
  // Innermost first (post-order walk), so each body moves once.
  for (scf::ParallelOp loop : nested)
    if (failed(sequentialize(rewriter, loop)))
      return failure();
  for (memref::AllocOp alloc : allocs) {
    if (!alloc.getType().hasStaticShape())
      return alloc.emitOpError(
          "of a dynamic size inside a GPU kernel is not supported");
    rewriter.setInsertionPoint(alloc);
    rewriter.replaceOpWithNewOp<memref::AllocaOp>(alloc, alloc.getType(),
                                                  alloc.getAlignmentAttr());
  }
  for (memref::DeallocOp dealloc : deallocs)
    rewriter.eraseOp(dealloc);
  return success();
}

/// A launch of `gridSize` x 1 x 1 blocks of `blockSize` threads before
/// `anchor`, with the builder inside its body (before the terminator).
gpu::LaunchOp createLaunch(RewriterBase &rewriter, Location loc,
                           Value gridSize, Value blockSize) {
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto launch = gpu::LaunchOp::create(rewriter, loc, gridSize, one, one,
                                      blockSize, one, one);
  rewriter.setInsertionPointToStart(&launch.getBody().front());
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPoint(terminator);
  return launch;
}

/// A parallel loop whose body ends in a sequential loop that folds values
/// into one element, as linalg reductions lower to loops (a norm's sum of
/// squares): `M[idx] = combine(M[idx], x(k))` for every k, idx fixed.
struct RowReduction {
  scf::ForOp inner;
  memref::LoadOp load;   // M[idx]
  memref::StoreOp store; // M[idx] = combined
  Operation *combine;    // combined = combine(M[idx], partial)
  Value partial;         // x(k)
};

/// The element that `combine` (an associative f32 fold) starts from.
std::optional<double> neutralElement(Operation *combine) {
  if (isa<arith::AddFOp>(combine))
    return 0.0;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    return -INFINITY;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
    return INFINITY;
  return std::nullopt;
}

std::optional<RowReduction> matchRowReduction(scf::ParallelOp loop) {
  Block *body = loop.getBody();
  if (body->getOperations().size() < 2)
    return std::nullopt;
  auto inner = dyn_cast<scf::ForOp>(
      *std::prev(body->without_terminator().end()));
  if (!inner || inner.getNumResults() != 0 ||
      !llvm::all_of(llvm::make_range(body->begin(), inner->getIterator()),
                    [](Operation &op) { return isMemoryEffectFree(&op); }))
    return std::nullopt;
  RowReduction r{inner, nullptr, nullptr, nullptr, nullptr};
  for (Operation &op : inner.getBody()->without_terminator()) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (r.store)
        return std::nullopt;
      r.store = store;
    } else if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op)) {
      return std::nullopt;
    }
  }
  if (!r.store || !r.store.getValueToStore().getType().isF32())
    return std::nullopt;
  // The element is fixed across the sequential loop.
  for (Value index : r.store.getIndices())
    if (inner.getRegion().isAncestor(index.getParentRegion()))
      return std::nullopt;
  r.combine = r.store.getValueToStore().getDefiningOp();
  if (!r.combine || r.combine->getBlock() != inner.getBody() ||
      !neutralElement(r.combine))
    return std::nullopt;
  for (int64_t i = 0; i < 2; ++i) {
    auto load = r.combine->getOperand(i).getDefiningOp<memref::LoadOp>();
    if (load && load.getMemRef() == r.store.getMemRef() &&
        load.getIndices() == r.store.getIndices() && load->hasOneUse()) {
      r.load = load;
      r.partial = r.combine->getOperand(1 - i);
    }
  }
  // Nothing else reads the element while it is being folded.
  if (!r.load || r.partial == r.load.getResult())
    return std::nullopt;
  for (Operation &op : inner.getBody()->without_terminator())
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && load != r.load && load.getMemRef() == r.store.getMemRef())
      return std::nullopt;
  return r;
}

/// `r` for one point, by the 32 lanes of a warp: each folds every 32nd
/// step of the sequential loop from the neutral element, the warp combines
/// the lanes' folds (xor shuffles), and lane 0 folds the result into M.
void foldInWarp(RewriterBase &rewriter, Location loc, RowReduction r,
                Value lane, IRMapping &mapping) {
  scf::ForOp inner = r.inner;
  auto combine = [&](Value accumulated, Value value) {
    IRMapping operands;
    operands.map(r.load.getResult(), accumulated);
    operands.map(r.partial, value);
    return rewriter.clone(*r.combine, operands)->getResult(0);
  };
  Value step = mapping.lookupOrDefault(inner.getStep());
  Value start = arith::AddIOp::create(
      rewriter, loc, mapping.lookupOrDefault(inner.getLowerBound()),
      arith::MulIOp::create(rewriter, loc, lane, step));
  Value stride = arith::MulIOp::create(
      rewriter, loc, step, arith::ConstantIndexOp::create(rewriter, loc, 32));
  Value neutral = arith::ConstantOp::create(
      rewriter, loc, rewriter.getF32FloatAttr(*neutralElement(r.combine)));
  auto lanes = scf::ForOp::create(
      rewriter, loc, start, mapping.lookupOrDefault(inner.getUpperBound()),
      stride, ValueRange{neutral},
      [&](OpBuilder &, Location, Value k, ValueRange state) {
        mapping.map(inner.getInductionVar(), k);
        for (Operation &op : inner.getBody()->without_terminator())
          if (&op != r.load && &op != r.store && &op != r.combine)
            rewriter.clone(op, mapping);
        scf::YieldOp::create(
            rewriter, loc,
            combine(state[0], mapping.lookupOrDefault(r.partial)));
      });
  Value folded = lanes.getResult(0);
  for (int32_t offset = 16; offset >= 1; offset /= 2)
    folded = combine(folded, gpu::ShuffleOp::create(rewriter, loc, folded,
                                                    offset, /*width=*/32,
                                                    gpu::ShuffleMode::XOR)
                                 .getShuffleResult());
  Value first = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::eq, lane,
      arith::ConstantIndexOp::create(rewriter, loc, 0));
  auto write = scf::IfOp::create(rewriter, loc, first);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(write.thenBlock()->getTerminator());
  Value old = rewriter.clone(*r.load, mapping)->getResult(0);
  mapping.map(r.store.getValueToStore(), combine(old, folded));
  rewriter.clone(*r.store, mapping);
}

/// One thread per point of `loop`'s iteration space, the last dim fastest;
/// a point that folds a row (RowReduction) gets a warp.
LogicalResult mapParallelLoop(RewriterBase &rewriter, scf::ParallelOp loop,
                              int64_t blockSize) {
  if (loop.getNumReductions() != 0)
    return loop.emitOpError("with reductions has no GPU mapping yet");
  std::optional<RowReduction> reduction;
  if (blockSize % 32 == 0)
    reduction = matchRowReduction(loop);
  int64_t lanes = reduction ? 32 : 1;
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  // Trip counts, and their product: the number of points.
  SmallVector<Value> counts;
  Value total = arith::ConstantIndexOp::create(rewriter, loc, 1);
  for (auto [lb, ub, step] : llvm::zip(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value extent = rewriter.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value count =
        rewriter.createOrFold<arith::CeilDivSIOp>(loc, extent, step);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    count = rewriter.createOrFold<arith::MaxSIOp>(loc, count, zero);
    counts.push_back(count);
    total = rewriter.createOrFold<arith::MulIOp>(loc, total, count);
  }
  Value threads = rewriter.createOrFold<arith::MulIOp>(
      loc, total, arith::ConstantIndexOp::create(rewriter, loc, lanes));
  Value block = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
  Value grid = rewriter.createOrFold<arith::CeilDivUIOp>(loc, threads, block);
  gpu::LaunchOp launch = createLaunch(rewriter, loc, grid, block);

  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  Value id = rewriter.createOrFold<arith::AddIOp>(
      loc, rewriter.createOrFold<arith::MulIOp>(loc, blockIds.x, block),
      threadIds.x);
  Value point = id, lane;
  if (reduction) {
    Value warp = arith::ConstantIndexOp::create(rewriter, loc, 32);
    point = arith::DivUIOp::create(rewriter, loc, id, warp);
    lane = arith::RemUIOp::create(rewriter, loc, id, warp);
  }
  // A warp's lanes share their point: in range or out of it together.
  Value inRange = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, point, total);
  auto guard = scf::IfOp::create(rewriter, loc, inRange);
  rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
  IRMapping mapping;
  Value rest = point;
  for (int64_t d = counts.size() - 1; d >= 0; --d) {
    Value index =
        d == 0 ? rest
               : rewriter.createOrFold<arith::RemUIOp>(loc, rest, counts[d]);
    if (d > 0)
      rest = rewriter.createOrFold<arith::DivUIOp>(loc, rest, counts[d]);
    Value iv = rewriter.createOrFold<arith::AddIOp>(
        loc, loop.getLowerBound()[d],
        rewriter.createOrFold<arith::MulIOp>(loc, index, loop.getStep()[d]));
    mapping.map(loop.getInductionVars()[d], iv);
  }
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (reduction && &op == reduction->inner.getOperation())
      break;
    rewriter.clone(op, mapping);
  }
  if (reduction)
    foldInWarp(rewriter, loc, *reduction, lane, mapping);
  rewriter.eraseOp(loop);
  return prepareKernelBody(rewriter, launch);
}

/// Runs `op` (a sequential loop or a store) in a kernel of one thread.
LogicalResult runInOneThread(RewriterBase &rewriter, Operation *op) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  gpu::LaunchOp launch = createLaunch(rewriter, loc, one, one);
  if (op->getNumResults() != 0)
    return op->emitOpError("with results cannot be moved into a GPU kernel");
  rewriter.moveOpBefore(op, launch.getBody().front().getTerminator());
  return prepareKernelBody(rewriter, launch);
}

/// A host read of device memory: copied into a host buffer, read once the
/// device has finished.
void readOnHost(RewriterBase &rewriter, memref::LoadOp load) {
  Location loc = load.getLoc();
  rewriter.setInsertionPoint(load);
  size_t rank = load.getIndices().size();
  Value element = load.getMemRef();
  if (rank != 0) {
    SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
    element = memref::SubViewOp::create(rewriter, loc, element,
                                        getAsOpFoldResult(load.getIndices()),
                                        ones, ones);
  }
  auto hostType =
      MemRefType::get(SmallVector<int64_t>(rank, 1), load.getType());
  Value host = memref::AllocaOp::create(rewriter, loc, hostType);
  gpu::MemcpyOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange{},
                        host, element);
  gpu::WaitOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange{});
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  rewriter.replaceOpWithNewOp<memref::LoadOp>(
      load, host, SmallVector<Value>(rank, zero));
}

struct TfmGPUMapToKernelsPass
    : tfm::impl::TfmGPUMapToKernelsPassBase<TfmGPUMapToKernelsPass> {
  using TfmGPUMapToKernelsPassBase::TfmGPUMapToKernelsPassBase;

  /// The host-level ops of `block` and of the scf.if regions in it.
  void collectHostOps(Block &block, SmallVectorImpl<Operation *> &ops) {
    for (Operation &op : block) {
      if (auto branch = dyn_cast<scf::IfOp>(op)) {
        for (Region &region : branch->getRegions())
          if (!region.empty())
            collectHostOps(region.front(), ops);
        continue;
      }
      ops.push_back(&op);
    }
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (blockSize < 1 || blockSize > 1024) {
      func.emitError("block-size must be in [1, 1024]");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies)
      copyAsLoop(rewriter, copy);

    SmallVector<Operation *> hostOps;
    collectHostOps(func.getBody().front(), hostOps);
    for (Operation *op : hostOps) {
      LogicalResult result = success();
      if (isa<gpu::LaunchOp>(op)) {
        continue; // a dedicated kernel (tfm-gpu-lower-buffer-attention, tfm-gpu-tensor-core-matmul)
      } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        result = mapParallelLoop(rewriter, loop, blockSize);
      } else if (isa<scf::ForOp, scf::WhileOp, memref::StoreOp>(op)) {
        result = runInOneThread(rewriter, op);
      } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
        readOnHost(rewriter, load);
      } else if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        rewriter.setInsertionPoint(alloc);
        rewriter.replaceOpWithNewOp<gpu::AllocOp>(
            alloc, alloc.getType(), /*asyncToken=*/Type(), ValueRange{},
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        rewriter.setInsertionPoint(dealloc);
        rewriter.replaceOpWithNewOp<gpu::DeallocOp>(
            dealloc, /*asyncToken=*/Type(), ValueRange{},
            dealloc.getMemref());
      } else if (op->getNumRegions() != 0) {
        result = op->emitOpError("at host level has no GPU mapping");
      }
      if (failed(result))
        return signalPassFailure();
    }
    // Every kernel, the dedicated ones (tfm-gpu-*) too.
    func.walk([&](gpu::LaunchOp launch) { sinkIntoLaunch(rewriter, launch); });
  }
};

} // namespace
