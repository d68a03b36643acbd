//===- MergeLaunches.cpp - independent kernels launched as one ------------===//
//
// tfm-gpu-merge-launches: a launch that may run alongside an earlier one of
// the same block shape (neither writes a buffer the other reads or writes,
// and nothing between them is in the way) joins it: one launch whose first
// blocks run the earlier kernel and the others the later one. A decode
// step's q, k and v projections become one launch, and so do q's and k's
// RoPE: a launch costs the host microseconds, which a step of a small batch
// spends more of than the kernels run.
//
//===----------------------------------------------------------------------===//

#include "BufferAccess.h"
#include "ViewedBuffer.h"

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUMERGELAUNCHESPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

bool anyAlias(ArrayRef<Value> as, ArrayRef<Value> bs) {
  return llvm::any_of(as, [&](Value a) {
    return llvm::any_of(bs, [&](Value b) { return mayAlias(a, b); });
  });
}

/// Whether the two may not run in either order, or at once.
bool conflict(const BufferAccess &a, const BufferAccess &b) {
  return a.unknown || b.unknown || anyAlias(a.writes, b.writes) ||
         anyAlias(a.writes, b.reads) || anyAlias(b.writes, a.reads);
}

/// One value or equal constants, both present or both absent.
bool sameSize(Value a, Value b) {
  return a && b ? isEqualConstantIntOrValue(a, b) : a == b;
}

/// Whether `launch` can be one side of a merged launch: a row of blocks
/// and of threads, its body one block that reads its block's place through
/// the launch's arguments only, which the merge remaps, and that calls
/// nothing (a callee could read it too). Not a kernel of static shared
/// memory (a merged kernel would hold both kernels' in every block), nor
/// one that moves registers between warps (a warp-specialized kernel's
/// budget is its own), nor one of warpgroup MMA: ptxas serializes the
/// wgmma of a kernel holding two such pipelines ("insufficient register
/// resources").
bool isMergeable(gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.hasClusterSize() || launch.getNumWorkgroupAttributions() ||
      launch.getNumPrivateAttributions() || !launch.getBody().hasOneBlock() ||
      !isConstantIntValue(launch.getGridSizeY(), 1) ||
      !isConstantIntValue(launch.getGridSizeZ(), 1) ||
      !isConstantIntValue(launch.getBlockSizeY(), 1) ||
      !isConstantIntValue(launch.getBlockSizeZ(), 1))
    return false;
  auto staysApart = [](Operation *op) {
    if (auto global = dyn_cast<memref::GetGlobalOp>(op))
      return isKernelMemory(global.getResult());
    return isa<gpu::BlockIdOp, gpu::GridDimOp, gpu::GlobalIdOp,
               gpu::ClusterIdOp, gpu::ClusterDimOp, gpu::ClusterBlockIdOp,
               gpu::ClusterDimBlocksOp, NVVM::BlockIdXOp, NVVM::GridDimXOp,
               NVVM::ClusterIdXOp, NVVM::ClusterDimXOp, CallOpInterface,
               NVVM::SetMaxRegisterOp, NVVM::WgmmaMmaAsyncOp>(op);
  };
  return !launch.getBody()
              .walk([&](Operation *op) {
                return staysApart(op) ? WalkResult::interrupt()
                                      : WalkResult::advance();
              })
              .wasInterrupted();
}

/// Same threads and dynamic shared memory: a merged kernel takes the
/// larger shared memory for every block, which would cut the smaller
/// kernel's blocks per multiprocessor.
bool sameShape(gpu::LaunchOp a, gpu::LaunchOp b) {
  return sameSize(a.getBlockSizeX(), b.getBlockSizeX()) &&
         sameSize(a.getDynamicSharedMemorySize(),
                  b.getDynamicSharedMemorySize());
}

class LaunchMerger {
public:
  explicit LaunchMerger(MLIRContext *context) : rewriter(context) {}

  /// Merges each launch of `block`, in order, into the nearest earlier one
  /// of its shape that it may join.
  void run(Block &block) {
    SmallVector<gpu::LaunchOp> launches(block.getOps<gpu::LaunchOp>());
    for (gpu::LaunchOp launch : launches) {
      if (!isMergeable(launch))
        continue;
      SmallVector<Operation *> dependencies;
      gpu::LaunchOp target = findTarget(launch, dependencies);
      if (!target)
        continue;
      for (Operation *op : llvm::reverse(dependencies))
        op->moveBefore(target);
      gpu::LaunchOp merged = merge(target, launch);
      accesses.erase(target);
      accesses.erase(launch);
      rewriter.eraseOp(target);
      rewriter.eraseOp(launch);
      accesses[merged] = accessOf(merged);
    }
  }

private:
  BufferAccess cachedAccess(Operation *op) {
    auto launch = dyn_cast<gpu::LaunchOp>(op);
    if (!launch)
      return accessOf(op);
    auto it = accesses.find(launch);
    if (it == accesses.end())
      it = accesses.try_emplace(launch, accessOf(launch)).first;
    return it->second;
  }

  /// The nearest earlier launch of `launch`'s shape in the block that
  /// `launch` may join; null if none. `launch` must run before the ops
  /// between the two that it depends on, directly or not (the values it
  /// uses, its buffers' earlier writers and readers: a projection's tile
  /// kernel before its few-rows kernel): they are put into `dependencies`,
  /// nearest first, and must move before the target, so none of them may
  /// depend on the target. The search stops at the first launch of the
  /// shape, and at an op that may touch anything or holds a region.
  gpu::LaunchOp findTarget(gpu::LaunchOp launch,
                           SmallVector<Operation *> &dependencies) {
    SmallVector<BufferAccess> moving = {cachedAccess(launch)};
    if (moving.front().unknown)
      return nullptr;
    SetVector<Value> used;
    auto addUses = [&](Operation *op) {
      used.insert(op->operand_begin(), op->operand_end());
      for (Region &region : op->getRegions())
        getUsedValuesDefinedAbove(region, used);
    };
    addUses(launch);
    for (Operation *op = launch->getPrevNode(); op; op = op->getPrevNode()) {
      BufferAccess access = cachedAccess(op);
      if (access.unknown)
        return nullptr;
      bool isDependency =
          llvm::any_of(op->getResults(),
                       [&](Value result) { return used.contains(result); }) ||
          llvm::any_of(moving, [&](const BufferAccess &later) {
            return conflict(access, later);
          });
      auto other = dyn_cast<gpu::LaunchOp>(op);
      bool isCandidate =
          other && isMergeable(other) && sameShape(other, launch);
      if (isCandidate)
        return isDependency ? nullptr : other;
      if (!isDependency)
        continue;
      if (!other && op->getNumRegions())
        return nullptr;
      dependencies.push_back(op);
      moving.push_back(std::move(access));
      addUses(op);
    }
    return nullptr;
  }

  /// One launch, where `first` is, of both kernels' blocks: the first
  /// `first`'s, then `second`'s.
  gpu::LaunchOp merge(gpu::LaunchOp first, gpu::LaunchOp second) {
    rewriter.setInsertionPoint(first);
    Location loc = rewriter.getFusedLoc({first.getLoc(), second.getLoc()});
    Value firstBlocks = first.getGridSizeX();
    Value secondBlocks = second.getGridSizeX();
    Value blocks =
        arith::AddIOp::create(rewriter, loc, firstBlocks, secondBlocks);
    auto merged = gpu::LaunchOp::create(
        rewriter, loc, blocks, first.getGridSizeY(), first.getGridSizeZ(),
        first.getBlockSizeX(), first.getBlockSizeY(), first.getBlockSizeZ(),
        first.getDynamicSharedMemorySize());
    Block &body = merged.getBody().front();
    rewriter.setInsertionPointToStart(&body);
    Value block = merged.getBlockIds().x;
    Value inFirst = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, block, firstBlocks);
    auto branch = scf::IfOp::create(rewriter, loc, inFirst,
                                    /*withElseRegion=*/true);
    gpu::TerminatorOp::create(rewriter, loc);
    inlineKernel(first, merged, branch.thenBlock(), block, firstBlocks);
    rewriter.setInsertionPointToStart(branch.elseBlock());
    Value shifted = arith::SubIOp::create(rewriter, loc, block, firstBlocks);
    inlineKernel(second, merged, branch.elseBlock(), shifted, secondBlocks);
    return merged;
  }

  /// `kernel`'s body at the end of `dest` (before its terminator) in
  /// `merged`, seeing `block` as its block's x and `blocks` as its grid's.
  void inlineKernel(gpu::LaunchOp kernel, gpu::LaunchOp merged, Block *dest,
                    Value block, Value blocks) {
    rewriter.replaceAllUsesWith(kernel.getBlockIds().x, block);
    rewriter.replaceAllUsesWith(kernel.getGridSize().x, blocks);
    Block &body = kernel.getBody().front();
    rewriter.eraseOp(body.getTerminator());
    rewriter.inlineBlockBefore(&body, dest->getTerminator(),
                               merged.getBody().front().getArguments());
  }

  IRRewriter rewriter;
  DenseMap<Operation *, BufferAccess> accesses;
};

struct TfmGPUMergeLaunchesPass
    : tfm::impl::TfmGPUMergeLaunchesPassBase<TfmGPUMergeLaunchesPass> {
  void runOnOperation() override {
    SetVector<Block *> blocks;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { blocks.insert(launch->getBlock()); });
    LaunchMerger merger(&getContext());
    for (Block *block : blocks)
      merger.run(*block);
  }
};

} // namespace
