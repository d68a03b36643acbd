//===- ExposeEntryPoints.cpp - the C-callable entry-point ABI --------------===//

#include "tfm/ABI/Passes.h"

#include "tfm/ABI/Attributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMEXPOSEENTRYPOINTSPASS
#include "tfm/ABI/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

/// The identity-layout memref with the shape and element type of `type`.
static MemRefType bufferTypeFor(RankedTensorType type) {
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// (tensor inputs) -> (tensor results) becomes (memref inputs, memref
/// outputs) -> i32 status: inputs are wrapped with restrict to_tensor,
/// results are materialized into the output buffers.
static LogicalResult exposeEntryPoint(func::FuncOp func) {
  FunctionType type = func.getFunctionType();
  for (Type input : type.getInputs())
    if (!isa<RankedTensorType>(input))
      return func.emitError() << "entry point argument of type " << input
                              << " is not a ranked tensor";
  for (Type result : type.getResults())
    if (!isa<RankedTensorType>(result))
      return func.emitError() << "entry point result of type " << result
                              << " is not a ranked tensor";

  // Results written back into an input's buffer (tfm.updates): that input
  // is writable, and the result gets no output buffer of its own.
  unsigned numInputs = func.getNumArguments();
  SmallVector<std::optional<unsigned>> updates(type.getNumResults());
  llvm::SmallBitVector updated(numInputs);
  for (unsigned i = 0; i < type.getNumResults(); ++i) {
    auto input = func.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttr);
    if (!input)
      continue;
    uint64_t index = input.getValue().getZExtValue();
    if (index >= numInputs || type.getInput(index) != type.getResult(i) ||
        updated.test(index))
      return func.emitError()
             << "result " << i << " updates input " << index
             << ", which must exist, have the result's type and be updated "
                "by no other result";
    updated.set(index);
    updates[i] = index;
  }

  Block &entry = func.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  for (BlockArgument argument : entry.getArguments()) {
    auto tensorType = cast<RankedTensorType>(argument.getType());
    argument.setType(bufferTypeFor(tensorType));
    auto toTensor = bufferization::ToTensorOp::create(
        builder, func.getLoc(), tensorType, argument, /*restrict=*/true,
        /*writable=*/updated.test(argument.getArgNumber()));
    argument.replaceAllUsesExcept(toTensor, toTensor);
  }

  func->setAttr(kInputCountAttr,
                IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                                 numInputs));

  // One output buffer per other result, appended after the inputs; it keeps
  // the result's attributes (its `tfm.name`).
  SmallVector<Value> outputs;
  for (auto [i, result] : llvm::enumerate(type.getResults())) {
    if (updates[i]) {
      outputs.push_back(func.getArgument(*updates[i]));
      continue;
    }
    unsigned position = func.getNumArguments();
    if (failed(func.insertArgument(
            position, bufferTypeFor(cast<RankedTensorType>(result)),
            func.getResultAttrDict(i), func.getLoc())))
      return failure();
    outputs.push_back(func.getArgument(position));
  }

  for (Block &block : func.getBody()) {
    auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
    if (!ret)
      continue;
    OpBuilder atReturn(ret);
    for (auto [value, output] : llvm::zip(ret.getOperands(), outputs))
      bufferization::MaterializeInDestinationOp::create(
          atReturn, ret.getLoc(), TypeRange(), value, output,
          /*restrict=*/true, /*writable=*/true);
    // Status 0: success (tfm-insert-runtime-checks adds failure codes).
    Value ok = arith::ConstantIntOp::create(atReturn, ret.getLoc(), 0, 32);
    func::ReturnOp::create(atReturn, ret.getLoc(), ok);
    ret.erase();
  }

  if (failed(func.eraseResults(llvm::BitVector(type.getNumResults(), true))))
    return failure();
  func.setFunctionType(
      FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                        {IntegerType::get(func.getContext(), 32)}));
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(func.getContext()));
  return success();
}

namespace {
struct TfmExposeEntryPointsPass
    : tfm::impl::TfmExposeEntryPointsPassBase<TfmExposeEntryPointsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      if (failed(exposeEntryPoint(func)))
        return signalPassFailure();
    }
  }
};
} // namespace
