//===- MapToKernels.cpp - host loops to GPU kernels -----------------------===//

#include "tfm/Codegen/Passes.h"

#include "KernelLaunch.h"
#include "ViewedBuffer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUMAPTOKERNELSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

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

/// A parallel loop whose body ends in a sequential loop that folds values
/// into one element, as linalg reductions lower to loops (a norm's sum of
/// squares): `M[idx] = combine(M[idx], x(k))` for every k, idx fixed.
struct RowReduction {
  scf::ForOp inner;
  memref::LoadOp load;   // M[idx]
  memref::StoreOp store; // M[idx] = combined
  Operation *combine;    // combined = combine(M[idx], partial)
  Value partial;         // x(k)
  /// M holds combine's neutral element at every point (a fill the
  /// reduction absorbed): the warp stores its fold without reading M.
  bool fromNeutral = false;
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

/// The one store in `body`, where its other ops only load or have no
/// memory effects.
memref::StoreOp onlyStore(Block *body) {
  memref::StoreOp found;
  for (Operation &op : body->without_terminator()) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (found)
        return nullptr;
      found = store;
    } else if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op)) {
      return nullptr;
    }
  }
  return found;
}

/// The load of `store`'s element that `combine` folds with one other value
/// (the load's only user), and that value, where nothing else in `body`
/// reads the element: the step M[idx] = combine(M[idx], partial) of a fold.
std::optional<std::pair<memref::LoadOp, Value>>
matchFoldStep(Operation *combine, memref::StoreOp store, Block *body) {
  memref::LoadOp found;
  Value partial;
  for (int64_t i = 0; i < 2; ++i) {
    auto load = combine->getOperand(i).getDefiningOp<memref::LoadOp>();
    if (load && load.getMemRef() == store.getMemRef() &&
        load.getIndices() == store.getIndices() && load->hasOneUse()) {
      found = load;
      partial = combine->getOperand(1 - i);
    }
  }
  if (!found || partial == found.getResult())
    return std::nullopt;
  for (Operation &op : body->without_terminator())
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && load != found && load.getMemRef() == store.getMemRef())
      return std::nullopt;
  return std::make_pair(found, partial);
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
  RowReduction r{inner, nullptr, onlyStore(inner.getBody()), nullptr, nullptr};
  if (!r.store || !r.store.getValueToStore().getType().isF32())
    return std::nullopt;
  // The element is fixed across the sequential loop (its buffer too: the
  // fold's store is cloned out of the loop).
  for (Value index : r.store.getOperands().drop_front())
    if (inner.getRegion().isAncestor(index.getParentRegion()))
      return std::nullopt;
  r.combine = r.store.getValueToStore().getDefiningOp();
  if (!r.combine || r.combine->getBlock() != inner.getBody() ||
      !neutralElement(r.combine))
    return std::nullopt;
  // Nothing else reads the element while it is being folded.
  auto step = matchFoldStep(r.combine, r.store, inner.getBody());
  if (!step)
    return std::nullopt;
  std::tie(r.load, r.partial) = *step;
  return r;
}

/// The host loop right before reduction `loop` (only ops without memory
/// effects between) that fills every element the reduction folds into with
/// the reduction's neutral element (`M[ivs] = 0` for a sum, over the same
/// iteration space), if any: the reduction can start from the neutral
/// element instead, and the fill go (a norm's zeroed sums of squares).
scf::ParallelOp neutralFill(scf::ParallelOp loop, RowReduction r) {
  Operation *previous = loop->getPrevNode();
  while (previous && isMemoryEffectFree(previous) &&
         previous->getNumRegions() == 0)
    previous = previous->getPrevNode();
  auto fill = dyn_cast_or_null<scf::ParallelOp>(previous);
  if (!fill || fill.getNumLoops() != loop.getNumLoops() ||
      fill.getNumReductions() != 0)
    return nullptr;
  for (auto [a, b] : llvm::zip(fill.getLowerBound(), loop.getLowerBound()))
    if (!isEqualConstantIntOrValue(a, b))
      return nullptr;
  for (auto [a, b] : llvm::zip(fill.getUpperBound(), loop.getUpperBound()))
    if (!isEqualConstantIntOrValue(a, b))
      return nullptr;
  for (auto [a, b] : llvm::zip(fill.getStep(), loop.getStep()))
    if (!isEqualConstantIntOrValue(a, b))
      return nullptr;
  Block *body = fill.getBody();
  auto store = dyn_cast<memref::StoreOp>(body->front());
  FloatAttr value;
  if (body->getOperations().size() != 2 || !store ||
      store.getMemRef() != r.store.getMemRef() ||
      !matchPattern(store.getValueToStore(), m_Constant(&value)) ||
      value.getValueAsDouble() != *neutralElement(r.combine))
    return nullptr;
  // The same element at every point: the fill's indices, its induction
  // variables read as the reduction's.
  SmallVector<Value> fillIvs = fill.getInductionVars(),
                     loopIvs = loop.getInductionVars();
  for (auto [filled, folded] :
       llvm::zip_equal(store.getIndices(), r.store.getIndices())) {
    auto iv = llvm::find(fillIvs, filled);
    if (iv != fillIvs.end() ? folded != loopIvs[iv - fillIvs.begin()]
                            : !isEqualConstantIntOrValue(filled, folded))
      return nullptr;
  }
  return fill;
}

/// `combine` of `r` applied to `accumulated` and `value`.
Value combineFolds(RewriterBase &rewriter, RowReduction r, Value accumulated,
                   Value value) {
  IRMapping operands;
  operands.map(r.load.getResult(), accumulated);
  operands.map(r.partial, value);
  return rewriter.clone(*r.combine, operands)->getResult(0);
}

/// The fold of `r`'s sequential loop that thread `thread` of `threads`
/// makes from the neutral element: every `threads`th step, from its
/// `thread`th.
Value foldEveryNth(RewriterBase &rewriter, Location loc, RowReduction r,
                   Value thread, int64_t threads, IRMapping &mapping) {
  scf::ForOp inner = r.inner;
  Value step = mapping.lookupOrDefault(inner.getStep());
  Value start = arith::AddIOp::create(
      rewriter, loc, mapping.lookupOrDefault(inner.getLowerBound()),
      arith::MulIOp::create(rewriter, loc, thread, step));
  Value stride = arith::MulIOp::create(
      rewriter, loc, step,
      arith::ConstantIndexOp::create(rewriter, loc, threads));
  Value neutral = arith::ConstantOp::create(
      rewriter, loc, rewriter.getF32FloatAttr(*neutralElement(r.combine)));
  auto folds = scf::ForOp::create(
      rewriter, loc, start, mapping.lookupOrDefault(inner.getUpperBound()),
      stride, ValueRange{neutral},
      [&](OpBuilder &, Location, Value k, ValueRange state) {
        mapping.map(inner.getInductionVar(), k);
        for (Operation &op : inner.getBody()->without_terminator())
          if (&op != r.load && &op != r.store && &op != r.combine)
            rewriter.clone(op, mapping);
        scf::YieldOp::create(rewriter, loc,
                             combineFolds(rewriter, r, state[0],
                                          mapping.lookupOrDefault(r.partial)));
      });
  return folds.getResult(0);
}

/// `folded` combined over the 32 lanes of a warp by xor shuffles: the
/// same value in every lane (each step combines the same two values,
/// in either order, and the folds are commutative).
Value combineInWarp(RewriterBase &rewriter, Location loc, RowReduction r,
                    Value folded) {
  for (int32_t offset = 16; offset >= 1; offset /= 2)
    folded =
        combineFolds(rewriter, r, folded,
                     gpu::ShuffleOp::create(rewriter, loc, folded, offset,
                                            /*width=*/32, gpu::ShuffleMode::XOR)
                         .getShuffleResult());
  return folded;
}

/// Builds with `build` the ops that run only where `index` is 0 (the
/// first thread, or lane).
void whereZero(RewriterBase &rewriter, Location loc, Value index,
               llvm::function_ref<void()> build) {
  Value zero =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, index,
                            arith::ConstantIndexOp::create(rewriter, loc, 0));
  auto branch = scf::IfOp::create(rewriter, loc, zero);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(branch.thenBlock()->getTerminator());
  build();
}

/// Stores `folded` into `r`'s element, folded into what it holds unless
/// `r.fromNeutral`, where `thread` is 0.
void storeFromFirst(RewriterBase &rewriter, Location loc, RowReduction r,
                    Value thread, Value folded, IRMapping &mapping) {
  whereZero(rewriter, loc, thread, [&] {
    if (!r.fromNeutral)
      folded = combineFolds(
          rewriter, r, rewriter.clone(*r.load, mapping)->getResult(0), folded);
    mapping.map(r.store.getValueToStore(), folded);
    rewriter.clone(*r.store, mapping);
  });
}

/// `r` for one point, by the 32 lanes of a warp: each folds every 32nd
/// step of the sequential loop from the neutral element, the warp combines
/// the lanes' folds (xor shuffles), and lane 0 folds the result into M.
void foldInWarp(RewriterBase &rewriter, Location loc, RowReduction r,
                Value lane, IRMapping &mapping) {
  Value folded = combineInWarp(
      rewriter, loc, r, foldEveryNth(rewriter, loc, r, lane, 32, mapping));
  storeFromFirst(rewriter, loc, r, lane, folded, mapping);
}

/// A launch with `lanes` threads per point of the iteration space
/// [lower, upper) by `step`, flattened with the last dim fastest, in blocks
/// of `blockSize` with `sharedBytes` of shared memory each; the builder is
/// left inside the branch of the points in range (the lanes of a point
/// share it: in range or out of it together).
struct PointLaunch {
  gpu::LaunchOp launch;
  SmallVector<Value> indices; // the point's
  Value lane;                 // with lanes > 1
  Value shared;               // with sharedBytes > 0: the block's, i8
};

PointLaunch launchPerPoint(RewriterBase &rewriter, Location loc,
                           ValueRange lower, ValueRange upper, ValueRange step,
                           int64_t blockSize, int64_t lanes,
                           int64_t sharedBytes = 0) {
  // Trip counts, and their product: the number of points.
  SmallVector<Value> counts;
  Value total = arith::ConstantIndexOp::create(rewriter, loc, 1);
  for (auto [lb, ub, stride] : llvm::zip(lower, upper, step)) {
    Value extent = rewriter.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value count =
        rewriter.createOrFold<arith::CeilDivSIOp>(loc, extent, stride);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    count = rewriter.createOrFold<arith::MaxSIOp>(loc, count, zero);
    counts.push_back(count);
    total = rewriter.createOrFold<arith::MulIOp>(loc, total, count);
  }
  Value threads = rewriter.createOrFold<arith::MulIOp>(
      loc, total, arith::ConstantIndexOp::create(rewriter, loc, lanes));
  Value block = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
  Value grid = rewriter.createOrFold<arith::CeilDivUIOp>(loc, threads, block);
  PointLaunch result;
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  if (sharedBytes > 0)
    std::tie(result.launch, result.shared) = createSharedMemoryLaunch(
        rewriter, loc, {grid, one, one}, blockSize, sharedBytes);
  else
    result.launch = createLaunch(rewriter, loc, {grid, one, one}, block);

  gpu::KernelDim3 blockIds = result.launch.getBlockIds();
  gpu::KernelDim3 threadIds = result.launch.getThreadIds();
  Value id = rewriter.createOrFold<arith::AddIOp>(
      loc, rewriter.createOrFold<arith::MulIOp>(loc, blockIds.x, block),
      threadIds.x);
  Value point = id;
  if (lanes > 1) {
    Value width = arith::ConstantIndexOp::create(rewriter, loc, lanes);
    point = arith::DivUIOp::create(rewriter, loc, id, width);
    result.lane = arith::RemUIOp::create(rewriter, loc, id, width);
  }
  Value inRange = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, point, total);
  auto guard = scf::IfOp::create(rewriter, loc, inRange);
  rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
  result.indices.resize(counts.size());
  Value rest = point;
  for (int64_t d = counts.size() - 1; d >= 0; --d) {
    Value index =
        d == 0 ? rest
               : rewriter.createOrFold<arith::RemUIOp>(loc, rest, counts[d]);
    if (d > 0)
      rest = rewriter.createOrFold<arith::DivUIOp>(loc, rest, counts[d]);
    result.indices[d] = rewriter.createOrFold<arith::AddIOp>(
        loc, lower[d],
        rewriter.createOrFold<arith::MulIOp>(loc, index, step[d]));
  }
  return result;
}

/// One thread per point of `loop`'s iteration space; a point that folds a
/// row (RowReduction) gets a warp, which starts from the neutral element
/// if `fromNeutral` (the fill before it absorbed).
LogicalResult mapParallelLoop(RewriterBase &rewriter, scf::ParallelOp loop,
                              int64_t blockSize, bool fromNeutral = false) {
  if (loop.getNumReductions() != 0)
    return loop.emitOpError("with reductions has no GPU mapping yet");
  std::optional<RowReduction> reduction;
  if (blockSize % 32 == 0)
    reduction = matchRowReduction(loop);
  if (reduction)
    reduction->fromNeutral = fromNeutral;
  rewriter.setInsertionPoint(loop);
  PointLaunch points = launchPerPoint(
      rewriter, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), blockSize, reduction ? 32 : 1);
  IRMapping mapping;
  mapping.map(loop.getInductionVars(), points.indices);
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (reduction && &op == reduction->inner.getOperation())
      break;
    rewriter.clone(op, mapping);
  }
  if (reduction)
    foldInWarp(rewriter, loop.getLoc(), *reduction, points.lane, mapping);
  rewriter.eraseOp(loop);
  return prepareKernelBody(rewriter, points.launch);
}

/// The parallel loop that applies a row reduction's elements to their rows
/// (a norm's scaling by 1/sqrt(mean + eps)): the host loop right after the
/// reduction (only allocations and ops without memory effects between),
/// over the reduction's points and one dim more, that reads the element
/// only at its own point and stores only into allocations the reduction
/// does not read. Each point's row may then run right after its fold.
struct RowConsumer {
  scf::ParallelOp loop;
  SmallVector<memref::LoadOp> loads; // of the reduction's element
};

std::optional<RowConsumer> matchRowConsumer(scf::ParallelOp reduction,
                                            RowReduction r) {
  Operation *next = reduction->getNextNode();
  while (next && (isa<memref::AllocOp>(next) ||
                  (isMemoryEffectFree(next) && next->getNumRegions() == 0)))
    next = next->getNextNode();
  auto loop = dyn_cast_or_null<scf::ParallelOp>(next);
  size_t points = reduction.getNumLoops();
  if (!loop || loop.getNumReductions() != 0 || loop.getNumLoops() != points + 1)
    return std::nullopt;
  for (size_t d = 0; d < points; ++d)
    if (!isEqualConstantIntOrValue(loop.getLowerBound()[d],
                                   reduction.getLowerBound()[d]) ||
        !isEqualConstantIntOrValue(loop.getUpperBound()[d],
                                   reduction.getUpperBound()[d]) ||
        !isEqualConstantIntOrValue(loop.getStep()[d], reduction.getStep()[d]))
      return std::nullopt;
  // The reduction only loads (matchRowReduction), and stores only its
  // element.
  SmallVector<Value> read;
  reduction.walk([&](memref::LoadOp load) {
    read.push_back(viewedBuffer(load.getMemRef()));
  });
  Value element = r.store.getMemRef();
  SmallVector<Value> ivs = loop.getInductionVars(),
                     foldedIvs = reduction.getInductionVars();
  RowConsumer consumer{loop, {}};
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0)
      return std::nullopt;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (viewedBuffer(load.getMemRef()) != viewedBuffer(element))
        continue;
      if (load.getMemRef() != element)
        return std::nullopt;
      // The element of its own point: the reduction's indices, its
      // induction variables read as the consumer's.
      for (auto [index, folded] :
           llvm::zip_equal(load.getIndices(), r.store.getIndices())) {
        auto iv = llvm::find(foldedIvs, folded);
        if (iv != foldedIvs.end() ? index != ivs[iv - foldedIvs.begin()]
                                  : !isEqualConstantIntOrValue(index, folded))
          return std::nullopt;
      }
      consumer.loads.push_back(load);
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      Value base = viewedBuffer(store.getMemRef());
      // An allocation (on the host, or already in device memory) is no
      // view of anything the reduction reads.
      if (!isa_and_nonnull<memref::AllocOp, gpu::AllocOp>(
              base.getDefiningOp()) ||
          base == viewedBuffer(element) || llvm::is_contained(read, base))
        return std::nullopt;
    } else if (!isMemoryEffectFree(&op)) {
      return std::nullopt;
    }
  }
  if (consumer.loads.empty())
    return std::nullopt;
  return consumer;
}

/// Whether anything but `loop` (row reduction `r`), its consumer `c` and
/// frees uses the buffer `r` folds into, or a view of it: if not, the
/// folds need not be stored (a norm's sums, which only its scaling
/// reads), and the buffer goes (eraseUnusedAllocations).
bool foldsReadElsewhere(scf::ParallelOp loop, const RowConsumer &c,
                        RowReduction r) {
  Value base = viewedBuffer(r.store.getMemRef());
  if (!isa_and_nonnull<memref::AllocOp, gpu::AllocOp>(base.getDefiningOp()))
    return true;
  SmallVector<Value> worklist{base};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (loop->isAncestor(user) || c.loop->isAncestor(user) ||
          isa<memref::DeallocOp, gpu::DeallocOp>(user))
        continue;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (!view || view.getViewSource() != value)
        return true;
      llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

/// Row reduction `r` (from the neutral element) of `loop` and its
/// consumer `c` in one kernel, a block per point: its threads fold every
/// blockSize-th step, each warp combines its lanes' folds (xor shuffles),
/// and every thread combines the warps' folds, through shared memory, in
/// the same order: the same value in every thread. Thread 0 stores it
/// (unless only `c` reads it); every thread applies it to every
/// blockSize-th element of the row. One
/// kernel instead of two, and a row's element read a blockSize-th by
/// each thread rather than a 32nd (a decode step's norm: a block, not a
/// warp, for its one row).
LogicalResult mapReductionWithConsumer(RewriterBase &rewriter,
                                       scf::ParallelOp loop, RowReduction r,
                                       RowConsumer c, int64_t blockSize) {
  Location loc = loop.getLoc();
  int64_t warps = blockSize / 32;
  bool storeFolds = foldsReadElsewhere(loop, c, r);
  // After the allocations of the consumer's outputs.
  rewriter.setInsertionPoint(c.loop);
  PointLaunch points = launchPerPoint(
      rewriter, loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
      blockSize, blockSize, /*sharedBytes=*/4 * warps);
  Value thread = points.lane;
  IRMapping mapping;
  mapping.map(loop.getInductionVars(), points.indices);
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (&op == r.inner.getOperation())
      break;
    rewriter.clone(op, mapping);
  }
  Value folded =
      combineInWarp(rewriter, loc, r,
                    foldEveryNth(rewriter, loc, r, thread, blockSize, mapping));
  Value c32 = arith::ConstantIndexOp::create(rewriter, loc, 32);
  Value warp = arith::DivUIOp::create(rewriter, loc, thread, c32);
  Value lane = arith::RemUIOp::create(rewriter, loc, thread, c32);
  Value warpFolds = sharedView(rewriter, loc, points.shared, {warps},
                               rewriter.getF32Type(), /*offset=*/0);
  whereZero(rewriter, loc, lane, [&] {
    memref::StoreOp::create(rewriter, loc, folded, warpFolds, warp);
  });
  gpu::BarrierOp::create(rewriter, loc);
  Value total;
  for (int64_t w = 0; w < warps; ++w) {
    Value fold = memref::LoadOp::create(
        rewriter, loc, warpFolds,
        ValueRange{arith::ConstantIndexOp::create(rewriter, loc, w)});
    total = w == 0 ? fold : combineFolds(rewriter, r, total, fold);
  }
  if (storeFolds)
    storeFromFirst(rewriter, loc, r, thread, total, mapping);

  // The row: the consumer's last dim, every blockSize-th element a thread.
  size_t last = loop.getNumLoops();
  for (size_t d = 0; d < last; ++d)
    mapping.map(c.loop.getInductionVars()[d], points.indices[d]);
  for (memref::LoadOp load : c.loads)
    mapping.map(load.getResult(), total);
  Value step = c.loop.getStep()[last];
  Value start =
      arith::AddIOp::create(rewriter, loc, c.loop.getLowerBound()[last],
                            arith::MulIOp::create(rewriter, loc, thread, step));
  Value stride = arith::MulIOp::create(
      rewriter, loc, step,
      arith::ConstantIndexOp::create(rewriter, loc, blockSize));
  scf::ForOp::create(
      rewriter, loc, start, c.loop.getUpperBound()[last], stride, ValueRange{},
      [&](OpBuilder &, Location, Value k, ValueRange) {
        mapping.map(c.loop.getInductionVars()[last], k);
        for (Operation &op : c.loop.getBody()->without_terminator()) {
          auto load = dyn_cast<memref::LoadOp>(op);
          if (!load || !llvm::is_contained(c.loads, load))
            rewriter.clone(op, mapping);
        }
        scf::YieldOp::create(rewriter, loc);
      });
  rewriter.eraseOp(c.loop);
  rewriter.eraseOp(loop);
  return prepareKernelBody(rewriter, points.launch);
}

/// A nest of sequential loops that folds a predicate of every point into
/// one i1 element with `andi` or `ori` (the input checks: "every id is in
/// range"): `M[idx] = M[idx] op p(point)`, idx fixed. Both folds are
/// idempotent, so the points may run in any order in any thread, each
/// storing the absorbing value (false for andi, true for ori) when its
/// predicate has it, without reading M.
struct PredicateFold {
  SmallVector<scf::ForOp> loops; // the outermost first
  memref::LoadOp load;           // M[idx]
  memref::StoreOp store;         // M[idx] = combined
  Operation *combine;            // andi or ori of M[idx] and `partial`
  Value partial;                 // p(point)
};

std::optional<PredicateFold> matchPredicateFold(scf::ForOp outer) {
  PredicateFold f;
  for (scf::ForOp loop = outer; loop;) {
    if (loop.getNumResults() != 0)
      return std::nullopt;
    // Bounds fixed across the nest.
    for (Value bound :
         {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
      if (outer.getRegion().isAncestor(bound.getParentRegion()))
        return std::nullopt;
    f.loops.push_back(loop);
    Block *body = loop.getBody();
    loop = body->getOperations().size() == 2
               ? dyn_cast<scf::ForOp>(body->front())
               : nullptr;
  }
  Block *body = f.loops.back().getBody();
  f.store = onlyStore(body);
  if (!f.store || !f.store.getValueToStore().getType().isInteger(1))
    return std::nullopt;
  for (Value index : f.store.getIndices())
    if (outer.getRegion().isAncestor(index.getParentRegion()))
      return std::nullopt;
  f.combine = f.store.getValueToStore().getDefiningOp();
  if (!f.combine || f.combine->getBlock() != body ||
      !isa<arith::AndIOp, arith::OrIOp>(f.combine))
    return std::nullopt;
  auto step = matchFoldStep(f.combine, f.store, body);
  if (!step)
    return std::nullopt;
  std::tie(f.load, f.partial) = *step;
  return f;
}

/// `f` with one thread per point of its loop nest.
LogicalResult mapPredicateFold(RewriterBase &rewriter, PredicateFold f,
                               int64_t blockSize) {
  SmallVector<Value> lower, upper, step;
  for (scf::ForOp loop : f.loops) {
    lower.push_back(loop.getLowerBound());
    upper.push_back(loop.getUpperBound());
    step.push_back(loop.getStep());
  }
  scf::ForOp outer = f.loops.front();
  Location loc = outer.getLoc();
  rewriter.setInsertionPoint(outer);
  PointLaunch points =
      launchPerPoint(rewriter, loc, lower, upper, step, blockSize, 1);
  IRMapping mapping;
  for (auto [loop, index] : llvm::zip(f.loops, points.indices))
    mapping.map(loop.getInductionVar(), index);
  for (Operation &op : f.loops.back().getBody()->without_terminator())
    if (&op != f.load && &op != f.store && &op != f.combine)
      rewriter.clone(op, mapping);
  bool absorbing = isa<arith::OrIOp>(f.combine);
  Value partial = mapping.lookupOrDefault(f.partial);
  Value absorbed = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::eq, partial,
      arith::ConstantIntOp::create(rewriter, loc, absorbing, 1));
  auto write = scf::IfOp::create(rewriter, loc, absorbed);
  rewriter.setInsertionPoint(write.thenBlock()->getTerminator());
  mapping.map(f.store.getValueToStore(), partial);
  rewriter.clone(*f.store, mapping);
  rewriter.eraseOp(outer);
  return prepareKernelBody(rewriter, points.launch);
}

/// `bound` (of a parallel loop in `loop`'s body) as a value defined outside
/// `loop`: itself, or the constant it is (a static size of a view made in
/// the body); null if neither.
Value boundOutside(OpBuilder &b, scf::ForOp loop, Value bound) {
  if (!loop.getRegion().isAncestor(bound.getParentRegion()))
    return bound;
  std::optional<int64_t> size = getConstantIntValue(bound);
  if (auto dim = bound.getDefiningOp<memref::DimOp>()) {
    std::optional<int64_t> d = dim.getConstantIndex();
    auto type = cast<MemRefType>(dim.getSource().getType());
    if (d && !type.isDynamicDim(*d))
      size = type.getDimSize(*d);
  }
  return size ? arith::ConstantIndexOp::create(b, bound.getLoc(), *size)
                    .getResult()
              : Value();
}

/// Whether the iterations of host loop `loop` are independent: its body
/// only reads memory (loads, views) and runs parallel loops that store
/// into views of row `iv` of buffers defined outside it (size 1, offset iv
/// in dim 0; of one view of each buffer), none of which anything in the
/// loop reads. A KV cache's
/// update, one row of the batch at a time, is such a loop.
bool writesDisjointRows(scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return false;
  Value iv = loop.getInductionVar();
  SmallVector<Value> written, writtenViews, read;
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (isa<scf::YieldOp, scf::ReduceOp>(op) || isMemoryEffectFree(op))
      return WalkResult::advance();
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      read.push_back(viewedBuffer(load.getMemRef()));
      return WalkResult::advance();
    }
    auto store = dyn_cast<memref::StoreOp>(op);
    auto parallel = store ? store->getParentOfType<scf::ParallelOp>()
                          : dyn_cast<scf::ParallelOp>(op);
    if (parallel && !store) {
      auto fixed = [&](Value bound) {
        return !loop.getRegion().isAncestor(bound.getParentRegion()) ||
               getConstantIntValue(bound) ||
               (bound.getDefiningOp<memref::DimOp>() &&
                bound.getDefiningOp<memref::DimOp>().getConstantIndex());
      };
      return parallel.getNumReductions() == 0 &&
                     parallel->getParentOp() == loop &&
                     llvm::all_of(parallel.getLowerBound(), fixed) &&
                     llvm::all_of(parallel.getUpperBound(), fixed) &&
                     llvm::all_of(parallel.getStep(), fixed)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    auto row = store ? store.getMemRef().getDefiningOp<memref::SubViewOp>()
                     : nullptr;
    if (!row || !parallel || row->getParentOp() != loop ||
        loop.getRegion().isAncestor(
            viewedBuffer(row.getSource()).getParentRegion()) ||
        row.getStaticSizes().front() != 1 ||
        getAsOpFoldResult(iv) != row.getMixedOffsets().front())
      return WalkResult::interrupt();
    // Every row written of a buffer is a row of one view of it: rows of
    // two views (one shifted) could be the same row in two iterations.
    Value base = viewedBuffer(row.getSource());
    auto known = llvm::find(written, base);
    if (known != written.end() &&
        writtenViews[known - written.begin()] != row.getSource())
      return WalkResult::interrupt();
    written.push_back(base);
    writtenViews.push_back(row.getSource());
    return WalkResult::advance();
  });
  return !result.wasInterrupted() && !written.empty() &&
         llvm::none_of(read, [&](Value base) {
           return llvm::is_contained(written, base);
         });
}

/// The buffers that the stores in `loop` write views of.
SmallVector<Value> writtenBases(scf::ParallelOp loop) {
  SmallVector<Value> bases;
  loop.walk([&](memref::StoreOp store) {
    bases.push_back(viewedBuffer(store.getMemRef()));
  });
  return bases;
}

/// A loop that writesDisjointRows as parallel loops over (its rows) x (the
/// points of a parallel loop in its body), each point running the body's
/// ops that loop reads (loads, views) for its row, then mapped with a
/// thread per point: no kernel of one thread walking the rows and elements
/// in turn. Consecutive parallel loops of the body over the same points
/// that write different buffers share one (a KV cache's K and V rows: one
/// kernel): nothing in the loop reads what they write.
LogicalResult mapRowLoop(RewriterBase &rewriter, scf::ForOp loop,
                         int64_t blockSize) {
  struct Group {
    SmallVector<scf::ParallelOp> inners;
    SmallVector<Value> lower, upper, step, written;
  };
  std::vector<Group> groups;
  Block *body = loop.getBody();
  rewriter.setInsertionPoint(loop);
  for (Operation &op : body->without_terminator()) {
    auto inner = dyn_cast<scf::ParallelOp>(op);
    if (!inner)
      continue;
    Group group;
    group.lower = {loop.getLowerBound()};
    group.upper = {loop.getUpperBound()};
    group.step = {loop.getStep()};
    for (auto [bounds, innerBounds] : llvm::zip(
             SmallVector<SmallVector<Value> *>{&group.lower, &group.upper,
                                               &group.step},
             SmallVector<OperandRange>{inner.getLowerBound(),
                                       inner.getUpperBound(), inner.getStep()}))
      for (Value bound : innerBounds) {
        Value outside = boundOutside(rewriter, loop, bound);
        if (!outside)
          return inner.emitOpError("has bounds that vary with the rows");
        bounds->push_back(outside);
      }
    group.inners = {inner};
    group.written = writtenBases(inner);
    auto same = [](ArrayRef<Value> a, ArrayRef<Value> b) {
      return a.size() == b.size() &&
             llvm::all_of(llvm::zip(a, b), [](auto pair) {
               return isEqualConstantIntOrValue(std::get<0>(pair),
                                                std::get<1>(pair));
             });
    };
    if (!groups.empty() && same(groups.back().lower, group.lower) &&
        same(groups.back().upper, group.upper) &&
        same(groups.back().step, group.step) &&
        llvm::none_of(group.written, [&](Value base) {
          return llvm::is_contained(groups.back().written, base);
        })) {
      groups.back().inners.push_back(inner);
      llvm::append_range(groups.back().written, group.written);
    } else {
      groups.push_back(std::move(group));
    }
  }
  SmallVector<scf::ParallelOp> mapped;
  for (Group &group : groups)
    mapped.push_back(scf::ParallelOp::create(
        rewriter, loop.getLoc(), group.lower, group.upper, group.step,
        [&](OpBuilder &b, Location, ValueRange ivs) {
          IRMapping mapping;
          mapping.map(loop.getInductionVar(), ivs.front());
          // The ops of the body that the inner loops' bodies read.
          llvm::SetVector<Operation *> needed;
          SmallVector<Value> worklist;
          for (scf::ParallelOp inner : group.inners) {
            mapping.map(inner.getInductionVars(), ivs.drop_front());
            inner.getBody()->walk([&](Operation *op) {
              llvm::append_range(worklist, op->getOperands());
            });
          }
          while (!worklist.empty()) {
            Operation *def = worklist.pop_back_val().getDefiningOp();
            if (def && def->getBlock() == body && needed.insert(def))
              llvm::append_range(worklist, def->getOperands());
          }
          for (Operation &before : body->without_terminator())
            if (needed.contains(&before))
              b.clone(before, mapping);
          for (scf::ParallelOp inner : group.inners)
            for (Operation &innerOp : inner.getBody()->without_terminator())
              b.clone(innerOp, mapping);
        }));
  rewriter.eraseOp(loop);
  for (scf::ParallelOp parallel : mapped)
    if (failed(mapParallelLoop(rewriter, parallel, blockSize)))
      return failure();
  return success();
}

/// Runs `op` (a sequential loop or a store) in a kernel of one thread.
LogicalResult runInOneThread(RewriterBase &rewriter, Operation *op) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  gpu::LaunchOp launch = createLaunch(rewriter, loc, {one, one, one}, one);
  if (op->getNumResults() != 0)
    return op->emitOpError("with results cannot be moved into a GPU kernel");
  rewriter.moveOpBefore(op, launch.getBody().front().getTerminator());
  return prepareKernelBody(rewriter, launch);
}

/// A host read of device memory: copied into a host buffer where it was,
/// read once the device has finished, where its value is first needed, so
/// that the copies of several reads (a call's runtime checks) share one
/// wait.
void readOnHost(RewriterBase &rewriter, memref::LoadOp load) {
  Location loc = load.getLoc();
  Block *block = load->getBlock();
  Operation *firstUse = nullptr;
  for (Operation *user : load->getUsers()) {
    Operation *use = block->findAncestorOpInBlock(*user);
    if (!firstUse || use->isBeforeInBlock(firstUse))
      firstUse = use;
  }
  if (!firstUse) {
    rewriter.eraseOp(load);
    return;
  }
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
  // The host buffer at the function's entry: a host allocation between
  // the kernels and the copy would make gpu-async-region wait for the
  // stream before the copy as well as after it.
  Value host;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(
        &load->getParentOfType<func::FuncOp>().getBody().front());
    host = memref::AllocaOp::create(rewriter, loc, hostType);
  }
  gpu::MemcpyOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange{},
                        host, element);
  rewriter.setInsertionPoint(firstUse);
  gpu::WaitOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange{});
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value value = memref::LoadOp::create(rewriter, loc, host,
                                       SmallVector<Value>(rank, zero));
  rewriter.replaceOp(load, value);
}

/// Erases the host waits of `block` with no GPU work issued since the
/// previous one (a read's wait right after another's).
void eraseRepeatedWaits(RewriterBase &rewriter, Block &block) {
  bool issued = true;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto wait = dyn_cast<gpu::WaitOp>(op);
    if (wait && !wait.getAsyncToken() && wait.getAsyncDependencies().empty()) {
      if (!issued)
        rewriter.eraseOp(wait);
      issued = false;
    } else if (op.getNumRegions() != 0 ||
               isa_and_nonnull<gpu::GPUDialect>(op.getDialect())) {
      issued = true;
    }
  }
}

/// Erases the device buffers of `func` that nothing but frees and views
/// of them use (a norm's sums, once its kernel no longer stores them).
void eraseUnusedAllocations(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<gpu::AllocOp> allocs;
  func.walk([&](gpu::AllocOp alloc) { allocs.push_back(alloc); });
  for (gpu::AllocOp alloc : allocs) {
    SmallVector<Operation *> unused; // views before their users
    SmallVector<Value> worklist{alloc.getMemref()};
    bool used = false;
    while (!worklist.empty() && !used) {
      for (Operation *user : worklist.pop_back_val().getUsers()) {
        auto view = dyn_cast<ViewLikeOpInterface>(user);
        if (isa<gpu::DeallocOp>(user)) {
          unused.push_back(user);
        } else if (view && view->getNumResults() == 1) {
          unused.push_back(user);
          worklist.push_back(user->getResult(0));
        } else {
          used = true;
          break;
        }
      }
    }
    if (used)
      continue;
    for (Operation *op : llvm::reverse(unused))
      rewriter.eraseOp(op);
    rewriter.eraseOp(alloc);
  }
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
    // Row reductions that absorb the fill before them, which goes.
    DenseSet<Operation *> fromNeutral;
    for (Operation *op : hostOps) {
      auto loop = dyn_cast<scf::ParallelOp>(op);
      std::optional<RowReduction> reduction;
      if (loop && blockSize % 32 == 0)
        reduction = matchRowReduction(loop);
      if (scf::ParallelOp fill =
              reduction ? neutralFill(loop, *reduction) : nullptr) {
        rewriter.eraseOp(fill);
        fromNeutral.insert(loop);
      }
    }
    hostOps.clear();
    collectHostOps(func.getBody().front(), hostOps);
    // Row consumers, mapped into their reduction's kernel.
    DenseSet<Operation *> consumed;
    for (Operation *op : hostOps) {
      LogicalResult result = success();
      if (consumed.contains(op))
        continue;
      std::optional<RowReduction> reduction;
      std::optional<RowConsumer> consumer;
      if (fromNeutral.contains(op) &&
          (reduction = matchRowReduction(cast<scf::ParallelOp>(op))))
        consumer = matchRowConsumer(cast<scf::ParallelOp>(op), *reduction);
      if (consumer) {
        reduction->fromNeutral = true;
        consumed.insert(consumer->loop);
        result = mapReductionWithConsumer(rewriter, cast<scf::ParallelOp>(op),
                                          *reduction, *consumer, blockSize);
      } else if (isa<gpu::LaunchOp>(op)) {
        continue; // a dedicated kernel (tfm-gpu-lower-buffer-attention, tfm-gpu-tensor-core-matmul)
      } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        result = mapParallelLoop(rewriter, loop, blockSize,
                                 fromNeutral.contains(loop));
      } else if (auto fold = isa<scf::ForOp>(op)
                                 ? matchPredicateFold(cast<scf::ForOp>(op))
                                 : std::nullopt) {
        result = mapPredicateFold(rewriter, *fold, blockSize);
      } else if (isa<scf::ForOp>(op) &&
                 writesDisjointRows(cast<scf::ForOp>(op))) {
        result = mapRowLoop(rewriter, cast<scf::ForOp>(op), blockSize);
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
    eraseUnusedAllocations(rewriter, func);
    func.walk([&](Block *block) { eraseRepeatedWaits(rewriter, *block); });
    // Every kernel, the dedicated ones (tfm-gpu-*) too.
    func.walk([&](gpu::LaunchOp launch) { sinkIntoLaunch(rewriter, launch); });
  }
};

} // namespace
