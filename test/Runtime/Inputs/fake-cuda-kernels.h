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

#endif // FAKE_CUDA_KERNELS_H
