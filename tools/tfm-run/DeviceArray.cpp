//===- DeviceArray.cpp - tfm-run's arrays in GPU memory -------------------===//

#include "DeviceArray.h"

using namespace mlir::tfm;

llvm::Expected<DeviceArray> DeviceArray::mirror(const HostArray &host,
                                                bool copy) {
  void *data = nullptr;
  if (tfmDeviceAlloc(host.bytes.size(), &data) != TFM_OK)
    return llvm::createStringError(tfmLastError());
  DeviceArray array(data, host.bytes.size(), host.dtype, host.shape);
  if (copy && tfmDeviceUpload(data, host.bytes.data(), array.size) != TFM_OK)
    return llvm::createStringError(tfmLastError());
  return array;
}

DeviceArray::DeviceArray(DeviceArray &&other)
    : data(other.data), size(other.size), dtype(std::move(other.dtype)),
      shape(std::move(other.shape)) {
  other.data = nullptr;
}

DeviceArray::~DeviceArray() {
  if (data)
    tfmDeviceFree(data);
}

llvm::Error DeviceArray::download(HostArray &host) const {
  if (host.dtype != dtype || host.shape != shape)
    return llvm::createStringError("downloading a device array into " +
                                   host.describe() + ", another shape");
  if (tfmDeviceDownload(host.bytes.data(), data, size) != TFM_OK)
    return llvm::createStringError(tfmLastError());
  return llvm::Error::success();
}

tfm_status DeviceArray::bind(TfmCall *call, int output, int index) const {
  return output ? tfmCallSetOutputDevice(call, index, dtype.c_str(),
                                         shape.size(), shape.data(), data)
                : tfmCallSetInputDevice(call, index, dtype.c_str(),
                                        shape.size(), shape.data(), data);
}
