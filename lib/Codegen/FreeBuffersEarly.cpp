//===- FreeBuffersEarly.cpp - free each buffer after its last use ----------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMFREEBUFFERSEARLYPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// Ops whose results, other than memrefs, say nothing of the buffer's
/// address: its sizes, or values read from it. The results of any other
/// user may carry the address on (a pointer as an index, a TMA tensor
/// map, a cast to an LLVM struct), and what uses them uses the buffer.
bool resultsHoldNoAddress(Operation *op) {
  return isa<memref::DimOp, memref::LoadOp, vector::LoadOp,
             vector::TransferReadOp>(op);
}

/// The buffer a free of the same block releases, or null: a host
/// `memref.dealloc` of a `memref.alloc`, or a synchronous `gpu.dealloc` of
/// a synchronous `gpu.alloc` (before gpu-async-region chains them).
Value freedBuffer(Operation *op) {
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
    Operation *alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
    return alloc && alloc->getBlock() == op->getBlock() ? dealloc.getMemref()
                                                        : Value();
  }
  auto dealloc = dyn_cast<gpu::DeallocOp>(op);
  if (!dealloc || dealloc.getAsyncToken() ||
      !dealloc.getAsyncDependencies().empty())
    return Value();
  auto alloc = dealloc.getMemref().getDefiningOp<gpu::AllocOp>();
  return alloc && !alloc.getAsyncToken() && alloc->getBlock() == op->getBlock()
             ? dealloc.getMemref()
             : Value();
}

/// Every op that may read or write `buffer`: through the buffer itself, a
/// view of it (what the analysis aliases, and any memref a user makes of
/// it: LLVM 22's analysis does not follow `memref.transpose`), or a value
/// that may carry its address on, and whatever is made of such a value.
SmallVector<Operation *> usersOf(Value buffer,
                                 const BufferViewFlowAnalysis &analysis) {
  SmallVector<Operation *> users;
  SmallVector<Value> worklist{buffer};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    for (Value alias : analysis.resolve(worklist.pop_back_val())) {
      if (!seen.insert(alias).second)
        continue;
      bool address = !isa<BaseMemRefType>(alias.getType());
      for (Operation *user : alias.getUsers()) {
        users.push_back(user);
        bool passesOn = address || !resultsHoldNoAddress(user);
        for (Value result : user->getResults())
          if (passesOn || isa<BaseMemRefType>(result.getType()))
            worklist.push_back(result);
      }
    }
  }
  return users;
}

struct TfmFreeBuffersEarlyPass
    : tfm::impl::TfmFreeBuffersEarlyPassBase<TfmFreeBuffersEarlyPass> {
  void runOnOperation() override {
    BufferViewFlowAnalysis analysis(getOperation());
    SmallVector<std::pair<Operation *, Value>> frees;
    getOperation()->walk([&](Operation *op) {
      if (Value buffer = freedBuffer(op))
        frees.push_back({op, buffer});
    });
    for (auto [free, buffer] : frees) {
      Block *block = free->getBlock();
      Operation *last = buffer.getDefiningOp();
      bool usedElsewhere = false;
      for (Operation *user : usersOf(buffer, analysis)) {
        if (user == free)
          continue;
        Operation *ancestor = block->findAncestorOpInBlock(*user);
        if (!ancestor) {
          usedElsewhere = true; // outside this block: leave the free
          continue;
        }
        if (last->isBeforeInBlock(ancestor))
          last = ancestor;
      }
      if (!usedElsewhere && last->isBeforeInBlock(free))
        free->moveAfter(last);
    }
  }
};

} // namespace
