//===- MemrefCopy.cpp - copies between strided memrefs ---------------------===//
//
// finalize-memref-to-llvm lowers a memref.copy whose operands are not both
// contiguous into a call of `memrefCopy` (the C runner utils' name and
// signature), e.g. when bufferization makes a contiguous copy of the last
// position's rows of a [B, S, D] tensor. Debian ships that function only in
// libmlir_c_runner_utils.so, which a library must not need at run time, so
// every CPU library links this one instead (hidden, no C++ runtime).
//
//===----------------------------------------------------------------------===//

#include <stdint.h>
#include <string.h>

namespace {

/// MLIR's ranked memref descriptor, with `sizes` followed by `strides`.
struct StridedDescriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[]; // sizes[rank], then strides[rank]
};

/// MLIR's unranked memref descriptor.
struct UnrankedDescriptor {
  int64_t rank;
  StridedDescriptor *ranked;
};

/// Copies the elements of dims [dim, rank) at element offsets `from`/`to`.
void copyDims(int64_t elementBytes, int64_t rank, int64_t dim,
              const StridedDescriptor *source, int64_t from,
              const StridedDescriptor *dest, int64_t to) {
  const int64_t *sizes = source->sizesAndStrides;
  const int64_t *sourceStrides = source->sizesAndStrides + rank;
  const int64_t *destStrides = dest->sizesAndStrides + rank;
  if (dim == rank) {
    memcpy(dest->aligned + to * elementBytes,
           source->aligned + from * elementBytes, elementBytes);
    return;
  }
  // Innermost dim contiguous on both sides: one memcpy for the row.
  if (dim == rank - 1 && sourceStrides[dim] == 1 && destStrides[dim] == 1) {
    memcpy(dest->aligned + to * elementBytes,
           source->aligned + from * elementBytes, sizes[dim] * elementBytes);
    return;
  }
  for (int64_t i = 0; i < sizes[dim]; ++i)
    copyDims(elementBytes, rank, dim + 1, source,
             from + i * sourceStrides[dim], dest, to + i * destStrides[dim]);
}

} // namespace

extern "C" {

/// dest = source, both of the same rank and sizes (the verifier of
/// memref.copy guarantees it).
void memrefCopy(int64_t elementBytes, UnrankedDescriptor *source,
                UnrankedDescriptor *dest) {
  int64_t rank = source->rank;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (source->ranked->sizesAndStrides[dim] == 0)
      return;
  copyDims(elementBytes, rank, 0, source->ranked, source->ranked->offset,
           dest->ranked, dest->ranked->offset);
}

} // extern "C"
