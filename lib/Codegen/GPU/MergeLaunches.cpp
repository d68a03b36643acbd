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

#include "ViewedBuffer.h"

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
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

/// The buffers an op (with what it holds) reads and writes, as the values
/// they are views of; a kernel's own shared and private memory left out.
/// `unknown` when some access could not be bounded.
struct Access {
  SmallVector<Value> reads, writes;
  bool unknown = false;
};

/// Whether `buffer` is memory of a block's or a thread's own: workgroup
/// or private memory, or an alloca in a kernel.
bool isKernelMemory(Value buffer) {
  if (auto alloca = buffer.getDefiningOp<memref::AllocaOp>())
    return alloca->getParentOfType<gpu::LaunchOp>() != nullptr;
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      cast<MemRefType>(buffer.getType()).getMemorySpace());
  return space && space.getValue() != gpu::AddressSpace::Global;
}

void record(Access &access, Value value, bool write) {
  Value buffer = viewedBuffer(value);
  if (!isa<MemRefType>(buffer.getType())) {
    access.unknown = true;
    return;
  }
  if (isKernelMemory(buffer))
    return;
  (write ? access.writes : access.reads).push_back(buffer);
}

/// Records `op`'s memref operands as read and, unless `readOnly`, written:
/// in a kernel, memory is reached through operands only.
void recordOperands(Access &access, Operation *op, bool readOnly) {
  for (Value operand : op->getOperands()) {
    if (isa<MemRefType>(operand.getType())) {
      record(access, operand, /*write=*/false);
      if (!readOnly)
        record(access, operand, /*write=*/true);
    }
  }
}

/// Whether `type` reaches memory by an address the buffers above do not
/// name: a pointer, a TMA tensor map.
bool isAddress(Type type) {
  return isa<LLVM::LLVMPointerType, nvgpu::TensorMapDescriptorType>(type);
}

Access accessOf(Operation *root) {
  Access access;
  root->walk([&](Operation *op) {
    if (llvm::any_of(op->getOperandTypes(), isAddress)) {
      access.unknown = true;
      return;
    }
    // On the host, an op that does not say what it touches may touch
    // anything; in a kernel, what its operands point to (a barrier or an
    // async-copy group's wait touches nothing).
    bool inKernel = op->getParentOfType<gpu::LaunchOp>() != nullptr;
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (MemoryEffects::EffectInstance &instance : instances) {
        if (isa<MemoryEffects::Allocate>(instance.getEffect()))
          continue;
        // A free is a write: nothing may move across it.
        bool read = isa<MemoryEffects::Read>(instance.getEffect());
        if (instance.getValue())
          record(access, instance.getValue(), !read);
        else if (inKernel)
          recordOperands(access, op, read);
        else
          access.unknown = true;
      }
      return;
    }
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return;
    if (inKernel)
      recordOperands(access, op, /*readOnly=*/false);
    else
      access.unknown = true;
  });
  return access;
}

/// What an Access buffer is: the result of an allocation, an argument of
/// a function, a global, or something else (a value of a view the search
/// above does not see through, a loop's argument).
enum class BufferKind { Allocation, Argument, Global, Other };

BufferKind kindOf(Value buffer) {
  if (auto argument = dyn_cast<BlockArgument>(buffer))
    return isa<func::FuncOp>(argument.getOwner()->getParentOp()) &&
                   argument.getOwner()->isEntryBlock()
               ? BufferKind::Argument
               : BufferKind::Other;
  Operation *op = buffer.getDefiningOp();
  if (isa<memref::GetGlobalOp>(op))
    return BufferKind::Global;
  if (hasEffect<MemoryEffects::Allocate>(op, buffer))
    return BufferKind::Allocation;
  return BufferKind::Other;
}

/// Whether `argument` is an argument of an entry point: a function
/// tfm-expose-entry-points made, which C calls through its wrapper.
bool isEntryPointArgument(Value argument) {
  return cast<BlockArgument>(argument).getOwner()->getParentOp()->hasAttr(
      LLVM::LLVMDialect::getEmitCWrapperAttrName());
}

/// Whether two of Access's buffers may be the same memory. An allocation
/// is none of the arguments, globals and other allocations; two arguments
/// of an entry point are different memory where one is written
/// (docs/DESIGN.md, entry-point ABI).
bool mayAlias(Value a, Value b) {
  if (a == b)
    return true;
  BufferKind kindA = kindOf(a), kindB = kindOf(b);
  if (kindA == BufferKind::Other || kindB == BufferKind::Other)
    return true;
  if (kindA == BufferKind::Allocation || kindB == BufferKind::Allocation)
    return false;
  if (kindA == BufferKind::Global && kindB == BufferKind::Global)
    return a.getDefiningOp<memref::GetGlobalOp>().getName() ==
           b.getDefiningOp<memref::GetGlobalOp>().getName();
  if (kindA == BufferKind::Argument && kindB == BufferKind::Argument)
    return !isEntryPointArgument(a) || !isEntryPointArgument(b);
  return true;
}

bool anyAlias(ArrayRef<Value> as, ArrayRef<Value> bs) {
  return llvm::any_of(as, [&](Value a) {
    return llvm::any_of(bs, [&](Value b) { return mayAlias(a, b); });
  });
}

/// Whether the two may not run in either order, or at once.
bool conflict(const Access &a, const Access &b) {
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
  Access cachedAccess(Operation *op) {
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
    SmallVector<Access> moving = {cachedAccess(launch)};
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
      Access access = cachedAccess(op);
      if (access.unknown)
        return nullptr;
      bool isDependency =
          llvm::any_of(op->getResults(),
                       [&](Value result) { return used.contains(result); }) ||
          llvm::any_of(moving, [&](const Access &later) {
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
  DenseMap<Operation *, Access> accesses;
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
