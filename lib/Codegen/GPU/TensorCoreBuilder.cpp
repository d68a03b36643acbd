//===- TensorCoreBuilder.cpp - warp-level tensor-core IR ------------------===//

#include "TensorCoreBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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
