//===- HostArray.h - arrays in host memory, .npy and .safetensors -*- C++ -*-=//
//
// The runtime's array type and its two file formats. Element types use the
// manifest's names (f32, f16, bf16, i32, i64, i1). NumPy has no bf16: such
// arrays travel through .npy files as uint16 bit patterns ('<u2').
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_HOSTARRAY_H
#define TFM_RUNTIME_HOSTARRAY_H

#include "tfm/Runtime/Manifest.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::tfm {

/// An array whose shape has been checked (by makeArray or a reader): its size
/// fits kMaxArrayBytes, so element counts and strides cannot overflow.
struct HostArray {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numElements() const { return bytes.size() / elementSize(dtype); }
  /// "[2, 3] f32"
  std::string describe() const;
  /// Element `i` converted to double (for checks and reports).
  double at(int64_t i) const;
};

/// A zero-filled array of `dtype` and `shape`, or why it cannot exist.
llvm::Expected<HostArray> makeArray(llvm::StringRef dtype,
                                    std::vector<int64_t> shape);

/// The whole file at `path`, or "cannot read '<path>': <reason>".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFile(llvm::StringRef path);

/// A .npy file (format 1.0, 2.0 or 3.0; Fortran order is reordered), read
/// as strictly as NumPy reads it. `parseNpy` reads it from memory; `name`
/// is what errors call it.
llvm::Expected<HostArray> readNpy(llvm::StringRef path);
llvm::Expected<HostArray> parseNpy(llvm::StringRef data, llvm::StringRef name);
llvm::Error writeNpy(llvm::StringRef path, const HostArray &array);

/// Every tensor of a .safetensors file, by name, read as strictly as the
/// format's reference implementation reads it.
llvm::Expected<std::map<std::string, HostArray>>
readSafetensors(llvm::StringRef path);
llvm::Expected<std::map<std::string, HostArray>>
parseSafetensors(llvm::StringRef data, llvm::StringRef name);

/// Every tensor of a checkpoint, and the file it came from.
struct CheckpointTensor {
  HostArray array;
  std::string file;
};

/// The tensors of a checkpoint given as .safetensors files and/or Hugging
/// Face index files (`*.safetensors.index.json`, whose "weight_map" names
/// the shard of every tensor, relative to the index). A tensor found in two
/// files is an error, and so is a shard that lacks a tensor the index maps
/// to it or holds one the index does not list.
llvm::Expected<std::map<std::string, CheckpointTensor>>
readCheckpoint(llvm::ArrayRef<std::string> paths);

} // namespace mlir::tfm

#endif // TFM_RUNTIME_HOSTARRAY_H
