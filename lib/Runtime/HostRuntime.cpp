//===- HostRuntime.cpp - the runtime's C API ------------------------------===//
//
// tfm-c/Runtime.h over dlopen and the libraries' packed entry points
// (`int32_t tfm_entry_<name>(void **descriptors)`, tfm/Runtime/Manifest.h).
// A cuda library's host arrays are copied to device memory around each call
// (CUDA/DeviceCopies.h); device arrays are used in place. No LLVM here:
// libtfm_runtime.so runs where it is not installed.
//
//===----------------------------------------------------------------------===//

#include "tfm-c/Runtime.h"

#include "CUDA/DeviceCopies.h"
#include "tfm/Runtime/Manifest.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <string>
#include <vector>

using namespace mlir::tfm;

namespace {

thread_local std::string lastError;

tfm_status fail(tfm_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

/// Arrays larger than this are refused, as the compiler and the file
/// readers refuse them (tfm/Support/InputLimits.h): sizes and strides
/// computed from such shapes cannot overflow.
constexpr uint64_t kMaxArrayBytes = uint64_t(1) << 47;

using PackedEntry = int32_t (*)(void **);

/// A caller's array bound to an input or output.
struct Binding {
  bool bound = false;
  void *data = nullptr;
  std::vector<int64_t> shape;
  /// int64 token ids narrowed for an int32 input.
  std::vector<int32_t> narrowed;
  /// `data` is device memory of a cuda library: used in place, not copied.
  bool onDevice = false;
};

/// "[2, ?, 64] f32"
std::string describe(const std::vector<int64_t> &shape,
                     const std::string &dtype) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") +
            (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return text + "] " + dtype;
}

/// The byte size of `shape` of `dtype`, or false when a dim is negative or
/// the array is larger than kMaxArrayBytes.
bool byteSize(const std::vector<int64_t> &shape, const std::string &dtype,
              uint64_t &bytes) {
  bytes = elementSize(dtype);
  for (int64_t size : shape) {
    if (size < 0)
      return false;
    if (size != 0 && bytes > kMaxArrayBytes / uint64_t(size))
      return false;
    bytes *= uint64_t(size);
  }
  return bytes <= kMaxArrayBytes;
}

} // namespace

struct TfmLibrary {
  void *handle = nullptr;
  std::string path;
  std::string manifestText;
  Manifest manifest;
  /// A cuda library's `const char *tfm_device_error(void)`: why the last
  /// call on this thread failed on the device.
  const char *(*deviceError)() = nullptr;
  /// Its `double tfm_device_seconds(void)`: the GPU time of the last call's
  /// kernels on this thread (null in libraries built before it existed).
  double (*deviceSeconds)() = nullptr;
};

struct TfmCall {
  TfmLibrary *library;
  const EntryPoint *entry;
  PackedEntry function;
  std::vector<Binding> inputs, outputs;
  /// The GPU time of the last successful invocation's kernels, or -1.
  double kernelSeconds = -1;

  const std::vector<TensorSignature> &specs(int output) const {
    return output ? entry->outputs : entry->inputs;
  }
  std::vector<Binding> &bindings(int output) {
    return output ? outputs : inputs;
  }
  bool validIndex(int output, int index) const {
    return index >= 0 && size_t(index) < specs(output).size();
  }
  tfm_status badIndex(int output, int index) const {
    return fail(TFM_ERROR, "entry point '" + entry->name + "' has no " +
                               (output ? "output" : "input") + " " +
                               std::to_string(index));
  }
  /// Binds `data` to tensor `index` after checking dtype, rank and size
  /// against `expected` (-1: any size).
  tfm_status bind(int output, int index, const char *dtype, int rank,
                  const int64_t *shape, void *data,
                  const std::vector<int64_t> &expected, bool onDevice);
  /// The shape output `index` must have for the inputs bound so far (-1:
  /// any size).
  std::vector<int64_t> expectedOutputShape(int index) const;
};

tfm_status TfmCall::bind(int output, int index, const char *dtype, int rank,
                         const int64_t *shape, void *data,
                         const std::vector<int64_t> &expected,
                         bool onDevice) {
  const TensorSignature &spec = specs(output)[index];
  std::string kind = output ? "output" : "input";
  std::string given = dtype ? dtype : "";
  std::vector<int64_t> dims(shape, shape + (rank > 0 ? rank : 0));
  uint64_t bytes;
  if (rank < 0 || (rank > 0 && !shape) || !byteSize(dims, given, bytes))
    return fail(TFM_ERROR_SHAPE, kind + " '" + spec.name +
                                     "': not a valid array shape of at most "
                                     "2^47 bytes");
  std::string mismatch = kind + " '" + spec.name + "' must be " +
                         describe(expected, spec.dtype) + ", got " +
                         describe(dims, given);
  if (onDevice && !library->deviceError)
    return fail(TFM_ERROR_DEVICE,
                kind + " '" + spec.name + "' is in device memory, but '" +
                    library->path + "' runs on the CPU");
  // An array updated in place is written: never a narrowed copy. Device
  // arrays are never read on the host.
  bool narrowing = !output && !spec.updated && !onDevice &&
                   spec.dtype == "i32" && given == "i64";
  if (given != spec.dtype && !narrowing)
    return fail(TFM_ERROR_DTYPE, mismatch);
  bool shapeOk = dims.size() == expected.size();
  for (size_t d = 0; shapeOk && d < dims.size(); ++d)
    shapeOk = expected[d] < 0 || expected[d] == dims[d];
  if (!shapeOk)
    return fail(TFM_ERROR_SHAPE, mismatch);
  if (!data && bytes)
    return fail(TFM_ERROR, kind + " '" + spec.name + "' has no data");
  if (reinterpret_cast<uintptr_t>(data) % elementSize(given))
    return fail(TFM_ERROR_VALUE, kind + " '" + spec.name +
                                     "' is not aligned to its " +
                                     std::to_string(elementSize(given)) +
                                     "-byte elements");
  Binding binding{true, data, dims, {}, onDevice};
  if (narrowing) {
    // Token ids as NumPy and PyTorch make them, when every value fits.
    uint64_t count = bytes / 8;
    binding.narrowed.resize(count);
    const auto *wide = static_cast<const int64_t *>(data);
    for (uint64_t i = 0; i < count; ++i) {
      if (wide[i] < std::numeric_limits<int32_t>::min() ||
          wide[i] > std::numeric_limits<int32_t>::max())
        return fail(TFM_ERROR_VALUE, "input '" + spec.name + "' holds " +
                                         std::to_string(wide[i]) +
                                         ", which does not fit int32");
      binding.narrowed[i] = static_cast<int32_t>(wide[i]);
    }
    binding.data = binding.narrowed.data();
  }
  bindings(output)[index] = std::move(binding);
  return TFM_OK;
}

std::vector<int64_t> TfmCall::expectedOutputShape(int index) const {
  const TensorSignature &spec = entry->outputs[index];
  // Dims that follow a bound input must match it; others may be any size.
  std::vector<int64_t> expected = spec.shape;
  for (size_t d = 0; d < expected.size(); ++d)
    if (expected[d] < 0 && d < spec.dimSources.size() && spec.dimSources[d] &&
        inputs[spec.dimSources[d]->input].bound)
      expected[d] =
          inputs[spec.dimSources[d]->input].shape[spec.dimSources[d]->dim];
  return expected;
}

extern "C" {

const char *tfmLastError(void) { return lastError.c_str(); }

const char *tfmRuntimeVersion(void) { return "tfm " TFM_VERSION_STRING; }

tfm_status tfmLibraryOpen(const char *path, TfmLibrary **library) {
  if (!path || !library)
    return fail(TFM_ERROR, "tfmLibraryOpen needs a path and a result");
  std::string file = path;
  // dlopen searches the system's library path for a bare file name.
  if (file.find('/') == std::string::npos)
    file = "./" + file;
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail(TFM_ERROR,
                "cannot load '" + std::string(path) + "': " + dlerror());
  auto *text = static_cast<const char *>(dlsym(handle, "tfm_manifest"));
  if (!text) {
    dlclose(handle);
    return fail(TFM_ERROR, "'" + std::string(path) +
                               "' has no tfm_manifest: was it built by "
                               "tfm-compile?");
  }
  std::string error;
  std::optional<Manifest> manifest = parseManifest(text, error);
  if (!manifest) {
    dlclose(handle);
    return fail(TFM_ERROR, "'" + std::string(path) + "': " + error);
  }
  const char *(*deviceError)() = nullptr;
  if (manifest->device == "cuda")
    deviceError = reinterpret_cast<const char *(*)()>(
        dlsym(handle, "tfm_device_error"));
  if (manifest->device != "cpu" && !deviceError) {
    dlclose(handle);
    return fail(TFM_ERROR_DEVICE,
                "'" + std::string(path) + "' runs on device '" +
                    manifest->device +
                    "', which this runtime does not drive (it runs cpu and "
                    "cuda libraries)");
  }
  auto *deviceSeconds =
      deviceError
          ? reinterpret_cast<double (*)()>(dlsym(handle, "tfm_device_seconds"))
          : nullptr;
  *library = new TfmLibrary{
      handle, path, text, std::move(*manifest), deviceError, deviceSeconds};
  return TFM_OK;
}

void tfmLibraryClose(TfmLibrary *library) {
  if (!library)
    return;
  dlclose(library->handle);
  delete library;
}

const char *tfmLibraryManifest(const TfmLibrary *library) {
  return library->manifestText.c_str();
}

const char *tfmLibraryDevice(const TfmLibrary *library) {
  return library->manifest.device.c_str();
}

int tfmLibraryEntryCount(const TfmLibrary *library) {
  return library->manifest.entryPoints.size();
}

const char *tfmLibraryEntryName(const TfmLibrary *library, int index) {
  if (index < 0 || size_t(index) >= library->manifest.entryPoints.size())
    return nullptr;
  return library->manifest.entryPoints[index].name.c_str();
}

tfm_status tfmLibraryFlops(const TfmLibrary *library, int64_t batch,
                           int64_t length, double *flops) {
  if (!library->manifest.flops)
    return fail(TFM_ERROR, "'" + library->path +
                               "' was not compiled from a model description: "
                               "it has no flop count");
  *flops = library->manifest.flops->count(batch, length);
  return TFM_OK;
}

tfm_status tfmCallCreate(TfmLibrary *library, const char *entry,
                         TfmCall **call) {
  const std::vector<EntryPoint> &entries = library->manifest.entryPoints;
  const EntryPoint *chosen = nullptr;
  // A model description's library also has prefill and decode; forward
  // is what a caller that names none runs.
  if (!entry && entries.size() > 1 &&
      std::any_of(entries.begin(), entries.end(),
                  [](const EntryPoint &candidate) {
                    return candidate.name == "forward";
                  }))
    entry = "forward";
  // Nor does it run the entry point that packs the weights.
  if (!entry && entries.size() == 2)
    for (size_t i = 0; i < 2; ++i)
      if (entries[1 - i].name == kPrepareWeightsEntry)
        entry = entries[i].name.c_str();
  if (!entry) {
    if (entries.size() != 1) {
      std::string names;
      for (const EntryPoint &candidate : entries)
        names += (names.empty() ? "" : ", ") + candidate.name;
      return fail(TFM_ERROR, "the library has " +
                                 std::to_string(entries.size()) +
                                 " entry points (" + names +
                                 "): name the one to run");
    }
    chosen = &entries.front();
  } else {
    for (const EntryPoint &candidate : entries)
      if (candidate.name == entry)
        chosen = &candidate;
    if (!chosen)
      return fail(TFM_ERROR, "'" + library->path + "' has no entry point '" +
                                 std::string(entry) + "'");
  }
  auto function = reinterpret_cast<PackedEntry>(
      dlsym(library->handle, ("tfm_entry_" + chosen->name).c_str()));
  if (!function)
    return fail(TFM_ERROR,
                "'" + library->path + "' lacks tfm_entry_" + chosen->name);
  *call = new TfmCall{library, chosen, function,
                      std::vector<Binding>(chosen->inputs.size()),
                      std::vector<Binding>(chosen->outputs.size())};
  return TFM_OK;
}

void tfmCallDestroy(TfmCall *call) { delete call; }

const char *tfmCallEntryName(const TfmCall *call) {
  return call->entry->name.c_str();
}

int tfmCallTensorCount(const TfmCall *call, int output) {
  return call->specs(output).size();
}

const char *tfmCallTensorName(const TfmCall *call, int output, int index) {
  return call->validIndex(output, index)
             ? call->specs(output)[index].name.c_str()
             : nullptr;
}

const char *tfmCallTensorDtype(const TfmCall *call, int output, int index) {
  return call->validIndex(output, index)
             ? call->specs(output)[index].dtype.c_str()
             : nullptr;
}

int tfmCallTensorUpdated(const TfmCall *call, int output, int index) {
  return call->validIndex(output, index) &&
         call->specs(output)[index].updated;
}

int tfmCallTensorRank(const TfmCall *call, int output, int index) {
  return call->validIndex(output, index)
             ? int(call->specs(output)[index].shape.size())
             : -1;
}

const int64_t *tfmCallTensorShape(const TfmCall *call, int output,
                                  int index) {
  return call->validIndex(output, index)
             ? call->specs(output)[index].shape.data()
             : nullptr;
}

int tfmCallFindTensor(const TfmCall *call, int output, const char *name) {
  const std::vector<TensorSignature> &specs = call->specs(output);
  for (size_t i = 0; i < specs.size(); ++i)
    if (name && specs[i].name == name)
      return i;
  return -1;
}

tfm_status tfmCallSetInput(TfmCall *call, int index, const char *dtype,
                           int rank, const int64_t *shape, const void *data) {
  if (!call->validIndex(0, index))
    return call->badIndex(0, index);
  // Inputs are only read: the entry point's ABI takes them as read-only.
  return call->bind(0, index, dtype, rank, shape, const_cast<void *>(data),
                    call->entry->inputs[index].shape, /*onDevice=*/false);
}

tfm_status tfmCallSetInputDevice(TfmCall *call, int index, const char *dtype,
                                 int rank, const int64_t *shape,
                                 const void *device) {
  if (!call->validIndex(0, index))
    return call->badIndex(0, index);
  return call->bind(0, index, dtype, rank, shape, const_cast<void *>(device),
                    call->entry->inputs[index].shape, /*onDevice=*/true);
}

tfm_status tfmCallOutputShape(const TfmCall *call, int index,
                              int64_t *shape) {
  if (!call->validIndex(1, index))
    return call->badIndex(1, index);
  const TensorSignature &spec = call->entry->outputs[index];
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    if (spec.shape[d] >= 0) {
      shape[d] = spec.shape[d];
      continue;
    }
    if (d >= spec.dimSources.size() || !spec.dimSources[d])
      return fail(TFM_ERROR_SHAPE, "cannot size output '" + spec.name +
                                       "': its dim " + std::to_string(d) +
                                       " does not follow an input dim");
    const DimSource &source = *spec.dimSources[d];
    const Binding &input = call->inputs[source.input];
    if (!input.bound)
      return fail(TFM_ERROR, "cannot size output '" + spec.name +
                                 "' before input '" +
                                 call->entry->inputs[source.input].name +
                                 "' is bound");
    shape[d] = input.shape[source.dim];
  }
  return TFM_OK;
}

tfm_status tfmCallSetOutput(TfmCall *call, int index, const char *dtype,
                            int rank, const int64_t *shape, void *data) {
  if (!call->validIndex(1, index))
    return call->badIndex(1, index);
  return call->bind(1, index, dtype, rank, shape, data,
                    call->expectedOutputShape(index), /*onDevice=*/false);
}

tfm_status tfmCallSetOutputDevice(TfmCall *call, int index, const char *dtype,
                                  int rank, const int64_t *shape,
                                  void *device) {
  if (!call->validIndex(1, index))
    return call->badIndex(1, index);
  return call->bind(1, index, dtype, rank, shape, device,
                    call->expectedOutputShape(index), /*onDevice=*/true);
}

tfm_status tfmDeviceAlloc(uint64_t bytes, void **device) {
  std::string error;
  if (bytes > kMaxArrayBytes)
    return fail(TFM_ERROR_SHAPE, "device arrays are at most 2^47 bytes");
  if (!(*device = tfm::cuda::allocate(bytes, error)))
    return fail(TFM_ERROR_DEVICE, error);
  return TFM_OK;
}

tfm_status tfmDeviceFree(void *device) {
  std::string error;
  if (!tfm::cuda::release(device, error))
    return fail(TFM_ERROR_DEVICE, error);
  return TFM_OK;
}

tfm_status tfmDeviceUpload(void *device, const void *host, uint64_t bytes) {
  std::string error;
  if (!tfm::cuda::upload(device, host, bytes, error))
    return fail(TFM_ERROR_DEVICE, error);
  return TFM_OK;
}

tfm_status tfmDeviceDownload(void *host, const void *device,
                             uint64_t bytes) {
  std::string error;
  if (!tfm::cuda::download(host, device, bytes, error))
    return fail(TFM_ERROR_DEVICE, error);
  return TFM_OK;
}

tfm_status tfmCallInvoke(TfmCall *call, int32_t *checkIndex) {
  if (checkIndex)
    *checkIndex = 0;
  call->kernelSeconds = -1;
  const EntryPoint &entry = *call->entry;
  // Every array, its name and its byte range.
  struct Range {
    const std::string *name;
    uintptr_t begin, end;
  };
  std::vector<Range> ranges;
  std::vector<bool> written; // outputs, and inputs updated in place
  for (int output = 0; output < 2; ++output) {
    for (size_t i = 0; i < call->specs(output).size(); ++i) {
      const Binding &binding = call->bindings(output)[i];
      const TensorSignature &spec = call->specs(output)[i];
      if (!binding.bound)
        return fail(TFM_ERROR, std::string(output ? "output" : "input") +
                                   " '" + spec.name + "' is not bound");
      uint64_t bytes;
      byteSize(binding.shape, spec.dtype, bytes);
      auto begin = reinterpret_cast<uintptr_t>(binding.data);
      ranges.push_back({&spec.name, begin, begin + bytes});
      written.push_back(output || spec.updated);
    }
  }
  // What is written (outputs, inputs updated in place) must not overlap
  // any other array (the ABI's arrays are `restrict`).
  for (size_t o = 0; o < ranges.size(); ++o)
    for (size_t other = 0; other < ranges.size(); ++other)
      if (written[o] && other != o && ranges[o].begin < ranges[other].end &&
          ranges[other].begin < ranges[o].end)
        return fail(TFM_ERROR_VALUE,
                    o < entry.inputs.size()
                        ? "input '" + *ranges[o].name + "' overlaps '" +
                              *ranges[other].name +
                              "': an array updated in place must not alias "
                              "another"
                        : "output '" + *ranges[o].name + "' overlaps '" +
                              *ranges[other].name +
                              "': inputs and outputs must not alias");

  // A cuda library computes in device memory: host arrays are copied there,
  // device arrays are used in place.
  bool onDevice = call->library->deviceError != nullptr;
  tfm::cuda::DeviceCopies copies;
  std::vector<void *> addresses;
  for (int output = 0; output < 2; ++output) {
    for (size_t i = 0; i < call->specs(output).size(); ++i) {
      const Binding &binding = call->bindings(output)[i];
      if (!onDevice || binding.onDevice) {
        addresses.push_back(binding.data);
        continue;
      }
      uint64_t bytes;
      byteSize(binding.shape, call->specs(output)[i].dtype, bytes);
      std::string error;
      void *device = copies.upload(output ? nullptr : binding.data, bytes,
                                   error);
      if (!device)
        return fail(TFM_ERROR_DEVICE, error);
      addresses.push_back(device);
    }
  }
  if (onDevice) {
    // The uploads, and whatever the caller queued on its device arrays
    // (PyTorch's stream, say), are done before the kernels start.
    std::string error;
    if (!copies.finishUploads(error))
      return fail(TFM_ERROR_DEVICE, error);
  }

  // One memref descriptor {allocated, aligned, offset, sizes, strides} per
  // input then output, passed as an array of pointers.
  std::vector<std::vector<int64_t>> descriptors;
  size_t next = 0;
  for (int output = 0; output < 2; ++output) {
    for (const Binding &binding : call->bindings(output)) {
      int64_t rank = binding.shape.size();
      std::vector<int64_t> words(3 + 2 * rank);
      words[0] = words[1] = reinterpret_cast<int64_t>(addresses[next++]);
      int64_t stride = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        words[3 + d] = binding.shape[d];
        words[3 + rank + d] = stride;
        stride *= binding.shape[d];
      }
      descriptors.push_back(std::move(words));
    }
  }
  std::vector<void *> pointers;
  for (std::vector<int64_t> &words : descriptors)
    pointers.push_back(words.data());
  int32_t status = call->function(pointers.data());
  if (status == 0 && call->library->deviceSeconds)
    call->kernelSeconds = call->library->deviceSeconds();
  if (status < 0 && onDevice)
    return fail(TFM_ERROR_DEVICE, "'" + entry.name + "' failed on the " +
                                      "GPU: " + call->library->deviceError());
  if (status == 0 && onDevice) {
    // Outputs and inputs updated in place come back from the device.
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (!written[i])
        continue;
      bool output = i >= entry.inputs.size();
      size_t index = output ? i - entry.inputs.size() : i;
      const Binding &binding = call->bindings(output)[index];
      if (binding.onDevice)
        continue;
      uint64_t bytes;
      byteSize(binding.shape, call->specs(output)[index].dtype, bytes);
      std::string error;
      if (!copies.download(binding.data, addresses[i], bytes, error))
        return fail(TFM_ERROR_DEVICE, error);
    }
  }
  if (status == 0)
    return TFM_OK;
  if (checkIndex)
    *checkIndex = status;
  std::string what = status > 0 && size_t(status) <= entry.checks.size()
                         ? entry.checks[status - 1]
                         : "unknown check";
  return fail(TFM_ERROR_CHECK, "'" + entry.name +
                                   "' refused its inputs (status " +
                                   std::to_string(status) + "): " + what);
}

tfm_status tfmCallKernelSeconds(const TfmCall *call, double *seconds) {
  if (!call->library->deviceError)
    return fail(TFM_ERROR_DEVICE, "'" + call->library->path +
                                      "' runs on the CPU: its calls have no "
                                      "kernel time apart");
  if (!call->library->deviceSeconds)
    return fail(TFM_ERROR, "'" + call->library->path +
                               "' does not time its kernels: compile it "
                               "again with this version of tfm-compile");
  if (call->kernelSeconds < 0)
    return fail(TFM_ERROR,
                "'" + call->entry->name + "' has not completed a call yet");
  *seconds = call->kernelSeconds;
  return TFM_OK;
}

} // extern "C"
