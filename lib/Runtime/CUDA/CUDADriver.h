//===- CUDADriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The few driver API entry points tfm uses, looked up in libcuda.so.1 with
// dlopen on first use: nothing links against CUDA, so a library compiled
// for --target=cuda loads (and reports a clear error) on a machine without
// a driver. The types are declared here, with the driver's ABI, so that
// building tfm needs no CUDA headers.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_CUDA_CUDADRIVER_H
#define TFM_RUNTIME_CUDA_CUDADRIVER_H

#include <cstddef>
#include <string>

namespace tfm::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUmemoryPool = struct CUmemPoolHandle_st *;

// Values of the driver's enums that tfm passes.
constexpr unsigned kStreamNonBlocking = 0x1;
constexpr unsigned kEventDisableTiming = 0x2;
constexpr unsigned kMemAttachGlobal = 0x1;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;
constexpr int kJitOptimizationLevel = 7;
constexpr int kFuncMaxDynamicSharedBytes = 8;
constexpr int kMemPoolReleaseThreshold = 4;
constexpr int kDeviceMultiprocessorCount = 16;

/// The driver's functions, all non-null once `driver()` succeeded.
/// cuTensorMapEncodeTiled's parameters: a map's 128 bytes, then its data
/// type, rank, global address, sizes, byte strides (all but the innermost),
/// box sizes, element strides, interleave, swizzle, L2 promotion and
/// out-of-bounds fill (innermost dimension first).
using TensorMapEncodeTiled = CUresult (*)(void *, int, unsigned, void *,
                                          const unsigned long long *,
                                          const unsigned long long *,
                                          const unsigned *, const unsigned *,
                                          int, int, int, int);

struct Driver {
#define TFM_CUDA_FUNCTION(name, symbol, ...) CUresult (*name)(__VA_ARGS__);
#include "CUDADriverFunctions.def"
  /// Null where the driver predates CUDA 12 (and TMA): only kernels that
  /// load tiles through tensor maps need it.
  TensorMapEncodeTiled tensorMapEncodeTiled = nullptr;
  CUdevice device = 0;
  /// The device's primary context, current on every thread that calls
  /// `makeCurrent`.
  CUcontext context = nullptr;
};

/// The driver with device 0's primary context (TFM_CUDA_DEVICE selects
/// another), loaded once per process; null if there is none, with `error`
/// saying why (no libcuda.so.1, a missing symbol, no device).
const Driver *driver(std::string &error);

/// Makes the primary context current on the calling thread; false (with
/// `error`) if there is no driver.
bool makeCurrent(std::string &error);

/// "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid argument)".
std::string describe(const char *what, CUresult result);

} // namespace tfm::cuda

#endif // TFM_RUNTIME_CUDA_CUDADRIVER_H
