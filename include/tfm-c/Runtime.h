/*===- tfm-c/Runtime.h - the tfm runtime's C API ------------------*- C -*-===*\
|*                                                                            *|
|* Runs the entry points of a library compiled by tfm-compile: loads it,      *|
|* reads its manifest, binds inputs and outputs by name or position, checks   *|
|* every dtype and shape against the manifest (and that no output overlaps    *|
|* another array) before anything runs, sizes outputs from the inputs, calls  *|
|* the entry point and reports its runtime checks. tfm-run and the Python     *|
|* package (through ctypes) both run libraries through it.                    *|
|*                                                                            *|
|* libtfm_runtime.so depends on nothing but the C and C++ runtimes: it runs   *|
|* where neither LLVM nor MLIR is installed. It drives libraries whose        *|
|* manifest names the device "cpu" or "cuda"; a cuda library's arrays are     *|
|* copied to and from device memory around each call, through the NVIDIA      *|
|* driver found at run time (libcuda.so.1; no CUDA toolkit needed).           *|
|*                                                                            *|
|* Every function that can fail returns a tfm_status; on failure,             *|
|* tfmLastError() describes it (per thread, until the next failure).         *|
|* Arrays are dense, row-major and owned by the caller, which keeps them      *|
|* alive until tfmCallInvoke returns. Element types are named as in the       *|
|* manifest: "f32", "f16", "bf16", "i32", "i64", "i1".                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TFM_C_RUNTIME_H
#define TFM_C_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFM_C_API __attribute__((visibility("default")))

typedef enum {
  TFM_OK = 0,
  /* Anything not listed below: a library that cannot be loaded, an unknown
     entry point or tensor, an array not bound. */
  TFM_ERROR = 1,
  /* An array of another element type than the manifest's. */
  TFM_ERROR_DTYPE = 2,
  /* An array of another rank or size than the manifest's (static dims) or
     than the inputs imply (outputs sized from inputs). */
  TFM_ERROR_SHAPE = 3,
  /* An array the call cannot use as it is: an output that overlaps another
     array, int64 token ids that do not fit the int32 the entry takes. */
  TFM_ERROR_VALUE = 4,
  /* The entry point refused its inputs (a runtime check failed, e.g. a
     token id out of range): it computed nothing. */
  TFM_ERROR_CHECK = 5,
  /* The library runs on a device this runtime does not drive, or the call
     failed there: no driver or GPU, out of device memory, a kernel fault. */
  TFM_ERROR_DEVICE = 6,
} tfm_status;

typedef struct TfmLibrary TfmLibrary;
typedef struct TfmCall TfmCall;

/* What the last failing call on this thread reported ("" if none). */
TFM_C_API const char *tfmLastError(void);

/* The runtime's version, "tfm 0.1.0". */
TFM_C_API const char *tfmRuntimeVersion(void);

/* Loads the library at `path` and reads its manifest. */
TFM_C_API tfm_status tfmLibraryOpen(const char *path, TfmLibrary **library);
TFM_C_API void tfmLibraryClose(TfmLibrary *library);
/* The manifest as the library embeds it (JSON, tfm/Runtime/Manifest.h). */
TFM_C_API const char *tfmLibraryManifest(const TfmLibrary *library);
/* Where the library's kernels run ("cpu" or "cuda"). */
TFM_C_API const char *tfmLibraryDevice(const TfmLibrary *library);
/* The number of entry points and the name of entry point `index`. */
TFM_C_API int tfmLibraryEntryCount(const TfmLibrary *library);
TFM_C_API const char *tfmLibraryEntryName(const TfmLibrary *library,
                                          int index);
/* The floating-point operations of one forward pass over `batch` x
   `length` tokens, for libraries compiled from a model description. */
TFM_C_API tfm_status tfmLibraryFlops(const TfmLibrary *library, int64_t batch,
                                     int64_t length, double *flops);

/* A call of entry point `entry` (NULL: the library's only one, or its
   `forward` when it has several, as a model description's has). The
   library must outlive the call; a call may be invoked repeatedly. */
TFM_C_API tfm_status tfmCallCreate(TfmLibrary *library, const char *entry,
                                   TfmCall **call);
TFM_C_API void tfmCallDestroy(TfmCall *call);
TFM_C_API const char *tfmCallEntryName(const TfmCall *call);

/* The entry point's inputs (`output` = 0) or outputs (1): how many, their
   names, element types, ranks and static shapes (-1: a dynamic dim). */
TFM_C_API int tfmCallTensorCount(const TfmCall *call, int output);
TFM_C_API const char *tfmCallTensorName(const TfmCall *call, int output,
                                        int index);
TFM_C_API const char *tfmCallTensorDtype(const TfmCall *call, int output,
                                         int index);
TFM_C_API int tfmCallTensorRank(const TfmCall *call, int output, int index);
TFM_C_API const int64_t *tfmCallTensorShape(const TfmCall *call, int output,
                                            int index);
/* 1 if input `index` is updated in place (a KV cache: the entry point writes
   the new value back into the array bound to it, which must be writable);
   0 if not, or for an output. */
TFM_C_API int tfmCallTensorUpdated(const TfmCall *call, int output, int index);
/* The index of the input or output called `name`, or -1. */
TFM_C_API int tfmCallFindTensor(const TfmCall *call, int output,
                                const char *name);

/* Binds input `index` to `data` of `dtype` and `shape`, checked against the
   manifest. int64 data for an int32 input (token ids as NumPy and PyTorch
   make them) is narrowed into a copy the call keeps. */
TFM_C_API tfm_status tfmCallSetInput(TfmCall *call, int index,
                                     const char *dtype, int rank,
                                     const int64_t *shape, const void *data);
/* The shape output `index` has for the inputs bound so far (`shape` holds
   its rank). Fails when a dim follows no input dim or an unbound one. */
TFM_C_API tfm_status tfmCallOutputShape(const TfmCall *call, int index,
                                        int64_t *shape);
/* Binds output `index` to `data`, which must have the output's dtype and
   the shape tfmCallOutputShape gives (any size in a dim that follows no
   input dim). */
TFM_C_API tfm_status tfmCallSetOutput(TfmCall *call, int index,
                                      const char *dtype, int rank,
                                      const int64_t *shape, void *data);
/* Device arrays of a cuda library: memory on the GPU that cuda libraries
   run on (TFM_CUDA_DEVICE, default 0), from tfmDeviceAlloc or from another
   CUDA allocator in the process (PyTorch's), bound with the two functions
   below. A call reads and writes them in place, without copies, so that
   weights are uploaded once and stay on the GPU across calls. Before the
   kernels start, the call waits for all work queued on the GPU. Binding
   one to a cpu library is TFM_ERROR_DEVICE. */
TFM_C_API tfm_status tfmCallSetInputDevice(TfmCall *call, int index,
                                           const char *dtype, int rank,
                                           const int64_t *shape,
                                           const void *device);
TFM_C_API tfm_status tfmCallSetOutputDevice(TfmCall *call, int index,
                                            const char *dtype, int rank,
                                            const int64_t *shape,
                                            void *device);
/* `bytes` of device memory; TFM_ERROR_DEVICE without a driver or GPU, or
   when the GPU's memory is exhausted. */
TFM_C_API tfm_status tfmDeviceAlloc(uint64_t bytes, void **device);
TFM_C_API tfm_status tfmDeviceFree(void *device);
/* Synchronous copies of `bytes` between host and device memory. */
TFM_C_API tfm_status tfmDeviceUpload(void *device, const void *host,
                                     uint64_t bytes);
TFM_C_API tfm_status tfmDeviceDownload(void *host, const void *device,
                                       uint64_t bytes);

/* Runs the entry point on the bound arrays, once every input and output is
   bound and no output overlaps another array. TFM_ERROR_CHECK, with the
   check's message, when it refused its inputs; `*checkIndex` (if not NULL)
   is then the failed check's 1-based index, else 0. */
TFM_C_API tfm_status tfmCallInvoke(TfmCall *call, int32_t *checkIndex);

/* The GPU time of the kernels of the call's last successful tfmCallInvoke,
   in seconds: on each stream the call used, from the first kernel's start to
   the last one's end, summed. The copies of host arrays to and from the
   device and the host's own time are not in it. TFM_ERROR_DEVICE for a cpu
   library, TFM_ERROR before a call has completed. */
TFM_C_API tfm_status tfmCallKernelSeconds(const TfmCall *call, double *seconds);

#ifdef __cplusplus
}
#endif

#endif /* TFM_C_RUNTIME_H */
