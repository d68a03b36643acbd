//===- ShapeChecks.cpp - verifier helpers for tfm ops ----------------------===//

#include "ShapeChecks.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

std::string tfm::detail::formatSize(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string result = "[";
  llvm::interleave(
      shape, [&](int64_t size) { result += tfm::detail::formatSize(size); },
      [&] { result += ", "; });
  return result + "]";
}

LogicalResult tfm::detail::checkRank(Operation *op, StringRef name, Value value,
                                int64_t rank, StringRef layout) {
  int64_t actual = tensorType(value).getRank();
  if (actual == rank)
    return success();
  return op->emitOpError() << "expected " << name << " to have rank " << rank
                           << " " << layout << ", got rank " << actual;
}

LogicalResult tfm::detail::checkSize(Operation *op, StringRef what, int64_t actual,
                                StringRef reference, int64_t expected) {
  if (areCompatible(actual, expected))
    return success();
  return op->emitOpError() << "expected " << what << " (" << actual
                           << ") to match " << reference << " (" << expected
                           << ")";
}

LogicalResult tfm::detail::checkStatic(Operation *op, StringRef what,
                                  int64_t size) {
  if (!ShapedType::isDynamic(size))
    return success();
  return op->emitOpError() << "expected " << what << " to be static";
}

LogicalResult tfm::detail::checkElementType(Operation *op, StringRef name,
                                       Value value, StringRef reference,
                                       Type expected) {
  Type actual = tensorType(value).getElementType();
  if (actual == expected)
    return success();
  return op->emitOpError() << "expected " << name << " element type ("
                           << actual << ") to match " << reference
                           << " element type (" << expected << ")";
}

LogicalResult tfm::detail::checkResult(Operation *op, ArrayRef<int64_t> shape,
                                  StringRef reference, Type elementType) {
  RankedTensorType result = tensorType(op->getResult(0));
  if (failed(checkElementType(op, "result", op->getResult(0), reference,
                              elementType)))
    return failure();
  bool compatible =
      result.getRank() == static_cast<int64_t>(shape.size()) &&
      llvm::all_of(llvm::zip(result.getShape(), shape), [](auto pair) {
        return areCompatible(std::get<0>(pair), std::get<1>(pair));
      });
  if (compatible)
    return success();
  return op->emitOpError() << "expected result shape "
                           << formatShape(result.getShape()) << " to match "
                           << formatShape(shape);
}

LogicalResult tfm::detail::checkBroadcastable(Operation *op, StringRef name,
                                         Value value, ArrayRef<int64_t> target,
                                         ArrayRef<StringRef> targetNames) {
  ArrayRef<int64_t> shape = tensorType(value).getShape();
  int64_t rank = shape.size(), targetRank = target.size();
  if (rank > targetRank)
    return op->emitOpError() << "expected " << name << " rank (" << rank
                             << ") to be at most " << targetRank;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t size = shape[i], targetIndex = targetRank - rank + i;
    if (size == 1 || areCompatible(size, target[targetIndex]))
      continue;
    return op->emitOpError()
           << "expected " << name << " dim " << i << " (" << size
           << ") to be 1 or match " << targetNames[targetIndex] << " ("
           << target[targetIndex] << ")";
  }
  return success();
}

LogicalResult tfm::detail::checkNonNegative(Operation *op, StringRef name,
                                       double value) {
  if (!(value >= 0))
    return op->emitOpError() << "expected " << name
                             << " to be non-negative, got " << value;
  if (std::isinf(value))
    return op->emitOpError() << "expected " << name << " to be finite";
  return success();
}

LogicalResult tfm::detail::checkPositive(Operation *op, StringRef name,
                                    double value) {
  if (!(value > 0))
    return op->emitOpError() << "expected " << name << " to be positive, got "
                             << value;
  if (std::isinf(value))
    return op->emitOpError() << "expected " << name << " to be finite";
  return success();
}

FailureOr<int64_t> tfm::detail::checkProjectionWeight(Operation *op, StringRef name,
                                                 Value weight,
                                                 int64_t inFeatures,
                                                 StringRef inName,
                                                 Type elementType) {
  if (failed(checkRank(op, name, weight, 2, "[out, in]")) ||
      failed(checkElementType(op, name, weight, "input", elementType)))
    return failure();
  ArrayRef<int64_t> shape = tensorType(weight).getShape();
  if (failed(checkSize(op, llvm::formatv("{0} input size", name).str(),
                       shape[1], inName, inFeatures)))
    return failure();
  return shape[0];
}

LogicalResult tfm::detail::checkVector(Operation *op, StringRef name, Value vector,
                                  int64_t size, StringRef sizeName,
                                  Type elementType) {
  if (failed(checkRank(op, name, vector, 1, "[features]")) ||
      failed(checkElementType(op, name, vector, "input", elementType)))
    return failure();
  return checkSize(op, llvm::formatv("{0} size", name).str(),
                   tensorType(vector).getDimSize(0), sizeName, size);
}

LogicalResult tfm::detail::checkFFNWeights(Operation *op, FFNKind kind,
                                      int64_t dModel, Value gate, Value up,
                                      Value upBias, Value down, Value downBias,
                                      Type elementType) {
  StringRef kindName = stringifyFFNKind(kind);
  if (isGatedFFN(kind)) {
    if (!gate)
      return op->emitOpError() << "expected a gate weight for gated kind '"
                               << kindName << "'";
    if (upBias || downBias)
      return op->emitOpError() << "expected no biases for gated kind '"
                               << kindName << "'";
  } else if (gate) {
    return op->emitOpError() << "expected no gate weight for plain kind '"
                             << kindName << "'";
  }

  FailureOr<int64_t> dFF = checkProjectionWeight(op, "up weight", up, dModel,
                                                 "model width", elementType);
  if (failed(dFF))
    return failure();
  if (gate) {
    FailureOr<int64_t> gateRows = checkProjectionWeight(
        op, "gate weight", gate, dModel, "model width", elementType);
    if (failed(gateRows) || failed(checkSize(op, "gate weight rows", *gateRows,
                                             "up weight rows", *dFF)))
      return failure();
  }
  FailureOr<int64_t> downRows = checkProjectionWeight(
      op, "down weight", down, *dFF, "hidden width", elementType);
  if (failed(downRows) ||
      failed(checkSize(op, "down weight rows", *downRows, "model width",
                       dModel)))
    return failure();
  if (upBias &&
      failed(checkVector(op, "up bias", upBias, *dFF, "hidden width",
                         elementType)))
    return failure();
  if (downBias && failed(checkVector(op, "down bias", downBias, dModel,
                                     "model width", elementType)))
    return failure();
  return success();
}
