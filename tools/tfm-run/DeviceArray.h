//===- DeviceArray.h - tfm-run's arrays in GPU memory ----------*- C++ -*-===//
//
// What tfm-run keeps on the GPU for a --target=cuda library: inputs uploaded
// once, outputs downloaded once, so that repeated calls (--bench, decode
// steps) run on arrays in place and time the GPU's work alone.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_TOOLS_TFM_RUN_DEVICEARRAY_H
#define TFM_TOOLS_TFM_RUN_DEVICEARRAY_H

#include "tfm-c/Runtime.h"
#include "tfm/Runtime/HostArray.h"

namespace mlir::tfm {

/// An array in the device memory of the GPU that cuda libraries run on
/// (tfmDeviceAlloc), with the dtype and shape of the host array it mirrors;
/// freed with this object.
class DeviceArray {
public:
  /// A device array of `host`'s dtype and shape; its contents are copied
  /// over when `copy` is set.
  static llvm::Expected<DeviceArray> mirror(const HostArray &host, bool copy);

  DeviceArray(DeviceArray &&other);
  DeviceArray &operator=(DeviceArray &&other) = delete;
  ~DeviceArray();

  /// Copies the contents back into `host` (of the same dtype and shape).
  llvm::Error download(HostArray &host) const;

  /// Binds this array to input (`output` = 0) or output `index` of `call`.
  tfm_status bind(TfmCall *call, int output, int index) const;

  uint64_t bytes() const { return size; }

private:
  DeviceArray(void *data, uint64_t size, std::string dtype,
              std::vector<int64_t> shape)
      : data(data), size(size), dtype(std::move(dtype)),
        shape(std::move(shape)) {}

  void *data;
  uint64_t size;
  std::string dtype;
  std::vector<int64_t> shape;
};

} // namespace mlir::tfm

#endif // TFM_TOOLS_TFM_RUN_DEVICEARRAY_H
