//===- DeviceCopies.cpp - a call's arrays in device memory ----------------===//

#include "DeviceCopies.h"

#include "CUDADriver.h"

using namespace tfm::cuda;

void *tfm::cuda::allocate(size_t bytes, std::string &error) {
  if (!makeCurrent(error))
    return nullptr;
  CUdeviceptr buffer = 0;
  if (CUresult result = driver(error)->memAlloc(&buffer, bytes ? bytes : 1)) {
    error = describe(("allocating " + std::to_string(bytes) +
                      " bytes of device memory (cuMemAlloc)")
                         .c_str(),
                     result);
    return nullptr;
  }
  return reinterpret_cast<void *>(buffer);
}

bool tfm::cuda::release(void *device, std::string &error) {
  if (!device)
    return true;
  if (!makeCurrent(error))
    return false;
  if (CUresult result =
          driver(error)->memFree(reinterpret_cast<CUdeviceptr>(device))) {
    error = describe("cuMemFree", result);
    return false;
  }
  return true;
}

bool tfm::cuda::upload(void *device, const void *host, size_t bytes,
                       std::string &error) {
  if (!bytes)
    return true;
  if (!makeCurrent(error))
    return false;
  if (CUresult result = driver(error)->memcpyHtoD(
          reinterpret_cast<CUdeviceptr>(device), host, bytes)) {
    error = describe("cuMemcpyHtoD", result);
    return false;
  }
  return true;
}

bool tfm::cuda::download(void *host, const void *device, size_t bytes,
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

DeviceCopies::~DeviceCopies() {
  std::string error;
  for (void *buffer : buffers)
    release(buffer, error);
}

void *DeviceCopies::upload(const void *host, size_t bytes,
                           std::string &error) {
  void *buffer = allocate(bytes, error);
  if (!buffer)
    return nullptr;
  buffers.push_back(buffer);
  if (host && !tfm::cuda::upload(buffer, host, bytes, error))
    return nullptr;
  return buffer;
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
  return tfm::cuda::download(host, device, bytes, error);
}
