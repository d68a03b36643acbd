//===- HostMemory.cpp - the memory of host arrays --------------------------===//

#include "tfm/Runtime/HostArray.h"

#include <cstdlib>
#include <new>
#include <sys/mman.h>

using namespace mlir::tfm;

namespace {
constexpr size_t kHugePage = size_t(2) << 20;

size_t roundedToHugePages(size_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}
} // namespace

void *mlir::tfm::detail::allocateHostBytes(size_t bytes) {
  if (bytes < kHugePage) {
    if (void *memory = std::malloc(bytes ? bytes : 1))
      return memory;
    throw std::bad_alloc();
  }
  // A mapping one page larger, trimmed to start on a 2 MiB boundary, then
  // marked before anything touches it.
  size_t size = roundedToHugePages(bytes);
  void *mapping = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED)
    throw std::bad_alloc();
  auto *start = static_cast<char *>(mapping);
  auto *aligned = reinterpret_cast<char *>(
      (reinterpret_cast<uintptr_t>(start) + kHugePage - 1) & ~(kHugePage - 1));
  if (aligned != start)
    munmap(start, aligned - start);
  if (size_t tail = start + size + kHugePage - (aligned + size))
    munmap(aligned + size, tail);
  madvise(aligned, size, MADV_HUGEPAGE); // a hint: 4 KiB pages otherwise
  return aligned;
}

void mlir::tfm::detail::freeHostBytes(void *memory, size_t bytes) {
  if (bytes < kHugePage)
    std::free(memory);
  else
    munmap(memory, roundedToHugePages(bytes));
}
