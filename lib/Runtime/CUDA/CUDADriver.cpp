//===- CUDADriver.cpp - the CUDA driver API, loaded at run time -----------===//

#include "CUDADriver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace tfm::cuda;

namespace {

struct LoadedDriver {
  Driver functions;
  std::string error; // why there is no driver, if there is none
};

/// A result's name and text, if the driver got far enough to describe it.
std::string resultText(const Driver &driver, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (driver.getErrorName)
    driver.getErrorName(result, &name);
  if (driver.getErrorString)
    driver.getErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  // Codes worth a word where the driver cannot name them (the toolkit's
  // stub library names nothing).
  if (!name && result == 34)
    out += " (CUDA_ERROR_STUB_LIBRARY: this libcuda.so.1 is the CUDA "
           "toolkit's stub, not an NVIDIA driver)";
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

LoadedDriver load() {
  LoadedDriver loaded;
  Driver &driver = loaded.functions;
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    loaded.error = std::string("no CUDA driver: cannot load libcuda.so.1") +
                   (why ? std::string(" (") + why + ")" : "");
    return loaded;
  }
#define TFM_CUDA_FUNCTION(name, symbol, ...)                                  \
  driver.name =                                                               \
      reinterpret_cast<decltype(driver.name)>(dlsym(handle, symbol));         \
  if (!driver.name) {                                                         \
    loaded.error = std::string("the CUDA driver lacks ") + symbol +           \
                   " (a driver for CUDA 11.2 or newer is needed)";            \
    return loaded;                                                            \
  }
#include "CUDADriverFunctions.def"
  driver.tensorMapEncodeTiled = reinterpret_cast<TensorMapEncodeTiled>(
      dlsym(handle, "cuTensorMapEncodeTiled"));
  // (Not `describe`: that would wait for this load to finish.)
  auto fail = [&](const char *what, CUresult result) {
    loaded.error = std::string(what) + " failed: " + resultText(driver, result);
    return loaded;
  };
  if (CUresult result = driver.init(0))
    return fail("cuInit", result);
  int count = 0;
  if (CUresult result = driver.deviceGetCount(&count))
    return fail("cuDeviceGetCount", result);
  int ordinal = 0;
  if (const char *chosen = std::getenv("TFM_CUDA_DEVICE"))
    ordinal = std::atoi(chosen);
  if (count == 0) {
    loaded.error = "no CUDA device";
    return loaded;
  }
  if (ordinal < 0 || ordinal >= count) {
    loaded.error = "TFM_CUDA_DEVICE=" + std::to_string(ordinal) +
                   " but there are " + std::to_string(count) +
                   " CUDA devices";
    return loaded;
  }
  if (CUresult result = driver.deviceGet(&driver.device, ordinal))
    return fail("cuDeviceGet", result);
  if (CUresult result =
          driver.primaryCtxRetain(&driver.context, driver.device))
    return fail("cuDevicePrimaryCtxRetain", result);
  // A call's buffers come from the device's default pool (cuMemAllocAsync)
  // and go back to it at the end. By default the pool hands its memory
  // back to the system at every synchronization, so every call mapped its
  // buffers anew; kept, the next call reuses them (PyTorch's caching
  // allocator does the same). Only a speed-up: ignored if refused.
  CUmemoryPool pool = nullptr;
  unsigned long long keepAll = ~0ull;
  if (driver.deviceGetDefaultMemPool(&pool, driver.device) == 0)
    driver.memPoolSetAttribute(pool, kMemPoolReleaseThreshold, &keepAll);
  return loaded;
}

const LoadedDriver &loadedDriver() {
  // Never unloaded: kernels modules and allocations may outlive any caller.
  static const LoadedDriver *loaded = new LoadedDriver(load());
  return *loaded;
}

} // namespace

const Driver *tfm::cuda::driver(std::string &error) {
  const LoadedDriver &loaded = loadedDriver();
  if (!loaded.error.empty()) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.functions;
}

bool tfm::cuda::makeCurrent(std::string &error) {
  const Driver *cuda = driver(error);
  if (!cuda)
    return false;
  thread_local CUcontext current = nullptr;
  if (current == cuda->context)
    return true;
  if (CUresult result = cuda->ctxSetCurrent(cuda->context)) {
    error = describe("cuCtxSetCurrent", result);
    return false;
  }
  current = cuda->context;
  return true;
}

std::string tfm::cuda::describe(const char *what, CUresult result) {
  const LoadedDriver &loaded = loadedDriver();
  return std::string(what) + " failed: " +
         resultText(loaded.functions, result);
}
