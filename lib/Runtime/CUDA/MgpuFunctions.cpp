//===- MgpuFunctions.cpp - what MLIR's GPU host code calls ----------------===//
//
// `gpu-to-llvm` lowers kernel launches, streams and device memory to calls
// of `mgpu*` functions, and `gpu.binary` to a global constructor that loads
// the kernel image with `mgpuModuleLoad`. Upstream implements them in a
// runtime library that aborts on any CUDA error and that Debian does not
// ship; these are tfm's, linked into every library compiled for
// --target=cuda, over the driver API loaded at run time (CUDADriver.h):
//
// - Loading a library never touches the driver: a module is loaded on the
//   first launch of one of its kernels.
// - A failure never aborts. The first one in a call is kept, every later
//   launch, copy and allocation of the call is skipped, and the entry
//   point's wrapper (lib/Target/CUDA) returns a device-error status whose
//   message `tfm_device_error` gives.
// - Each stream of a call is timed on the GPU, from when the call takes it
//   to its synchronization, with a pair of events: `tfm_device_seconds`
//   gives the sum for the last call, the kernels' time without the host's.
// - Streams are kept for the next calls on the same thread, not destroyed.
//
//===----------------------------------------------------------------------===//

#include "CUDADriver.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

using namespace tfm::cuda;

namespace {

/// The first failure of the current call on this thread ("" if none).
thread_local std::string pendingError;
/// The failure the last call on this thread returned with.
thread_local std::string reportedError;
/// The GPU time of the current call's streams so far, and of the last call.
thread_local double pendingSeconds = 0;
thread_local double reportedSeconds = 0;

void fail(std::string message) {
  if (pendingError.empty())
    pendingError = std::move(message);
}

bool failed() { return !pendingError.empty(); }

/// Calls the driver unless the call has failed already; records a failure.
template <typename... Args>
bool call(const char *what, CUresult (*function)(Args...), Args... args) {
  if (failed())
    return false;
  if (CUresult result = function(args...)) {
    fail(describe(what, result));
    return false;
  }
  return true;
}

const Driver *currentDriver() {
  std::string error;
  if (!makeCurrent(error)) {
    fail(error);
    return nullptr;
  }
  std::string unused;
  return driver(unused);
}

/// The events that time a stream: `start` recorded when a call takes it
/// (or when it was last synchronized), `end` when it is synchronized.
struct StreamTimer {
  CUevent start = nullptr, end = nullptr;
};

/// The streams of the calls on this thread, with their events. A stream
/// the host code destroys (after synchronizing it) is kept for the
/// thread's next call instead: creating and destroying one costs
/// microseconds each, and a call takes one after each host wait. The
/// thread's end destroys them.
struct ThreadStreams {
  std::map<CUstream, StreamTimer> timers;
  std::vector<CUstream> spare;

  ~ThreadStreams() {
    if (timers.empty())
      return; // a thread that never ran a call: no driver to ask
    std::string error;
    const Driver *cuda = driver(error);
    if (!cuda)
      return;
    // Failures ignored: at the process's end the driver may be done.
    for (auto &[stream, timer] : timers) {
      cuda->streamDestroy(stream);
      for (CUevent event : {timer.start, timer.end})
        if (event)
          cuda->eventDestroy(event);
    }
  }
};
thread_local ThreadStreams streams;

CUevent timingEvent(const Driver &cuda) {
  CUevent event = nullptr;
  call("cuEventCreate", cuda.eventCreate, &event, 0u);
  return event;
}

struct Kernel {
  CUfunction function = nullptr;
  std::string name;
  int sharedBytesAllowed = 48 * 1024; // the default limit
};

/// A kernel image, loaded into the context on first use.
struct LazyModule {
  const void *image;
  bool isPTX;
  int optLevel;
  std::mutex mutex;
  CUmodule module = nullptr;
  std::string error; // why loading failed, once it did
  std::map<std::string, Kernel> kernels;
};

bool load(LazyModule &lazy, const Driver &cuda) {
  if (lazy.module)
    return true;
  if (lazy.error.empty()) {
    // PTX is compiled by the driver for this GPU; keep its error log.
    char log[4096] = {0};
    int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize,
                     kJitOptimizationLevel};
    void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                      reinterpret_cast<void *>(intptr_t(lazy.optLevel))};
    CUresult result = cuda.moduleLoadDataEx(&lazy.module, lazy.image,
                                            lazy.isPTX ? 3 : 2, options,
                                            values);
    if (result != 0) {
      lazy.module = nullptr;
      lazy.error = "loading the library's kernels: " +
                   describe("cuModuleLoadDataEx", result) +
                   (log[0] ? std::string("\n") + log : "");
    }
  }
  if (!lazy.module)
    fail(lazy.error);
  return lazy.module != nullptr;
}

} // namespace

extern "C" {

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  return new LazyModule{data, /*isPTX=*/false, /*optLevel=*/4};
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return new LazyModule{data, /*isPTX=*/true, optLevel};
}

void mgpuModuleUnload(void *module) {
  auto *lazy = static_cast<LazyModule *>(module);
  std::string error;
  // At exit the driver may be gone already; nothing to report then.
  if (lazy->module)
    if (const Driver *cuda = driver(error))
      cuda->moduleUnload(lazy->module);
  delete lazy;
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  const Driver *cuda = currentDriver();
  if (!cuda || failed())
    return nullptr;
  auto *lazy = static_cast<LazyModule *>(module);
  std::lock_guard<std::mutex> lock(lazy->mutex);
  if (!load(*lazy, *cuda))
    return nullptr;
  Kernel &kernel = lazy->kernels[name];
  if (!kernel.function) {
    kernel.name = name;
    if (CUresult result =
            cuda->moduleGetFunction(&kernel.function, lazy->module, name)) {
      fail(describe(("cuModuleGetFunction(" + kernel.name + ")").c_str(),
                    result));
      return nullptr;
    }
  }
  return &kernel;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, CUstream stream,
                      void **params, void **extra, size_t /*paramCount*/) {
  const Driver *cuda = currentDriver();
  if (!cuda || failed())
    return;
  auto *kernel = static_cast<Kernel *>(function);
  if (!kernel) {
    fail("launching a kernel that was not found");
    return;
  }
  // Checked here: the driver's "invalid argument" would not say which.
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0 || gridX > INT32_MAX ||
      gridY > 65535 || gridZ > 65535) {
    if (gridX == 0 || gridY == 0 || gridZ == 0)
      return; // nothing to compute
    fail("kernel " + kernel->name + ": grid " + std::to_string(gridX) + "x" +
         std::to_string(gridY) + "x" + std::to_string(gridZ) +
         " is out of the GPU's range");
    return;
  }
  if (sharedBytes > kernel->sharedBytesAllowed) {
    if (!call("cuFuncSetAttribute", cuda->funcSetAttribute, kernel->function,
              kFuncMaxDynamicSharedBytes, int(sharedBytes)))
      return;
    kernel->sharedBytesAllowed = sharedBytes;
  }
  call(("cuLaunchKernel(" + kernel->name + ")").c_str(), cuda->launchKernel,
       kernel->function, unsigned(gridX), unsigned(gridY), unsigned(gridZ),
       unsigned(blockX), unsigned(blockY), unsigned(blockZ),
       unsigned(sharedBytes), stream, params, extra);
}

CUstream mgpuStreamCreate() {
  const Driver *cuda = currentDriver();
  CUstream stream = nullptr;
  if (!cuda || failed())
    return stream;
  if (!streams.spare.empty()) {
    stream = streams.spare.back();
    streams.spare.pop_back();
  } else if (!call("cuStreamCreate", cuda->streamCreate, &stream,
                   kStreamNonBlocking)) {
    return stream;
  }
  // New, or made when creating an event failed (which failed that call).
  StreamTimer &timer = streams.timers[stream];
  for (CUevent *event : {&timer.start, &timer.end})
    if (!*event)
      *event = timingEvent(*cuda);
  if (timer.start)
    call("cuEventRecord", cuda->eventRecord, timer.start, stream);
  return stream;
}

/// The stream goes back to this thread's spares (ThreadStreams): the host
/// code destroys a stream after synchronizing it, and any work still in
/// it would come before the next call's anyway.
void mgpuStreamDestroy(CUstream stream) {
  if (stream)
    streams.spare.push_back(stream);
}

void mgpuStreamSynchronize(CUstream stream) {
  std::string error;
  const Driver *cuda = driver(error);
  if (!cuda || !stream)
    return;
  auto timer = streams.timers.find(stream);
  bool timed =
      timer != streams.timers.end() && timer->second.start &&
      timer->second.end &&
      call("cuEventRecord", cuda->eventRecord, timer->second.end, stream);
  // Also after a failure: the work queued before it must finish before the
  // call returns. A kernel's fault surfaces here.
  if (CUresult result = cuda->streamSynchronize(stream)) {
    fail(describe("running the kernels (cuStreamSynchronize)", result));
    return;
  }
  float milliseconds = 0;
  if (timed && call("cuEventElapsedTime", cuda->eventElapsedTime, &milliseconds,
                    timer->second.start, timer->second.end)) {
    pendingSeconds += milliseconds * 1e-3;
    // A stream synchronized again is timed from here.
    call("cuEventRecord", cuda->eventRecord, timer->second.start, stream);
  }
}

void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (const Driver *cuda = currentDriver())
    call("cuStreamWaitEvent", cuda->streamWaitEvent, stream, event, 0u);
}

CUevent mgpuEventCreate() {
  CUevent event = nullptr;
  if (const Driver *cuda = currentDriver())
    call("cuEventCreate", cuda->eventCreate, &event, kEventDisableTiming);
  return event;
}

void mgpuEventDestroy(CUevent event) {
  std::string error;
  if (const Driver *cuda = driver(error); cuda && event)
    cuda->eventDestroy(event);
}

void mgpuEventSynchronize(CUevent event) {
  if (const Driver *cuda = currentDriver())
    call("cuEventSynchronize", cuda->eventSynchronize, event);
}

void mgpuEventRecord(CUevent event, CUstream stream) {
  if (const Driver *cuda = currentDriver())
    call("cuEventRecord", cuda->eventRecord, event, stream);
}

void *mgpuMemAlloc(uint64_t bytes, CUstream stream, bool isHostShared) {
  const Driver *cuda = currentDriver();
  CUdeviceptr pointer = 0;
  if (!cuda || bytes == 0)
    return nullptr;
  if (isHostShared)
    call("cuMemAllocManaged", cuda->memAllocManaged, &pointer, size_t(bytes),
         kMemAttachGlobal);
  else
    call(("cuMemAllocAsync of " + std::to_string(bytes) + " bytes").c_str(),
         cuda->memAllocAsync, &pointer, size_t(bytes), stream);
  return reinterpret_cast<void *>(pointer);
}

void mgpuMemFree(void *pointer, CUstream stream) {
  std::string error;
  const Driver *cuda = driver(error);
  if (!cuda || !pointer)
    return;
  // Freed even after a failure, so that a failed call leaks nothing.
  cuda->memFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), stream);
}

void mgpuMemcpy(void *destination, void *source, size_t bytes,
                CUstream stream) {
  if (bytes == 0)
    return;
  if (const Driver *cuda = currentDriver())
    call("cuMemcpyAsync", cuda->memcpyAsync,
         reinterpret_cast<CUdeviceptr>(destination),
         reinterpret_cast<CUdeviceptr>(source), bytes, stream);
}

void mgpuMemset32(void *destination, unsigned value, size_t count,
                  CUstream stream) {
  if (count == 0)
    return;
  if (const Driver *cuda = currentDriver())
    call("cuMemsetD32Async", cuda->memsetD32Async,
         reinterpret_cast<CUdeviceptr>(destination), value, count, stream);
}

void mgpuMemset16(void *destination, unsigned short value, size_t count,
                  CUstream stream) {
  if (count == 0)
    return;
  if (const Driver *cuda = currentDriver())
    call("cuMemsetD16Async", cuda->memsetD16Async,
         reinterpret_cast<CUdeviceptr>(destination), value, count, stream);
}

/// A tensor map for TMA loads (`nvgpu.tma.create.descriptor`) of the
/// memref `descriptor` of rank `rank`, in tiles of `box` (outermost size
/// first), as a pointer to its 128 bytes in device memory (what
/// cp.async.bulk.tensor names). `dataType`, `interleave`, `swizzle`,
/// `l2Promotion` and `oobFill` are the driver's CUtensorMap* enums. Null
/// when the memref is empty (no kernel reads it then) or on failure.
void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *descriptor,
                                     int64_t dataType, int64_t interleave,
                                     int64_t swizzle, int64_t l2Promotion,
                                     int64_t oobFill, const int64_t *box) {
  const Driver *cuda = currentDriver();
  if (!cuda || failed())
    return nullptr;
  if (!cuda->tensorMapEncodeTiled) {
    fail("the CUDA driver lacks cuTensorMapEncodeTiled (TMA loads need a "
         "driver for CUDA 12 or newer)");
    return nullptr;
  }
  // Bytes of an element of each CUtensorMapDataType.
  static constexpr int64_t kElementBytes[] = {1, 2, 4, 4, 8, 8, 2,
                                              4, 8, 2, 4, 4, 4};
  if (rank < 1 || rank > 5 || dataType < 0 || dataType > 12) {
    fail("a tensor map of rank " + std::to_string(rank) + " and data type " +
         std::to_string(dataType) + " is not one TMA has");
    return nullptr;
  }
  int64_t elementBytes = kElementBytes[dataType];
  // A ranked memref descriptor: allocated and aligned pointers, offset,
  // sizes, strides.
  struct Header {
    void *allocated;
    char *aligned;
    int64_t offset;
  };
  const auto *header = static_cast<const Header *>(descriptor);
  const auto *sizes = reinterpret_cast<const int64_t *>(header + 1);
  const int64_t *strides = sizes + rank;
  std::string shape;
  for (int64_t i = 0; i < rank; ++i) {
    shape += (i ? "x" : "") + std::to_string(sizes[i]);
    if (sizes[i] == 0)
      return nullptr;
  }
  if (strides[rank - 1] != 1) {
    fail("a tensor map of a " + shape +
         " memref whose innermost stride is not 1");
    return nullptr;
  }
  char *address = header->aligned + header->offset * elementBytes;
  // What the driver would refuse with only CUDA_ERROR_INVALID_VALUE.
  std::string misaligned;
  if (int64_t past = reinterpret_cast<intptr_t>(address) % 16)
    misaligned =
        "starting " + std::to_string(past) + " bytes past a 16-byte boundary";
  for (int64_t i = 0; i + 1 < rank && misaligned.empty(); ++i)
    if (strides[i] * elementBytes % 16 != 0)
      misaligned = "whose dim " + std::to_string(i) + " stride is " +
                   std::to_string(strides[i] * elementBytes) + " bytes";
  if (!misaligned.empty()) {
    fail("a tensor map of a " + shape + " memref " + misaligned +
         ": TMA loads (sm_90a's kernels) need arrays whose start and row "
         "strides are multiples of 16 bytes");
    return nullptr;
  }
  // Each map encoded and put in device memory once: a kernel's maps are the
  // same from call to call (its buffers come back from the pool at the same
  // addresses), so a call only looks them up. Uploaded with the context
  // synchronized, so that no stream launches a kernel before its map has
  // landed. When there are many, they are retired as a whole and freed at
  // the next such turn: a map handed out just before a turn may still be
  // on its way to a launch, but not 4096 encodings later.
  // The key: the address, rank, the encoding's kinds, then sizes, strides
  // and box, each padded to 5 dims (rank <= 5).
  constexpr int64_t kMaxRank = 5;
  std::array<int64_t, 7 + 3 *kMaxRank> key = {
      reinterpret_cast<int64_t>(address),
      rank,
      dataType,
      interleave,
      swizzle,
      l2Promotion,
      oobFill};
  std::copy(sizes, sizes + rank, key.begin() + 7);
  std::copy(strides, strides + rank, key.begin() + 7 + kMaxRank);
  std::copy(box, box + rank, key.begin() + 7 + 2 * kMaxRank);
  using Maps = std::map<decltype(key), CUdeviceptr>;
  static std::mutex mutex;
  static Maps uploaded, retired;
  constexpr size_t kMaxUploaded = 4096;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = uploaded.find(key);
  if (found != uploaded.end())
    return reinterpret_cast<void *>(found->second);

  // The driver's order: innermost first.
  unsigned long long globalSizes[5], globalStrides[4];
  unsigned boxSizes[5], elementStrides[5];
  for (int64_t i = 0; i < rank; ++i) {
    globalSizes[i] = sizes[rank - 1 - i];
    boxSizes[i] = unsigned(box[rank - 1 - i]);
    elementStrides[i] = 1;
    if (i + 1 < rank)
      globalStrides[i] = strides[rank - 2 - i] * elementBytes;
  }
  alignas(64) unsigned long long map[16] = {};
  if (CUresult result = cuda->tensorMapEncodeTiled(
          map, int(dataType), unsigned(rank), address, globalSizes,
          globalStrides, boxSizes, elementStrides, int(interleave),
          int(swizzle), int(l2Promotion), int(oobFill))) {
    fail(describe(("cuTensorMapEncodeTiled of a " + shape + " memref").c_str(),
                  result));
    return nullptr;
  }
  if (uploaded.size() >= kMaxUploaded) {
    if (!call("cuCtxSynchronize", cuda->ctxSynchronize))
      return nullptr;
    for (auto &[unused, pointer] : retired)
      cuda->memFree(pointer);
    retired = std::move(uploaded);
    uploaded.clear();
  }
  CUdeviceptr pointer = 0;
  if (!call("cuMemAlloc of a tensor map", cuda->memAlloc, &pointer,
            sizeof(map)))
    return nullptr;
  if (!call("cuMemcpyHtoD of a tensor map", cuda->memcpyHtoD, pointer,
            static_cast<const void *>(map), sizeof(map)) ||
      !call("cuCtxSynchronize", cuda->ctxSynchronize)) {
    cuda->memFree(pointer);
    return nullptr;
  }
  uploaded.emplace(std::move(key), pointer);
  return reinterpret_cast<void *>(pointer);
}

/// The device's multiprocessor count, which persistent kernels size their
/// grids by (tfm-gpu-tensor-core-matmul); asked of the driver once a
/// process. Only advice: asked at an entry point's start, before its
/// checks, so a missing driver fails nothing here (1; the first launch
/// reports it), and a failed check keeps its own status.
int32_t tfmCudaMultiprocessors() {
  static std::atomic<int32_t> known{0};
  if (int32_t count = known.load(std::memory_order_relaxed))
    return count;
  std::string error;
  const Driver *cuda = driver(error);
  int count = 0;
  if (!cuda || !makeCurrent(error) ||
      cuda->deviceGetAttribute(&count, kDeviceMultiprocessorCount,
                               cuda->device) != 0)
    return 1;
  count = std::max(count, 1);
  known.store(count, std::memory_order_relaxed);
  return count;
}

/// Called by each entry point's wrapper when the entry point returns: -1
/// if the call failed on the device (and why, for tfm_device_error), else
/// 0. Clears the failure for the next call.
int32_t tfmCudaTakeStatus() {
  reportedSeconds = pendingSeconds;
  pendingSeconds = 0;
  if (!failed())
    return 0;
  reportedError = std::move(pendingError);
  pendingError.clear();
  return -1;
}

/// Why the last call on this thread failed on the device.
__attribute__((visibility("default"))) const char *tfm_device_error() {
  return reportedError.c_str();
}

/// The GPU time of the last call's streams on this thread, in seconds.
__attribute__((visibility("default"))) double tfm_device_seconds() {
  return reportedSeconds;
}

} // extern "C"
