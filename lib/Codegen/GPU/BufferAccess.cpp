//===- BufferAccess.cpp - the buffers a host op or kernel touches ---------===//

#include "BufferAccess.h"
#include "ViewedBuffer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

void record(BufferAccess &access, Value value, bool write) {
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
void recordOperands(BufferAccess &access, Operation *op, bool readOnly) {
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

/// What a BufferAccess buffer is: the result of an allocation, an argument of
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

} // namespace

bool mlir::tfm::isKernelMemory(Value buffer) {
  if (auto alloca = buffer.getDefiningOp<memref::AllocaOp>())
    return alloca->getParentOfType<gpu::LaunchOp>() != nullptr;
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      cast<MemRefType>(buffer.getType()).getMemorySpace());
  return space && space.getValue() != gpu::AddressSpace::Global;
}

BufferAccess mlir::tfm::accessOf(Operation *root) {
  BufferAccess access;
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

bool mlir::tfm::mayAlias(Value a, Value b) {
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
