//===- DeviceCopies.cpp - a call's arrays in device memory ----------------===//

#include "DeviceCopies.h"

#include "CUDADriver.h"

using namespace tfm::cuda;

DeviceCopies::~DeviceCopies() {
  std::string error;
  if (const Driver *cuda = driver(error))
    for (CUdeviceptr buffer : buffers)
      cuda->memFree(buffer);
}

void *DeviceCopies::upload(const void *host, size_t bytes,
                           std::string &error) {
  if (!makeCurrent(error))
    return nullptr;
  const Driver *cuda = driver(error);
  CUdeviceptr buffer = 0;
  // One byte at least: an empty array still needs an address.
  if (CUresult result = cuda->memAlloc(&buffer, bytes ? bytes : 1)) {
    error = describe(("allocating " + std::to_string(bytes) +
                      " bytes of device memory (cuMemAlloc)")
                         .c_str(),
                     result);
    return nullptr;
  }
  buffers.push_back(buffer);
  if (host && bytes)
    if (CUresult result = cuda->memcpyHtoD(buffer, host, bytes)) {
      error = describe("cuMemcpyHtoD", result);
      return nullptr;
    }
  return reinterpret_cast<void *>(buffer);
}

bool DeviceCopies::finishUploads(std::string &error) {
  if (!makeCurrent(error))
    return false;
  if (CUresult result = driver(error)->ctxSynchronize()) {
    error = describe("cuCtxSynchronize", result);
    return false;
  }
  return true;
}

bool DeviceCopies::download(void *host, const void *device, size_t bytes,
                            std::string &error) {
  if (!bytes)
    return true;
  if (!makeCurrent(error))
    return false;
  if (CUresult result = driver(error)->memcpyDtoH(
          host, reinterpret_cast<CUdeviceptr>(device), bytes)) {
    error = describe("cuMemcpyDtoH", result);
    return false;
  }
  return true;
}
