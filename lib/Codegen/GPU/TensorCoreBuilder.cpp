//===- TensorCoreBuilder.cpp - warp-level tensor-core IR ------------------===//

#include "TensorCoreBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tfm;

void TensorCoreBuilder::copy16Bytes(Value tile, ValueRange tileIndices,
                                    Value source, ValueRange sourceIndices,
                                    Value sourceElements) {
  int64_t elements = 16 / (element.getIntOrFloatBitWidth() / 8);
  nvgpu::DeviceAsyncCopyOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tile,
      tileIndices, source, sourceIndices, b.getIndexAttr(elements),
      sourceElements, /*bypassL1=*/b.getUnitAttr());
}

SmallVector<Value> TensorCoreBuilder::loadMatrices(Value tile,
                                                   ValueRange indices,
                                                   bool transpose) {
  auto type = VectorType::get({4, 2}, element);
  Value matrices = nvgpu::LdMatrixOp::create(b, loc, type, tile, indices,
                                             transpose, /*numTiles=*/4);
  SmallVector<Value> registers;
  for (int64_t i = 0; i < 4; ++i) {
    Value pair = vector::ExtractOp::create(b, loc, matrices, i);
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), pair);
    registers.push_back(vector::ExtractOp::create(b, loc, word, 0));
  }
  return registers;
}

SmallVector<Value> TensorCoreBuilder::mma(ArrayRef<Value> a,
                                          ArrayRef<Value> bRegs,
                                          ArrayRef<Value> c) {
  Type f32Type = b.getF32Type();
  auto result = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32Type, f32Type, f32Type, f32Type});
  NVVM::MMATypes type =
      element.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  // f16 operands are typed as pairs; bf16 ones as 32-bit registers.
  SmallVector<Value> aOps(a), bOps(bRegs);
  if (element.isF16()) {
    auto pairType = VectorType::get({2}, element);
    for (SmallVector<Value> *ops : {&aOps, &bOps})
      for (Value &word : *ops)
        word = LLVM::BitcastOp::create(b, loc, pairType, word);
  }
  Value d = NVVM::MmaOp::create(
      b, loc, result, aOps, bOps, c, ArrayRef<int64_t>{16, 8, 16},
      std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> values;
  for (int64_t i = 0; i < 4; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return values;
}

Value TensorCoreBuilder::pack(Value low, Value high) {
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, b.getF32Type()), ValueRange{low, high});
  Value narrow = arith::TruncFOp::create(b, loc, VectorType::get({2}, element),
                                         pair);
  Value word = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), narrow);
  return vector::ExtractOp::create(b, loc, word, 0);
}

Value TensorCoreBuilder::loadPair(Value memref, ValueRange indices) {
  Value pair = vector::LoadOp::create(b, loc, VectorType::get({2}, element),
                                      memref, indices);
  Value word = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, word, 0);
}

Value TensorCoreBuilder::sharedPointer(Value memref, Value offset) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address =
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), add(base, offset));
  return LLVM::IntToPtrOp::create(
      b, loc,
      LLVM::LLVMPointerType::get(
          b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared)),
      address);
}

void TensorCoreBuilder::onFirstThread(Value tid, function_ref<void()> body) {
  auto first =
      scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, tid, index(0)));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(first.thenBlock());
  body();
}

Value TensorCoreBuilder::splitWarpgroups(Value threadId,
                                         function_ref<void()> producer,
                                         int32_t producerRegisters,
                                         int32_t otherRegisters) {
  Type i32 = b.getI32Type();
  Value warpgroup = arith::IndexCastOp::create(
      b, loc, i32, arith::DivUIOp::create(b, loc, threadId, index(128)));
  warpgroup = gpu::ShuffleOp::create(b, loc, warpgroup, /*offset=*/0,
                                     /*width=*/32, gpu::ShuffleMode::IDX)
                  .getShuffleResult();
  auto roles = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpgroup,
                            arith::ConstantIntOp::create(b, loc, i32, 0)),
      /*withElseRegion=*/true);
  auto setMaxRegisters = [&](int32_t count, NVVM::SetMaxRegisterAction action) {
    if (count)
      NVVM::SetMaxRegisterOp::create(
          b, loc, b.getI32IntegerAttr(count),
          NVVM::SetMaxRegisterActionAttr::get(b.getContext(), action));
  };
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    setMaxRegisters(producerRegisters, NVVM::SetMaxRegisterAction::decrease);
    producer();
  }
  b.setInsertionPointToStart(roles.elseBlock());
  setMaxRegisters(otherRegisters, NVVM::SetMaxRegisterAction::increase);
  return warpgroup;
}

void TensorCoreBuilder::initBarriers(Value barriers,
                                     ArrayRef<int64_t> arrivals) {
  for (auto [i, count] : llvm::enumerate(arrivals))
    NVVM::MBarrierInitOp::create(
        b, loc, barrierPointer(barriers, index(i)),
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), count),
        /*predicate=*/nullptr);
  NVVM::FenceMbarrierInitOp::create(b, loc);
}

void TensorCoreBuilder::arrive(Value barrier) {
  NVVM::MBarrierArriveOp::create(
      b, loc, /*res=*/Type(), barrier, /*count=*/nullptr,
      NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::CTA));
}

void TensorCoreBuilder::arriveExpectingBytes(Value barrier, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(
      b, loc, /*res=*/Type(), barrier,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), bytes),
      NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/nullptr);
}

void TensorCoreBuilder::loadBox(Value map, ArrayRef<Value> coordinates,
                                Value tile, Value offset, Value barrier) {
  SmallVector<Value> at;
  for (Value coordinate : coordinates)
    at.push_back(
        arith::IndexCastOp::create(b, loc, b.getI32Type(), coordinate));
  // The block's own shared memory, addressed as the cluster's (what
  // cp.async.bulk.tensor's shared::cluster destination takes).
  Value destination = LLVM::AddrSpaceCastOp::create(
      b, loc,
      LLVM::LLVMPointerType::get(
          b.getContext(),
          static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster)),
      sharedPointer(tile, offset));
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, destination, map, at, barrier,
      /*im2colOffsets=*/ValueRange{}, /*multicastMask=*/nullptr,
      /*l2CacheHint=*/nullptr,
      NVVM::TMALoadModeAttr::get(b.getContext(), NVVM::TMALoadMode::TILE),
      /*isCTAOnly=*/b.getBoolAttr(false), /*group=*/nullptr,
      /*predicate=*/nullptr);
}

void TensorCoreBuilder::waitForPhase(Value barrier, Value parity) {
  // The suspend-time hint CUTLASS gives, in nanoseconds.
  Value ticks = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 10000000);
  Value phase = arith::IndexCastOp::create(b, loc, b.getI32Type(), parity);
  // try_wait until it says done: a loop of our own, not
  // nvvm.mbarrier.try_wait.parity's, whose inline PTX leaves it with
  // `bra.uni`, which claims every lane of the warp branches alike.
  scf::WhileOp::create(
      b, loc, TypeRange{}, ValueRange{},
      [&](OpBuilder &, Location, ValueRange) {
        Value done = NVVM::MBarrierTryWaitOp::create(b, loc, b.getI1Type(),
                                                     barrier, phase, ticks);
        Value waiting = arith::XOrIOp::create(
            b, loc, done, arith::ConstantIntOp::create(b, loc, 1, 1));
        scf::ConditionOp::create(b, loc, waiting, ValueRange{});
      },
      [&](OpBuilder &, Location, ValueRange) { scf::YieldOp::create(b, loc); });
}

Value TensorCoreBuilder::rowsOn16Bytes(Value memref) {
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  int64_t bytes =
      cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  Value start =
      add(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref),
          mul(metadata.getOffset(), bytes));
  for (Value stride : metadata.getStrides().drop_back())
    start = arith::OrIOp::create(b, loc, start, mul(stride, bytes));
  return cmp(arith::CmpIPredicate::eq, rem(start, 16), index(0));
}

void TensorCoreBuilder::fenceAsyncProxy() {
  NVVM::FenceProxyOp::create(
      b, loc,
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

Value TensorCoreBuilder::sharedDescriptor(Value address, int64_t leadingBytes,
                                          int64_t strideBytes) {
  Type i64 = b.getI64Type();
  auto constant = [&](uint64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, value);
  };
  // Bits 0-13: the address / 16 (shared addresses fit in 18 bits).
  Value start = arith::ShRUIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc, arith::IndexCastUIOp::create(b, loc, i64, address),
          constant(0x3FFFF)),
      constant(4));
  // Bits 16-29 and 32-45: the offsets / 16; 62-63: 128-byte swizzle (1).
  uint64_t fixed = (uint64_t(leadingBytes / 16) << 16) |
                   (uint64_t(strideBytes / 16) << 32) | (uint64_t(1) << 62);
  return arith::OrIOp::create(b, loc, start, constant(fixed));
}

Value mlir::tfm::createTensorMap(OpBuilder &b, Location loc, Value source,
                                 ArrayRef<int64_t> box) {
  MLIRContext *context = b.getContext();
  auto type = cast<MemRefType>(source.getType());
  auto workgroup =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  auto boxType = MemRefType::get(box, type.getElementType(),
                                 MemRefLayoutAttrInterface(), workgroup);
  auto mapType = nvgpu::TensorMapDescriptorType::get(
      context, boxType, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  Value unranked = memref::CastOp::create(
      b, loc,
      UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
      source);
  SmallVector<Value> sizes;
  for (int64_t size : box)
    sizes.push_back(arith::ConstantIndexOp::create(b, loc, size));
  Value map =
      nvgpu::TmaCreateDescriptorOp::create(b, loc, mapType, unranked, sizes);
  return UnrealizedConversionCastOp::create(
             b, loc, LLVM::LLVMPointerType::get(context), map)
      .getResult(0);
}

SmallVector<Value> TensorCoreBuilder::warpgroupMma(ArrayRef<Value> a,
                                                   Value bDescriptor,
                                                   ArrayRef<Value> d,
                                                   bool transposeB) {
  int64_t n = d.size() * 2;
  int64_t count = d.size();
  auto operand = [](int64_t i) { return "$" + std::to_string(i); };
  SmallVector<std::string> outputs, aOperands, constraints;
  for (int64_t i = 0; i < count; ++i) {
    outputs.push_back(operand(i));
    constraints.push_back("=f");
  }
  // The accumulators are read and written: inputs tied to the outputs.
  for (int64_t i = 0; i < count; ++i)
    constraints.push_back(std::to_string(i));
  // Inputs are numbered after the outputs, the tied ones first.
  for (int64_t i = 0; i < 4; ++i) {
    aOperands.push_back(operand(2 * count + i));
    constraints.push_back("r");
  }
  constraints.push_back("l");
  std::string type = element.isBF16() ? "bf16" : "f16";
  // Operands after B: scale-d (1: add to d, as a predicate), the scales of
  // A and B (1), B's transpose.
  std::string text = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
                     "k16.f32." + type + "." + type + " {" +
                     llvm::join(outputs, ", ") + "}, {" +
                     llvm::join(aOperands, ", ") + "}, " +
                     operand(2 * count + 4) + ", p, 1, 1, " +
                     (transposeB ? "1" : "0") + ";";
  std::string body = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" + text + "\n}";
  Type f32Type = b.getF32Type();
  auto result = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(count, f32Type));
  SmallVector<Value> operands(d);
  llvm::append_range(operands, a);
  operands.push_back(bDescriptor);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, result, operands, body, llvm::join(constraints, ","),
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  SmallVector<Value> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(
        LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), i));
  return values;
}
