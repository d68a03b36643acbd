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

namespace detail {
void *allocateHostBytes(size_t bytes);
void freeHostBytes(void *memory, size_t bytes);
} // namespace detail

/// Allocates the bytes of host arrays: those of 2 MiB and more in memory
/// the kernel backs with 2 MiB pages where it can (transparent huge pages,
/// asked for before the first touch; lib/Runtime/HostMemory.cpp). Weights
/// packed once are read in place, block by block, and in 4 KiB pages their
/// TLB misses cost what packing them per call did.
template <typename T> struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <typename U> HostAllocator(const HostAllocator<U> &) {}
  T *allocate(size_t n) {
    return static_cast<T *>(detail::allocateHostBytes(n * sizeof(T)));
  }
  void deallocate(T *memory, size_t n) {
    detail::freeHostBytes(memory, n * sizeof(T));
  }
  template <typename U> bool operator==(const HostAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const HostAllocator<U> &) const {
    return false;
  }
};

using HostBytes = std::vector<uint8_t, HostAllocator<uint8_t>>;

/// An array whose shape has been checked (by makeArray or a reader): its size
/// fits kMaxArrayBytes, so element counts and strides cannot overflow.
struct HostArray {
  std::string dtype;
  std::vector<int64_t> shape;
  HostBytes bytes;

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
