//===- BufferCache.cpp - the heap buffers of a compiled CPU model ----------===//
//
// Every CPU library calls these two functions (finalize-memref-to-llvm's
// "generic" allocation functions) for the buffers a forward pass allocates.
// glibc maps each block above its mmap threshold (128 KiB) afresh and unmaps
// it on free, so every call of a model faulted its activations in again:
// a fifth of a forward's time was the kernel zeroing pages. Freed large
// blocks are kept here instead and handed to the next request they can
// hold; a forward asks for the same sizes on every call (and layer after
// layer within one), so from the second call on nothing is mapped.
//
// What stays cached is bounded: at most kSlots blocks, and a request that
// no cached block can hold first releases the largest cached block smaller
// than itself (the one it most likely replaces: the same buffer of a call
// with more tokens). Small blocks go straight to malloc, whose free lists
// already reuse them.
//
// No C++ runtime: these objects are linked into libraries that need only
// libc, libm and libomp.
//
//===----------------------------------------------------------------------===//

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

namespace {

/// Blocks of this size and above are cached (glibc's default mmap
/// threshold: smaller ones never reach the kernel).
constexpr size_t kCachedBytes = size_t(128) << 10;
/// Cached blocks kept at most.
constexpr int kSlots = 64;
/// Every block starts with a header of this size, so the buffer after it
/// keeps the block's 64-byte alignment (one AVX-512 register, a cache line).
constexpr size_t kHeaderBytes = 64;
constexpr size_t kPageBytes = 4096;

struct Header {
  size_t capacity; // bytes after the header
};

struct Cache {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  char *blocks[kSlots] = {}; // block starts (headers); null: free slot
};

Cache cache;

char *newBlock(size_t capacity) {
  void *block = nullptr;
  if (posix_memalign(&block, kHeaderBytes, kHeaderBytes + capacity) != 0)
    return nullptr;
  reinterpret_cast<Header *>(block)->capacity = capacity;
  return static_cast<char *>(block);
}

size_t capacityOf(const char *block) {
  return reinterpret_cast<const Header *>(block)->capacity;
}

/// A cached block that holds `bytes` (the smallest such), taken out of the
/// cache; else null, after releasing the largest cached block smaller than
/// `bytes`. Called with the lock held.
char *takeCached(size_t bytes) {
  int fit = -1, smaller = -1;
  for (int i = 0; i < kSlots; ++i) {
    char *block = cache.blocks[i];
    if (!block)
      continue;
    size_t capacity = capacityOf(block);
    if (capacity >= bytes) {
      if (fit < 0 || capacity < capacityOf(cache.blocks[fit]))
        fit = i;
    } else if (smaller < 0 || capacity > capacityOf(cache.blocks[smaller])) {
      smaller = i;
    }
  }
  if (fit >= 0) {
    char *block = cache.blocks[fit];
    cache.blocks[fit] = nullptr;
    return block;
  }
  if (smaller >= 0) {
    free(cache.blocks[smaller]);
    cache.blocks[smaller] = nullptr;
  }
  return nullptr;
}

/// Keeps `block` for a later request, or frees it when every slot is
/// taken. Called with the lock held.
void keep(char *block) {
  for (char *&slot : cache.blocks)
    if (!slot) {
      slot = block;
      return;
    }
  free(block);
}

/// Returns the cached blocks to the heap when the library is unloaded.
__attribute__((destructor)) void releaseCache() {
  for (char *&block : cache.blocks) {
    free(block);
    block = nullptr;
  }
}

} // namespace

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  if (bytes < kCachedBytes) {
    char *block = newBlock(bytes);
    return block ? block + kHeaderBytes : nullptr;
  }
  size_t capacity = (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  pthread_mutex_lock(&cache.lock);
  char *block = takeCached(capacity);
  pthread_mutex_unlock(&cache.lock);
  if (!block)
    block = newBlock(capacity);
  return block ? block + kHeaderBytes : nullptr;
}

void _mlir_memref_to_llvm_free(void *buffer) {
  if (!buffer)
    return;
  char *block = static_cast<char *>(buffer) - kHeaderBytes;
  if (capacityOf(block) < kCachedBytes) {
    free(block);
    return;
  }
  pthread_mutex_lock(&cache.lock);
  keep(block);
  pthread_mutex_unlock(&cache.lock);
}

} // extern "C"
