//===- tfm-safetensors-fuzzer.cpp - fuzz the .safetensors reader -----------===//

#include "tfm/Runtime/HostArray.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto tensors = mlir::tfm::parseSafetensors(bytes, "input");
  if (!tensors) {
    llvm::consumeError(tensors.takeError());
    return 0;
  }
  // Every element of every tensor read is readable.
  double sum = 0;
  for (const auto &[name, array] : *tensors)
    for (int64_t i = 0, e = array.numElements(); i < e; ++i)
      sum += array.at(i);
  (void)sum;
  return 0;
}
