// The fake driver's kernel emulation (fake-cuda-kernels.c).
#ifndef FAKE_CUDA_KERNELS_H
#define FAKE_CUDA_KERNELS_H

// `<name>_emulated` of the FAKE_CUDA_KERNELS library: the kernel's entry
// point, which takes cuLaunchKernel's parameters; NULL (with a message)
// where there is none, or no library.
typedef void (*EmulatedKernel)(void **params);
void *fakeCudaEmulatedKernel(const char *name);

// Runs `kernel` on every block of `grid`; 0, or 1 after a message.
int fakeCudaRunKernel(void *kernel, const unsigned grid[3],
                      const unsigned block[3], unsigned shared,
                      void **params);

// The fake driver's tensor map, in the 128 bytes of a CUtensorMap
// (cuTensorMapEncodeTiled): what an emulated TMA load reads.
#include <stdint.h>
typedef struct {
  char *address;
  uint64_t sizes[5], strides[4]; // elements, innermost first; bytes
  uint32_t box[5];
  uint8_t rank, elementBytes, swizzle, nanFill;
} FakeTensorMap;
_Static_assert(sizeof(FakeTensorMap) <= 128, "a CUtensorMap's 128 bytes");

#endif // FAKE_CUDA_KERNELS_H
