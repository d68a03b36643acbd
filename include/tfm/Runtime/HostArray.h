//===- HostArray.h - arrays in host memory, .npy and .safetensors -*- C++ -*-=//
//
// The runtime's array type and its two file formats. Element types use the
// manifest's names (f32, f16, bf16, i32, i64, i1). NumPy has no bf16: such
// arrays travel through .npy files as uint16 bit patterns ('<u2').
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_HOSTARRAY_H
#define TFM_RUNTIME_HOSTARRAY_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::tfm {

struct HostArray {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numElements() const;
  /// "[2, 3] f32"
  std::string describe() const;
  /// Element `i` converted to double (for checks and reports).
  double at(int64_t i) const;
};

/// A zero-filled array of `dtype` and `shape`.
HostArray makeArray(llvm::StringRef dtype, std::vector<int64_t> shape);

/// The whole file at `path`, or "cannot read '<path>': <reason>".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFile(llvm::StringRef path);

llvm::Expected<HostArray> readNpy(llvm::StringRef path);
llvm::Error writeNpy(llvm::StringRef path, const HostArray &array);

/// Every tensor of a .safetensors file, by name.
llvm::Expected<std::map<std::string, HostArray>>
readSafetensors(llvm::StringRef path);

} // namespace mlir::tfm

#endif // TFM_RUNTIME_HOSTARRAY_H
