//===- DeviceCopies.h - a call's arrays in device memory --------*- C++ -*-===//
//
// How the host runtime (HostRuntime.cpp) runs a --target=cuda library on
// the caller's host arrays: each is copied into device memory before the
// call and each output back after it; and the device arrays its C API
// hands out (tfmDeviceAlloc), which calls use in place.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_CUDA_DEVICECOPIES_H
#define TFM_RUNTIME_CUDA_DEVICECOPIES_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tfm::cuda {

/// `bytes` of device memory (at least one byte, so that an empty array has
/// an address), or null with `error` set (no driver or device, out of
/// memory).
void *allocate(size_t bytes, std::string &error);
bool release(void *device, std::string &error);
/// Synchronous copies between host and device memory.
bool upload(void *device, const void *host, size_t bytes, std::string &error);
bool download(void *host, const void *device, size_t bytes,
              std::string &error);

/// Device buffers that live as long as this object.
class DeviceCopies {
public:
  DeviceCopies() = default;
  DeviceCopies(const DeviceCopies &) = delete;
  DeviceCopies &operator=(const DeviceCopies &) = delete;
  ~DeviceCopies();

  /// A device buffer of `bytes` holding a copy of `host` (if not null); null
  /// with `error` set on failure (no driver or device, out of memory).
  void *upload(const void *host, size_t bytes, std::string &error);

  /// Waits for the uploads: the kernels run on a stream of their own.
  bool finishUploads(std::string &error);

  /// Copies `bytes` of the device buffer `device` to `host`.
  bool download(void *host, const void *device, size_t bytes,
                std::string &error);

private:
  std::vector<void *> buffers;
};

} // namespace tfm::cuda

#endif // TFM_RUNTIME_CUDA_DEVICECOPIES_H
