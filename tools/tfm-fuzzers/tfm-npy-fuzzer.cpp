//===- tfm-npy-fuzzer.cpp - fuzz the .npy reader ---------------------------===//

#include "tfm/Runtime/HostArray.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<mlir::tfm::HostArray> array = mlir::tfm::parseNpy(bytes, "input");
  if (!array) {
    llvm::consumeError(array.takeError());
    return 0;
  }
  // Every element of what was read is readable.
  double sum = 0;
  for (int64_t i = 0, e = array->numElements(); i < e; ++i)
    sum += array->at(i);
  (void)sum;
  return 0;
}
