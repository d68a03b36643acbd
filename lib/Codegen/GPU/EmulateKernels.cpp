//===- EmulateKernels.cpp - GPU kernels as CPU functions for an emulator --===//
//
// Where there is no GPU, the kernels the cuda target generates can still be
// checked: this turns them into CPU functions whose GPU-only operations
// call an emulator (test/Runtime/Inputs/fake-cuda-kernels.c), which runs
// every thread of a block as a fiber behind a stand-in CUDA driver. The
// kernels' own arithmetic, indexing and memory accesses are the ones the
// GPU runs, lowered for the CPU.
//
//===----------------------------------------------------------------------===//

#include "tfm/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AttrTypeSubElements.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMGPUEMULATEKERNELSPASS
#define GEN_PASS_DEF_TFMGPUEMULATEDENTRYPOINTSPASS
#include "tfm/Codegen/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {

/// The emulator's shared memory window: as large as its alignment, so that
/// an address's low bits are its offset in the window (what wgmma's
/// descriptors hold).
constexpr int64_t kSharedBytes = 256 * 1024;
constexpr StringLiteral kSharedName = "tfm_emu_shared";
constexpr StringLiteral kKernelAttr = "tfm.emulated_kernel";

/// `tfm_emu_id`'s argument: which id or size (x, y, z each).
enum IdKind : int32_t {
  kThreadId = 0,
  kBlockId = 3,
  kBlockDim = 6,
  kGridDim = 9,
  kLaneId = 12
};

class Emulation {
public:
  explicit Emulation(ModuleOp module)
      : module(module), b(module.getContext()),
        ptrType(LLVM::LLVMPointerType::get(module.getContext())) {}

  /// Rewrites the GPU-only ops of `function`; fails on one it has no form
  /// for (after reporting it).
  LogicalResult rewrite(gpu::GPUFuncOp function);

private:
  /// A call of the emulator's `name`, declared on first use.
  Value call(Location loc, StringRef name, ValueRange arguments,
             Type result = {});
  Value i32(Location loc, int64_t value) {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  }
  /// The address of `memref[indices]` as a pointer.
  Value elementPointer(Location loc, Value memref, ValueRange indices);
  /// Scratch memory of `bytes` at the function's entry.
  Value scratch(Location loc, int64_t bytes);
  Value asI32(Location loc, Value value);
  /// `values` stored one after another in scratch memory.
  Value storedScratch(Location loc, ValueRange values);
  /// A wgmma (its accumulators `acc`, A's registers or descriptor, B's
  /// descriptor) as the emulator's call; the accumulators after it, as
  /// `resultType`.
  Value warpgroupMma(Location loc, ValueRange acc, ValueRange aRegisters,
                     Value aDescriptor, Value bDescriptor, int32_t flags,
                     Type resultType);

  LogicalResult rewriteOp(Operation *op);
  LogicalResult rewriteHopperOp(Operation *op);

  ModuleOp module;
  OpBuilder b;
  Type ptrType;
  Block *entry = nullptr;
};

Value Emulation::call(Location loc, StringRef name, ValueRange arguments,
                      Type result) {
  auto type = b.getFunctionType(arguments.getTypes(),
                                result ? TypeRange{result} : TypeRange{});
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    func::FuncOp::create(b, loc, name, type).setPrivate();
  }
  auto op = func::CallOp::create(b, loc, name, type.getResults(), arguments);
  return result ? op.getResult(0) : Value();
}

Value Emulation::elementPointer(Location loc, Value memref,
                                ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = metadata.getOffset();
  for (auto [index, stride] : llvm::zip_equal(indices, metadata.getStrides()))
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
  Value bytes =
      arith::MulIOp::create(b, loc, linear,
                            arith::ConstantIndexOp::create(
                                b, loc, type.getElementTypeBitWidth() / 8));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, bytes));
  return LLVM::IntToPtrOp::create(b, loc, ptrType, address);
}

Value Emulation::scratch(Location loc, int64_t bytes) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  Value count = LLVM::ConstantOp::create(b, loc, b.getI64Type(), bytes);
  return LLVM::AllocaOp::create(b, loc, ptrType, b.getI8Type(), count,
                                /*alignment=*/16);
}

Value Emulation::asI32(Location loc, Value value) {
  if (value.getType().isInteger(32))
    return value;
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), value);
}

Value Emulation::storedScratch(Location loc, ValueRange values) {
  int64_t bytes = 0;
  for (Value value : values)
    bytes += value.getType().getIntOrFloatBitWidth() / 8;
  Value base = scratch(loc, bytes);
  int64_t offset = 0;
  for (Value value : values) {
    Value at = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), base,
                                   ArrayRef<LLVM::GEPArg>{int32_t(offset)});
    LLVM::StoreOp::create(b, loc, value, at);
    offset += value.getType().getIntOrFloatBitWidth() / 8;
  }
  return base;
}

Value Emulation::warpgroupMma(Location loc, ValueRange acc,
                              ValueRange aRegisters, Value aDescriptor,
                              Value bDescriptor, int32_t flags,
                              Type resultType) {
  Value sums = storedScratch(loc, acc);
  Value registers = aRegisters.empty()
                        ? LLVM::ZeroOp::create(b, loc, ptrType).getResult()
                        : storedScratch(loc, aRegisters);
  if (!aDescriptor)
    aDescriptor = arith::ConstantIntOp::create(b, loc, 0, 64);
  call(loc, "tfm_emu_wgmma",
       {sums, i32(loc, int64_t(acc.size()) * 2), registers, aDescriptor,
        bDescriptor, i32(loc, flags)});
  return LLVM::LoadOp::create(b, loc, resultType, sums);
}

/// The fields of a struct value, extracted.
static SmallVector<Value> fields(OpBuilder &b, Location loc, Value value) {
  auto type = cast<LLVM::LLVMStructType>(value.getType());
  SmallVector<Value> result;
  for (int64_t i = 0, e = type.getBody().size(); i < e; ++i)
    result.push_back(LLVM::ExtractValueOp::create(b, loc, value, i));
  return result;
}

/// The wgmma that TensorCoreBuilder::warpgroupMma writes as inline PTX (A
/// from registers): its N, element type and B's transpose; nullopt for any
/// other inline assembly.
struct InlineWarpgroupMma {
  int64_t n;
  bool f16, transposeB;
};
static std::optional<InlineWarpgroupMma>
matchInlineWarpgroupMma(LLVM::InlineAsmOp op) {
  StringRef text = op.getAsmString();
  size_t at = text.find("wgmma.mma_async.sync.aligned.m64n");
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest =
      text.drop_front(at + strlen("wgmma.mma_async.sync.aligned.m64n"));
  InlineWarpgroupMma mma;
  if (rest.consumeInteger(10, mma.n) || !rest.consume_front("k16.f32."))
    return std::nullopt;
  mma.f16 = rest.starts_with("f16");
  StringRef tail = rest.rtrim("}\n ").rtrim();
  if (!tail.consume_back(";") || tail.empty())
    return std::nullopt;
  mma.transposeB = tail.back() == '1';
  if (op.getNumOperands() != size_t(mma.n / 2 + 5))
    return std::nullopt;
  return mma;
}

static int32_t dimensionIndex(gpu::Dimension dimension) {
  return static_cast<int32_t>(dimension); // x, y, z: 0, 1, 2
}

LogicalResult Emulation::rewriteOp(Operation *op) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  auto id = [&](int32_t kind) {
    Value value = call(loc, "tfm_emu_id", {i32(loc, kind)}, b.getI64Type());
    op->getResult(0).replaceAllUsesWith(
        arith::IndexCastOp::create(b, loc, b.getIndexType(), value));
    op->erase();
    return success();
  };
  if (auto thread = dyn_cast<gpu::ThreadIdOp>(op))
    return id(kThreadId + dimensionIndex(thread.getDimension()));
  if (auto block = dyn_cast<gpu::BlockIdOp>(op))
    return id(kBlockId + dimensionIndex(block.getDimension()));
  if (auto size = dyn_cast<gpu::BlockDimOp>(op))
    return id(kBlockDim + dimensionIndex(size.getDimension()));
  if (auto size = dyn_cast<gpu::GridDimOp>(op))
    return id(kGridDim + dimensionIndex(size.getDimension()));
  if (isa<gpu::LaneIdOp>(op))
    return id(kLaneId);
  if (isa<gpu::BarrierOp>(op)) {
    call(loc, "tfm_emu_barrier", {});
    op->erase();
    return success();
  }
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
    Type type = shuffle.getValue().getType();
    if (type.getIntOrFloatBitWidth() != 32)
      return op->emitOpError("the emulator shuffles 32-bit values only");
    Value bits =
        arith::BitcastOp::create(b, loc, b.getI32Type(), shuffle.getValue());
    Value result = call(loc, "tfm_emu_shuffle",
                        {bits, shuffle.getOffset(), shuffle.getWidth(),
                         i32(loc, static_cast<int32_t>(shuffle.getMode()))},
                        b.getI64Type());
    Value value = arith::BitcastOp::create(
        b, loc, type, arith::TruncIOp::create(b, loc, b.getI32Type(), result));
    Value valid = arith::TruncIOp::create(
        b, loc, b.getI1Type(),
        arith::ShRUIOp::create(b, loc, result,
                               arith::ConstantIntOp::create(b, loc, 32, 64)));
    shuffle.getShuffleResult().replaceAllUsesWith(value);
    shuffle.getValid().replaceAllUsesWith(valid);
    op->erase();
    return success();
  }
  if (auto shared = dyn_cast<gpu::DynamicSharedMemoryOp>(op)) {
    auto window = MemRefType::get({kSharedBytes}, b.getI8Type());
    if (!module.lookupSymbol(kSharedName)) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      memref::GlobalOp::create(b, loc, kSharedName,
                               /*sym_visibility=*/b.getStringAttr("public"),
                               window, /*initial_value=*/b.getUnitAttr(),
                               /*constant=*/false,
                               b.getI64IntegerAttr(kSharedBytes));
    }
    Value global = memref::GetGlobalOp::create(b, loc, window, kSharedName);
    shared.replaceAllUsesWith(
        memref::CastOp::create(b, loc, shared.getType(), global).getResult());
    op->erase();
    return success();
  }
  if (auto load = dyn_cast<nvgpu::LdMatrixOp>(op)) {
    auto type = cast<VectorType>(load.getType());
    int64_t tiles = load.getNumTiles();
    Value out = scratch(loc, tiles * 4);
    call(loc, "tfm_emu_ldmatrix",
         {elementPointer(loc, load.getSrcMemref(), load.getIndices()),
          i32(loc, tiles), i32(loc, load.getTranspose()), out});
    Value words = LLVM::LoadOp::create(
        b, loc, VectorType::get({tiles}, b.getI32Type()), out);
    Value halves = vector::BitCastOp::create(
        b, loc, VectorType::get({tiles * 2}, type.getElementType()), words);
    load.replaceAllUsesWith(
        vector::ShapeCastOp::create(b, loc, type, halves).getResult());
    op->erase();
    return success();
  }
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
    int64_t elementBytes =
        cast<MemRefType>(copy.getDst().getType()).getElementTypeBitWidth() / 8;
    Value dstBytes = arith::ConstantIntOp::create(
        b, loc, copy.getDstElements().getZExtValue() * elementBytes, 64);
    Value srcBytes = dstBytes;
    if (Value elements = copy.getSrcElements())
      srcBytes = arith::MulIOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), elements),
          arith::ConstantIntOp::create(b, loc, elementBytes, 64));
    call(loc, "tfm_emu_cp_async",
         {elementPointer(loc, copy.getDst(), copy.getDstIndices()),
          elementPointer(loc, copy.getSrc(), copy.getSrcIndices()), dstBytes,
          srcBytes});
    if (!copy.getAsyncToken().use_empty())
      return op->emitOpError("the emulator waits on commit groups: the "
                             "copy's token must have no uses");
    op->erase();
    return success();
  }
  if (isa<NVVM::CpAsyncCommitGroupOp>(op)) {
    call(loc, "tfm_emu_cp_async_commit", {});
    op->erase();
    return success();
  }
  if (auto wait = dyn_cast<NVVM::CpAsyncWaitGroupOp>(op)) {
    call(loc, "tfm_emu_cp_async_wait", {i32(loc, wait.getN())});
    op->erase();
    return success();
  }
  if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
    NVVM::MMAShapeAttr shape = mma.getShapeAttr();
    std::optional<NVVM::MMATypes> aType = mma.getMultiplicandAPtxType();
    bool f16 = aType ? *aType == NVVM::MMATypes::f16
                     : isa<VectorType>(mma.getOperandA().front().getType());
    bool bf16 = aType && *aType == NVVM::MMATypes::bf16;
    if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 ||
        (!f16 && !bf16) || mma.getOperandA().size() != 4 ||
        mma.getOperandB().size() != 2 || mma.getOperandC().size() != 4 ||
        !mma.getOperandC().front().getType().isF32() ||
        mma.getLayoutA() != NVVM::MMALayout::row ||
        mma.getLayoutB() != NVVM::MMALayout::col)
      return op->emitOpError("the emulator has m16n8k16 bf16/f16 products "
                             "with f32 sums only");
    SmallVector<Value> arguments;
    for (Value value : mma.getOperandA())
      arguments.push_back(asI32(loc, value));
    for (Value value : mma.getOperandB())
      arguments.push_back(asI32(loc, value));
    llvm::append_range(arguments, mma.getOperandC());
    Value out = scratch(loc, 16);
    arguments.push_back(i32(loc, f16));
    arguments.push_back(out);
    call(loc, "tfm_emu_mma", arguments);
    mma.getRes().replaceAllUsesWith(
        LLVM::LoadOp::create(b, loc, mma.getRes().getType(), out).getResult());
    op->erase();
    return success();
  }
  return rewriteHopperOp(op);
}

/// sm_90a: warpgroup MMA, barrier objects, TMA loads, named barriers.
LogicalResult Emulation::rewriteHopperOp(Operation *op) {
  Location loc = op->getLoc();
  auto erase = [&] {
    op->erase();
    return success();
  };
  if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
    if (mma.getShape().getM() != 64 || mma.getShape().getK() != 16 ||
        mma.getTypeD() != NVVM::WGMMATypes::f32 ||
        (mma.getTypeA() != NVVM::WGMMATypes::bf16 &&
         mma.getTypeA() != NVVM::WGMMATypes::f16) ||
        mma.getScaleA() != NVVM::WGMMAScaleIn::one ||
        mma.getScaleB() != NVVM::WGMMAScaleIn::one)
      return op->emitOpError("the emulator has m64nNk16 bf16/f16 products "
                             "with f32 sums only");
    int32_t flags = (mma.getTypeA() == NVVM::WGMMATypes::f16) |
                    (mma.getLayoutA() == NVVM::MMALayout::col) << 1 |
                    (mma.getLayoutB() == NVVM::MMALayout::row) << 2 |
                    (mma.getScaleD() == NVVM::WGMMAScaleOut::zero) << 3;
    Value result = warpgroupMma(loc, fields(b, loc, mma.getInouts()), {},
                                mma.getDescriptorA(), mma.getDescriptorB(),
                                flags, mma.getType());
    mma.replaceAllUsesWith(result);
    return erase();
  }
  if (auto inlineAsm = dyn_cast<LLVM::InlineAsmOp>(op)) {
    std::optional<InlineWarpgroupMma> mma = matchInlineWarpgroupMma(inlineAsm);
    if (!mma)
      return op->emitOpError("has no emulated form (inline assembly other "
                             "than a wgmma)");
    ValueRange operands = inlineAsm.getOperands();
    int64_t count = mma->n / 2;
    Value result =
        warpgroupMma(loc, operands.take_front(count), operands.slice(count, 4),
                     Value(), operands.back(), mma->f16 | mma->transposeB << 2,
                     inlineAsm.getResult(0).getType());
    inlineAsm.getResult(0).replaceAllUsesWith(result);
    return erase();
  }
  // The products are done when issued; the proxies and registers are the
  // CPU's.
  if (isa<NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
          NVVM::WgmmaWaitGroupSyncOp, NVVM::FenceProxyOp,
          NVVM::FenceMbarrierInitOp, NVVM::SetMaxRegisterOp>(op))
    return erase();
  if (auto init = dyn_cast<NVVM::MBarrierInitOp>(op)) {
    if (init.getPredicate())
      return op->emitOpError("the emulator has no predicated form");
    call(loc, "tfm_emu_mbarrier_init", {init.getAddr(), init.getCount()});
    return erase();
  }
  if (auto arrive = dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op)) {
    if (arrive.getPredicate() ||
        (arrive.getRes() && !arrive.getRes().use_empty()))
      return op->emitOpError("the emulator has no predicated or stateful form");
    call(loc, "tfm_emu_mbarrier_arrive",
         {arrive.getAddr(), arrive.getTxcount()});
    return erase();
  }
  if (auto arrive = dyn_cast<NVVM::MBarrierArriveOp>(op)) {
    if (arrive.getCount() || (arrive.getRes() && !arrive.getRes().use_empty()))
      return op->emitOpError("the emulator arrives once, without a state");
    call(loc, "tfm_emu_mbarrier_arrive", {arrive.getAddr(), i32(loc, 0)});
    return erase();
  }
  if (auto wait = dyn_cast<NVVM::MBarrierTryWaitOp>(op)) {
    if (!wait.getStateOrPhase().getType().isInteger(32))
      return op->emitOpError("the emulator waits on a phase parity only");
    Value done = call(loc, "tfm_emu_mbarrier_try_wait",
                      {wait.getAddr(), wait.getStateOrPhase()}, b.getI32Type());
    wait.getRes().replaceAllUsesWith(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, done,
                              i32(loc, 0))
            .getResult());
    return erase();
  }
  if (auto load =
          dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op)) {
    if (load.getCoordinates().size() > 5 || !load.getIm2colOffsets().empty() ||
        load.getMulticastMask() || load.getL2CacheHint() || load.getPredicate())
      return op->emitOpError("the emulator has tiled loads of rank 5 or "
                             "less, without multicast, hints or predicates");
    SmallVector<Value> arguments{load.getDstMem(), load.getTmaDescriptor(),
                                 load.getMbar()};
    llvm::append_range(arguments, load.getCoordinates());
    while (arguments.size() < 8)
      arguments.push_back(i32(loc, 0));
    call(loc, "tfm_emu_tma_load", arguments);
    return erase();
  }
  if (auto barrier = dyn_cast<NVVM::BarrierOp>(op)) {
    if (barrier.getReductionOp() || barrier.getRes())
      return op->emitOpError("the emulator has no reducing barrier");
    Value id = barrier.getBarrierId() ? barrier.getBarrierId() : i32(loc, 0);
    // No count: every thread of the block (0).
    Value count = barrier.getNumberOfThreads() ? barrier.getNumberOfThreads()
                                               : i32(loc, 0);
    call(loc, "tfm_emu_named_barrier", {id, count, i32(loc, 1)});
    return erase();
  }
  if (auto arrive = dyn_cast<NVVM::BarrierArriveOp>(op)) {
    Value id = arrive.getBarrierId() ? arrive.getBarrierId() : i32(loc, 0);
    call(loc, "tfm_emu_named_barrier",
         {id, arrive.getNumberOfThreads(), i32(loc, 0)});
    return erase();
  }
  if (auto cast = dyn_cast<LLVM::AddrSpaceCastOp>(op)) {
    // Every pointer is the CPU's now.
    cast.replaceAllUsesWith(cast.getArg());
    return erase();
  }
  if (isa<gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect>(
          op->getDialect()) &&
      !isa<gpu::ReturnOp>(op))
    return op->emitOpError("has no emulated form");
  return success();
}

LogicalResult Emulation::rewrite(gpu::GPUFuncOp function) {
  entry = &function.getBody().front();
  SmallVector<Operation *> ops;
  function.walk([&](Operation *op) {
    if (op != function)
      ops.push_back(op);
  });
  for (Operation *op : ops)
    if (failed(rewriteOp(op)))
      return failure();
  return success();
}

/// GPU memory spaces dropped from every memref and pointer type in
/// `module`.
static void dropMemorySpaces(ModuleOp module) {
  AttrTypeReplacer replacer;
  replacer.addReplacement(
      [](LLVM::LLVMPointerType type) -> std::optional<Type> {
        if (type.getAddressSpace() == 0)
          return std::nullopt;
        return LLVM::LLVMPointerType::get(type.getContext());
      });
  replacer.addReplacement([](MemRefType type) -> std::optional<Type> {
    if (!isa_and_nonnull<gpu::AddressSpaceAttr>(type.getMemorySpace()))
      return std::nullopt;
    return MemRefType::get(type.getShape(), type.getElementType(),
                           type.getLayout());
  });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
}

struct TfmGPUEmulateKernelsPass
    : tfm::impl::TfmGPUEmulateKernelsPassBase<TfmGPUEmulateKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    if (kernelModules.empty()) {
      module.emitError("no gpu.module: emulate a module at the cuda "
                       "target's kernels stage");
      return signalPassFailure();
    }
    for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
      if (!isa<gpu::GPUModuleOp>(op))
        op.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
    dropMemorySpaces(module);

    Emulation emulation(module);
    OpBuilder b(module.getContext());
    for (gpu::GPUModuleOp kernels : kernelModules) {
      for (Operation &op : llvm::make_early_inc_range(*kernels.getBody())) {
        if (isa<memref::GlobalOp>(op)) {
          op.moveBefore(kernels);
          continue;
        }
        auto function = dyn_cast<gpu::GPUFuncOp>(op);
        if (!function) {
          op.emitOpError("is not emulated: a gpu.module holds kernels and "
                         "globals");
          return signalPassFailure();
        }
        if (function.getNumWorkgroupAttributions() ||
            function.getNumPrivateAttributions()) {
          function.emitOpError("is not emulated: memory attributions");
          return signalPassFailure();
        }
        if (failed(emulation.rewrite(function)))
          return signalPassFailure();
        b.setInsertionPoint(kernels);
        auto cpu =
            func::FuncOp::create(b, function.getLoc(), function.getName(),
                                 function.getFunctionType());
        if (function.isKernel())
          cpu->setAttr(kKernelAttr, b.getUnitAttr());
        cpu.getBody().takeBody(function.getBody());
        cpu.walk([&](gpu::ReturnOp ret) {
          b.setInsertionPoint(ret);
          func::ReturnOp::create(b, ret.getLoc(), ret.getOperands());
          ret.erase();
        });
      }
      kernels.erase();
    }
  }
};

struct TfmGPUEmulatedEntryPointsPass
    : tfm::impl::TfmGPUEmulatedEntryPointsPassBase<
          TfmGPUEmulatedEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    auto ptrType = LLVM::LLVMPointerType::get(module.getContext());
    for (auto kernel : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
      if (!kernel->hasAttr(kKernelAttr))
        continue;
      Location loc = kernel.getLoc();
      b.setInsertionPointAfter(kernel);
      auto entry = LLVM::LLVMFuncOp::create(
          b, loc, (kernel.getName() + "_emulated").str(),
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                      {ptrType}));
      Block *body = entry.addEntryBlock(b);
      b.setInsertionPointToStart(body);
      SmallVector<Value> arguments;
      for (auto [index, type] :
           llvm::enumerate(kernel.getFunctionType().getParams())) {
        Value slot = LLVM::GEPOp::create(
            b, loc, ptrType, ptrType, body->getArgument(0),
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(index)});
        Value pointer = LLVM::LoadOp::create(b, loc, ptrType, slot);
        arguments.push_back(LLVM::LoadOp::create(b, loc, type, pointer));
      }
      LLVM::CallOp::create(b, loc, kernel, arguments);
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    }
  }
};

} // namespace
