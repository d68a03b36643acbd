// A stand-in for libcuda.so.1 on machines without a GPU, for tests of
// what the host side of a --target=cuda library asks of the driver: one
// device whose memory is host memory, kernels that launch and do nothing,
// and cuTensorMapEncodeTiled printing what it was given (to stderr,
// innermost dimension first, as the driver takes it). With
// FAKE_CUDA_COUNT_MAPS set it prints nothing per map, and at exit how many
// maps it encoded and how many blocks of a map's size (128 bytes) were
// freed. The device has FAKE_CUDA_MULTIPROCESSORS multiprocessors (default
// 132); with FAKE_CUDA_PRINT_LAUNCHES set, each launch prints its grid and
// block sizes, and each stream creation, synchronization and destruction
// a line. With
// FAKE_CUDA_PRINT_MEMORY set, it prints at exit the most device memory
// that was allocated at once; an allocation that would hold more than
// FAKE_CUDA_MEMORY_LIMIT bytes at once fails, out of memory. Kernels do not run: FAKE_CUDA_ALLOC_FILL=1
// fills new device memory with ones (bytes of 1), which a call's runtime
// checks then read back as passed. With FAKE_CUDA_KERNELS naming a library
// of emulated kernels, kernels run on the CPU (fake-cuda-kernels.c).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cuda-kernels.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

CUresult cuInit(unsigned flags) {
  (void)flags;
  return 0;
}
enum { kOutOfMemory = 2 };
CUresult cuGetErrorName(CUresult result, const char **name) {
  *name = result == kOutOfMemory ? "CUDA_ERROR_OUT_OF_MEMORY" : "FAKE_ERROR";
  return 0;
}
CUresult cuGetErrorString(CUresult result, const char **text) {
  *text = result == kOutOfMemory ? "out of memory"
                                 : "an error of the fake driver";
  return 0;
}
CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return 0;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  enum { kMultiprocessorCount = 16 };
  const char *multiprocessors = getenv("FAKE_CUDA_MULTIPROCESSORS");
  *value = attribute == kMultiprocessorCount && multiprocessors
               ? atoi(multiprocessors)
               : attribute == kMultiprocessorCount ? 132 : 0;
  return 0;
}
// Handles the runtime only passes back: any distinct non-null pointers.
static char handle[4];
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  *context = &handle[0];
  return 0;
}
CUresult cuCtxSetCurrent(void *context) {
  (void)context;
  return 0;
}
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned count,
                            int *options, void **values) {
  (void)image, (void)count, (void)options, (void)values;
  *module = &handle[1];
  return 0;
}
CUresult cuModuleUnload(void *module) {
  (void)module;
  return 0;
}
enum { kNotFound = 500, kLaunchFailed = 719 };
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  (void)module;
  *function = &handle[2];
  if (!getenv("FAKE_CUDA_KERNELS"))
    return 0;
  *function = fakeCudaEmulatedKernel(name);
  return *function ? 0 : kNotFound;
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  (void)function, (void)attribute, (void)value;
  return 0;
}
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  (void)stream, (void)extra;
  if (getenv("FAKE_CUDA_PRINT_LAUNCHES"))
    fprintf(stderr, "cuLaunchKernel: grid %ux%ux%u block %ux%ux%u\n", gx, gy,
            gz, bx, by, bz);
  if (function == &handle[2])
    return 0;
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return fakeCudaRunKernel(function, grid, block, shared, params)
             ? kLaunchFailed
             : 0;
}
CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  if (getenv("FAKE_CUDA_PRINT_LAUNCHES"))
    fprintf(stderr, "cuStreamCreate\n");
  *stream = &handle[3];
  return 0;
}
CUresult cuStreamDestroy_v2(void *stream) {
  (void)stream;
  if (getenv("FAKE_CUDA_PRINT_LAUNCHES"))
    fprintf(stderr, "cuStreamDestroy\n");
  return 0;
}
CUresult cuStreamSynchronize(void *stream) {
  (void)stream;
  if (getenv("FAKE_CUDA_PRINT_LAUNCHES"))
    fprintf(stderr, "cuStreamSynchronize\n");
  return 0;
}
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  (void)stream, (void)event, (void)flags;
  return 0;
}
CUresult cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  *event = malloc(1);
  return 0;
}
CUresult cuEventDestroy_v2(void *event) {
  free(event);
  return 0;
}
CUresult cuEventRecord(void *event, void *stream) {
  (void)event, (void)stream;
  return 0;
}
CUresult cuEventSynchronize(void *event) {
  (void)event;
  return 0;
}
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  (void)start, (void)end;
  *ms = 0;
  return 0;
}
// Each block's size sits in the 16 bytes before it (blocks stay 16-byte
// aligned, as TMA needs).
enum { kHeader = 16, kMapBytes = 128 };
static unsigned long long mapsEncoded, mapBlocksFreed;
static unsigned long long bytesLive, bytesPeak;

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  const char *limit = getenv("FAKE_CUDA_MEMORY_LIMIT");
  if (limit && bytesLive + bytes > strtoull(limit, NULL, 10))
    return kOutOfMemory;
  char *block = calloc(1, kHeader + bytes);
  const char *fill = getenv("FAKE_CUDA_ALLOC_FILL");
  if (fill)
    memset(block + kHeader, atoi(fill), bytes);
  memcpy(block, &bytes, sizeof(bytes));
  bytesLive += bytes;
  if (bytesLive > bytesPeak)
    bytesPeak = bytesLive;
  *pointer = (CUdeviceptr)(uintptr_t)(block + kHeader);
  return 0;
}
CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t bytes, void *stream) {
  (void)stream;
  return cuMemAlloc_v2(pointer, bytes);
}
CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned flags) {
  (void)flags;
  return cuMemAlloc_v2(pointer, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  if (!pointer)
    return 0;
  char *block = (char *)(uintptr_t)pointer - kHeader;
  size_t bytes;
  memcpy(&bytes, block, sizeof(bytes));
  mapBlocksFreed += bytes == kMapBytes;
  bytesLive -= bytes;
  free(block);
  return 0;
}
CUresult cuMemFreeAsync(CUdeviceptr pointer, void *stream) {
  (void)stream;
  return cuMemFree_v2(pointer);
}
CUresult cuDeviceGetDefaultMemPool(void **pool, int device) {
  (void)device;
  *pool = &handle[0];
  return 0;
}
CUresult cuMemPoolSetAttribute(void *pool, int attribute, void *value) {
  (void)pool, (void)attribute, (void)value;
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr to, const void *from, size_t bytes) {
  memcpy((void *)(uintptr_t)to, from, bytes);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *to, CUdeviceptr from, size_t bytes) {
  memcpy(to, (const void *)(uintptr_t)from, bytes);
  return 0;
}
CUresult cuMemcpyAsync(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                       void *stream) {
  (void)stream;
  memcpy((void *)(uintptr_t)to, (const void *)(uintptr_t)from, bytes);
  return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr to, unsigned value, size_t count,
                          void *stream) {
  (void)stream;
  for (size_t i = 0; i < count; ++i)
    ((unsigned *)(uintptr_t)to)[i] = value;
  return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr to, unsigned short value, size_t count,
                          void *stream) {
  (void)stream;
  for (size_t i = 0; i < count; ++i)
    ((unsigned short *)(uintptr_t)to)[i] = value;
  return 0;
}

static void printList(const char *name, const void *values, unsigned count,
                      int wide) {
  fprintf(stderr, " %s", name);
  for (unsigned i = 0; i < count; ++i)
    fprintf(stderr, "%s%llu", i ? "x" : " ",
            wide ? ((const unsigned long long *)values)[i]
                 : (unsigned long long)((const unsigned *)values)[i]);
}

// Prints its arguments (the address only modulo 16: its alignment); the
// map holds them for emulated TMA loads (FakeTensorMap).
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank,
                                void *address, const unsigned long long *sizes,
                                const unsigned long long *strides,
                                const unsigned *box,
                                const unsigned *elementStrides, int interleave,
                                int swizzle, int l2Promotion, int oobFill) {
  ++mapsEncoded;
  // What an emulated TMA load reads (fake-cuda-kernels.h).
  static const unsigned char kElementBytes[] = {1, 2, 4, 4, 8, 8, 2,
                                                4, 8, 2, 4, 4, 4};
  FakeTensorMap encoded;
  memset(&encoded, 0, sizeof(encoded));
  encoded.address = address;
  encoded.rank = (unsigned char)rank;
  encoded.elementBytes = type >= 0 && type <= 12 ? kElementBytes[type] : 0;
  encoded.swizzle = (unsigned char)swizzle;
  encoded.nanFill = (unsigned char)oobFill;
  for (unsigned i = 0; i < rank && i < 5; ++i) {
    encoded.sizes[i] = sizes[i];
    encoded.box[i] = box[i];
    if (i + 1 < rank)
      encoded.strides[i] = strides[i];
  }
  memset(map, 0, kMapBytes);
  memcpy(map, &encoded, sizeof(encoded));
  if (getenv("FAKE_CUDA_COUNT_MAPS"))
    return 0;
  fprintf(stderr, "cuTensorMapEncodeTiled: type %d rank %u address%%16 %u",
          type, rank, (unsigned)((uintptr_t)address % 16));
  printList("sizes", sizes, rank, 1);
  printList("strides", strides, rank - 1, 1);
  printList("box", box, rank, 0);
  printList("element-strides", elementStrides, rank, 0);
  fprintf(stderr, " interleave %d swizzle %d l2 %d oob %d\n", interleave,
          swizzle, l2Promotion, oobFill);
  return 0;
}

__attribute__((destructor)) static void printCounts(void) {
  if (getenv("FAKE_CUDA_COUNT_MAPS"))
    fprintf(stderr, "fake driver: %llu tensor maps encoded, %llu blocks of "
            "128 bytes freed\n", mapsEncoded, mapBlocksFreed);
  if (getenv("FAKE_CUDA_PRINT_MEMORY"))
    fprintf(stderr, "fake driver: at most %llu bytes of device memory at "
            "once\n", bytesPeak);
}
