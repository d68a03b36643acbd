// Drives the CPU libraries' buffer cache (lib/Runtime/CPU/BufferCache.cpp)
// directly, through the two functions compiled code calls.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void *_mlir_memref_to_llvm_alloc(size_t bytes);
void _mlir_memref_to_llvm_free(void *buffer);

static const char *yes(int value) { return value ? "yes" : "no"; }

int main(void) {
  const size_t mib = (size_t)1 << 20;
  char *large = _mlir_memref_to_llvm_alloc(3 * mib);
  memset(large, 1, 3 * mib);
  printf("large aligned to 64: %s\n", yes((uintptr_t)large % 64 == 0));
  _mlir_memref_to_llvm_free(large);
  // The same request, and a smaller one, reuse the freed block.
  char *again = _mlir_memref_to_llvm_alloc(3 * mib);
  printf("same size reused: %s\n", yes(again == large));
  _mlir_memref_to_llvm_free(again);
  char *smaller = _mlir_memref_to_llvm_alloc(2 * mib);
  printf("smaller request reused: %s\n", yes(smaller == large));
  // While it is taken, a second request gets a block of its own.
  char *other = _mlir_memref_to_llvm_alloc(2 * mib);
  printf("taken block not shared: %s\n", yes(other != smaller));
  _mlir_memref_to_llvm_free(smaller);
  _mlir_memref_to_llvm_free(other);
  // A request larger than every cached block releases the largest smaller
  // one (3 MiB) and gets a new block; the 2 MiB block stays.
  char *larger = _mlir_memref_to_llvm_alloc(8 * mib);
  printf("larger request gets a new block: %s\n",
         yes(larger != large && larger != other));
  char *kept = _mlir_memref_to_llvm_alloc(2 * mib);
  printf("smaller block kept: %s\n", yes(kept == other));
  _mlir_memref_to_llvm_free(kept);
  _mlir_memref_to_llvm_free(larger);
  // Small blocks go to malloc; all of them 64-byte aligned and writable.
  char *small = _mlir_memref_to_llvm_alloc(100);
  memset(small, 2, 100);
  printf("small aligned to 64: %s\n", yes((uintptr_t)small % 64 == 0));
  _mlir_memref_to_llvm_free(small);
  _mlir_memref_to_llvm_free(NULL);
  // More blocks than the cache keeps: the rest are freed, nothing breaks.
  char *many[100];
  for (int i = 0; i < 100; ++i)
    many[i] = _mlir_memref_to_llvm_alloc(mib + (size_t)i * 4096);
  for (int i = 0; i < 100; ++i)
    _mlir_memref_to_llvm_free(many[i]);
  printf("done\n");
  return 0;
}
