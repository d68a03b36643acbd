"""Calls compiled tfm entry points with NumPy arrays.

Every library tfm-compile builds embeds a manifest of its entry points
(names, shapes and dtypes of inputs and outputs); the runtime library
`libtfm_runtime.so` (C API: include/tfm-c/Runtime.h, the one tfm-run uses)
loads it, checks each array against it before anything runs, sizes the
outputs and calls the entry point. This module binds NumPy arrays to it
through ctypes; the caller's arrays are passed without copies where their
layout allows, and inputs and outputs must not alias.

A library compiled for a GPU (--target=cuda) takes NumPy arrays too (copied
to the device and back around each call) and `DeviceArray`s, which stay in
device memory and are used in place: weights uploaded once serve every
call, and a call on device arrays times the kernels alone.
"""

import ctypes
import json
import mmap
import os

import numpy as np

from . import _locate

NUMPY_DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
                "bf16": np.dtype(np.uint16), "i32": np.dtype(np.int32),
                "i64": np.dtype(np.int64), "i1": np.dtype(np.bool_)}
# The runtime's name of each NumPy dtype it takes; bf16 has no NumPy dtype
# and travels as uint16 bit patterns (see `to_bf16`).
_RUNTIME_DTYPES = {np.dtype(np.float32): b"f32", np.dtype(np.float16): b"f16",
                   np.dtype(np.uint16): b"bf16", np.dtype(np.int32): b"i32",
                   np.dtype(np.int64): b"i64", np.dtype(np.bool_): b"i1"}

# The entry point that packs a library's f32 weights once (tfm-compile's
# default; kPrepareWeightsEntry, tfm/Runtime/Manifest.h).
PREPARE_WEIGHTS = "prepare_weights"

# tfm_status (tfm-c/Runtime.h).
_OK, _ERROR_DTYPE, _ERROR_SHAPE, _ERROR_VALUE, _ERROR_CHECK = 0, 2, 3, 4, 5


class ShapeError(ValueError):
    pass


class RuntimeCheckError(ValueError):
    """An entry point refused its inputs (it computed nothing)."""


def _runtime_path():
    """libtfm_runtime.so: $TFM_RUNTIME_LIBRARY, else $TFM_BUILD_DIR/lib, else
    the one `cmake --install` put beside the tools, else build/ of the source
    checkout this package is in."""
    path, candidates = _locate.locate("TFM_RUNTIME_LIBRARY", "lib/libtfm_runtime.so",
                                      "LIB_DIR", lambda path: path.exists())
    if path is None:
        raise RuntimeError("cannot find libtfm_runtime.so: set TFM_RUNTIME_LIBRARY "
                           "to its path or TFM_BUILD_DIR to a build directory "
                           "(looked at: " + ", ".join(map(str, candidates)) + ")")
    return path


_C = None


def _c():
    """The runtime's C API, loaded once."""
    global _C
    if _C is None:
        path = _runtime_path()
        try:
            c = ctypes.CDLL(str(path))
        except OSError as error:
            raise RuntimeError(f"cannot load {path}: {error}") from None
        pointer, status = ctypes.c_void_p, ctypes.c_int
        shape = ctypes.POINTER(ctypes.c_int64)
        for name, restype, argtypes in [
                ("tfmLastError", ctypes.c_char_p, []),
                ("tfmLibraryOpen", status, [ctypes.c_char_p, ctypes.POINTER(pointer)]),
                ("tfmLibraryClose", None, [pointer]),
                ("tfmLibraryManifest", ctypes.c_char_p, [pointer]),
                ("tfmCallCreate", status, [pointer, ctypes.c_char_p, ctypes.POINTER(pointer)]),
                ("tfmCallDestroy", None, [pointer]),
                ("tfmCallSetInput", status,
                 [pointer, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, shape, pointer]),
                ("tfmCallOutputShape", status, [pointer, ctypes.c_int, shape]),
                ("tfmCallSetOutput", status,
                 [pointer, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, shape, pointer]),
                ("tfmCallInvoke", status, [pointer, ctypes.POINTER(ctypes.c_int32)]),
                ("tfmCallKernelSeconds", status,
                 [pointer, ctypes.POINTER(ctypes.c_double)]),
                ("tfmCallSetInputDevice", status,
                 [pointer, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, shape, pointer]),
                ("tfmCallSetOutputDevice", status,
                 [pointer, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, shape, pointer]),
                ("tfmDeviceAlloc", status, [ctypes.c_uint64, ctypes.POINTER(pointer)]),
                ("tfmDeviceFree", status, [pointer]),
                ("tfmDeviceUpload", status, [pointer, pointer, ctypes.c_uint64]),
                ("tfmDeviceDownload", status, [pointer, pointer, ctypes.c_uint64])]:
            function = getattr(c, name)
            function.restype, function.argtypes = restype, argtypes
        _C = c
    return _C


def _message():
    return _c().tfmLastError().decode(errors="replace")


def _shape(values):
    return (ctypes.c_int64 * max(len(values), 1))(*values)


class _Call:
    """One call of an entry point (tfmCall*), destroyed with this object."""

    def __init__(self, entry):
        self.entry = entry
        handle = ctypes.c_void_p()
        self._raise(_c().tfmCallCreate(entry._library._handle,
                                       entry.name.encode(), ctypes.byref(handle)))
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            _c().tfmCallDestroy(self._handle)

    def _raise(self, status):
        """Raises the error the runtime reported for `status` (if any)."""
        if status == _OK:
            return
        message = f"{self.entry.name}: {_message()}"
        raise {_ERROR_DTYPE: TypeError, _ERROR_SHAPE: ShapeError,
               _ERROR_VALUE: ValueError, _ERROR_CHECK: RuntimeCheckError
               }.get(status, RuntimeError)(message)

    def bind(self, output, index, array):
        if isinstance(array, DeviceArray):
            setter = _c().tfmCallSetOutputDevice if output else _c().tfmCallSetInputDevice
            self._raise(setter(self._handle, index, array.dtype.encode(), array.ndim,
                               _shape(array.shape), array.pointer))
            return
        setter = _c().tfmCallSetOutput if output else _c().tfmCallSetInput
        self._raise(setter(self._handle, index, _RUNTIME_DTYPES[array.dtype],
                           array.ndim, _shape(array.shape),
                           array.ctypes.data_as(ctypes.c_void_p)))

    def output_shape(self, index, rank):
        shape = _shape([0] * rank)
        self._raise(_c().tfmCallOutputShape(self._handle, index, shape))
        return tuple(shape[:rank])

    def invoke(self):
        """The status of the entry point: 0, or 1 + the failed check."""
        check = ctypes.c_int32()
        status = _c().tfmCallInvoke(self._handle, ctypes.byref(check))
        if status == _ERROR_CHECK:
            return check.value
        self._raise(status)
        return 0

    def kernel_seconds(self):
        seconds = ctypes.c_double()
        self._raise(_c().tfmCallKernelSeconds(self._handle, ctypes.byref(seconds)))
        return seconds.value


class EntryPoint:
    """A callable entry point: `outputs = entry(*inputs)` or by name."""

    def __init__(self, library, spec):
        self._library = library
        self.spec = spec
        self.name = spec["name"]
        self.inputs = spec["inputs"]
        self.outputs = spec["outputs"]

    def _supported(self, kind, spec, array):
        """Raises unless the runtime can take `array`'s dtype at all (it
        checks the rest against the manifest)."""
        if array.dtype not in _RUNTIME_DTYPES:
            expected = NUMPY_DTYPES[spec["dtype"]]
            raise TypeError(f"{self.name}: {kind} '{spec['name']}' must be "
                            f"{spec['dtype']} ({expected}), got {array.dtype}")

    def _bind(self, args, named):
        """The inputs in manifest order, given by position or by name."""
        if args and named:
            raise TypeError(f"{self.name}: pass inputs by position or by name, not both")
        if not named:
            return args
        missing = [s["name"] for s in self.inputs if s["name"] not in named]
        unknown = set(named) - {s["name"] for s in self.inputs}
        if missing or unknown:
            prepared = self._library.entry_points.get(PREPARE_WEIGHTS)
            hint = ""
            if prepared and {s["name"] for s in prepared.outputs} & set(missing):
                hint = (" (the library packs its f32 weights once: pass the "
                        "parameters through Library.prepare)")
            raise TypeError(f"{self.name}: missing inputs {missing}, "
                            f"unknown inputs {sorted(unknown)}{hint}")
        return [named[s["name"]] for s in self.inputs]

    def _inputs(self, args):
        """`args` as C-contiguous, aligned arrays (copies only where the
        layout requires one; values are never converted)."""
        if len(args) != len(self.inputs):
            raise TypeError(f"{self.name}: expected {len(self.inputs)} inputs, "
                            f"got {len(args)}")
        inputs = []
        for spec, value in zip(self.inputs, args):
            if isinstance(value, DeviceArray):  # checked by the runtime
                inputs.append(value)
                continue
            try:
                array = np.asarray(value)
            except ValueError as error:  # e.g. a ragged list
                raise TypeError(f"{self.name}: input '{spec['name']}' is not "
                                f"an array: {error}") from None
            self._supported("input", spec, array)
            if spec.get("updated"):
                # Written back in place (a KV cache): a copy would lose it.
                where = f"{self.name}: input '{spec['name']}' is updated in place and"
                if not isinstance(value, np.ndarray):
                    raise TypeError(f"{where} must be a numpy.ndarray, "
                                    f"got {type(value).__name__}")
                if not (array.flags.c_contiguous and array.flags.aligned):
                    raise ValueError(f"{where} must be C-contiguous and aligned")
                if not array.flags.writeable:
                    raise ValueError(f"{where} is read-only")
                inputs.append(array)
                continue
            inputs.append(np.require(array, requirements=["C", "A"]))
        return inputs

    def _outputs(self, out, inputs):
        """The caller's output buffers, checked where NumPy knows more than
        the runtime: the compiled code writes into them in place."""
        count = len(self.outputs)
        if not isinstance(out, (list, tuple)) or len(out) != count:
            got = f"{len(out)}" if isinstance(out, (list, tuple)) else type(out).__name__
            raise TypeError(f"{self.name}: out= must be a list of {count} "
                            f"output arrays, got {got}")
        for spec, array in zip(self.outputs, out):
            where = f"{self.name}: output '{spec['name']}'"
            if isinstance(array, DeviceArray):
                continue
            if not isinstance(array, np.ndarray):
                raise TypeError(f"{where} must be a numpy.ndarray, "
                                f"got {type(array).__name__}")
            self._supported("output", spec, array)
            if not (array.flags.c_contiguous and array.flags.aligned):
                raise ValueError(f"{where} must be C-contiguous and aligned")
            if not array.flags.writeable:
                raise ValueError(f"{where} is read-only")
        return list(out)

    def _prepare(self, inputs, out):
        """A `_Call` with `inputs` and `out` (None: allocated) bound, and the
        outputs."""
        call = _Call(self)
        for i, array in enumerate(inputs):
            call.bind(False, i, array)
        if out is None:
            # Outputs where the inputs are: in device memory if any is.
            on_device = any(isinstance(array, DeviceArray) for array in inputs)
            out = [(DeviceArray if on_device else np.empty)(
                       call.output_shape(i, len(spec["shape"])),
                       spec["dtype"] if on_device else NUMPY_DTYPES[spec["dtype"]])
                   for i, spec in enumerate(self.outputs)]
        for i, array in enumerate(out):
            call.bind(True, i, array)
        call.arrays = list(inputs) + list(out)  # alive as long as the call
        return call, out

    def _run(self, inputs, out):
        """(status, outputs) of one call."""
        call, out = self._prepare(inputs, out)
        return call.invoke(), out

    def bind(self, *args, out=None, **named):
        """A `BoundCall` of this entry point on these arrays, checked once:
        calling it runs the entry point again on them (benchmarks, loops
        that update the arrays in place)."""
        inputs = self._inputs(self._bind(args, named))
        outputs = None if out is None else self._outputs(out, inputs)
        return BoundCall(self, *self._prepare(inputs, outputs))

    def _failure(self, status):
        checks = self.spec.get("checks", [])
        what = checks[status - 1] if 0 < status <= len(checks) else "unknown check"
        return RuntimeCheckError(f"{self.name}: runtime check {status} failed: {what}")

    def __call__(self, *args, out=None, **named):
        inputs = self._inputs(self._bind(args, named))
        outputs = None if out is None else self._outputs(out, inputs)
        status, outputs = self._run(inputs, outputs)
        if status != 0:
            raise self._failure(status)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


class BoundCall:
    """An entry point bound to its arrays (`EntryPoint.bind`)."""

    def __init__(self, entry, call, outputs):
        self._entry, self._call = entry, call
        self.outputs = outputs

    def __call__(self):
        """Runs the entry point; raises RuntimeCheckError if it refused its
        inputs."""
        status = self._call.invoke()
        if status != 0:
            raise self._entry._failure(status)
        return self.outputs[0] if len(self.outputs) == 1 else tuple(self.outputs)

    @property
    def kernel_seconds(self):
        """The GPU time of the last call's kernels (a cuda library): without
        the copies of host arrays and the host's own time."""
        return self._call.kernel_seconds()


class Library:
    """A compiled tfm shared library."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"no compiled library at {self.path}")
        handle = ctypes.c_void_p()
        if _c().tfmLibraryOpen(self.path.encode(), ctypes.byref(handle)) != _OK:
            raise RuntimeError(_message())
        self._handle = handle
        manifest = json.loads(_c().tfmLibraryManifest(handle).decode())
        self.device = manifest["device"]
        self.entry_points = {spec["name"]: EntryPoint(self, spec)
                             for spec in manifest["entry_points"]}

    def __del__(self):
        if getattr(self, "_handle", None):
            _c().tfmLibraryClose(self._handle)

    def __getitem__(self, name):
        try:
            return self.entry_points[name]
        except KeyError:
            raise KeyError(f"{self.path} has no entry point '{name}'") from None

    def given_inputs(self, name):
        """The input specs of entry point `name` as a caller gives them:
        for a library that packs its weights once, with the weights
        that `prepare_weights` packs (after the others) in place of their
        packed forms, which `prepare` makes from them."""
        inputs = self[name].inputs
        entry = self.entry_points.get(PREPARE_WEIGHTS)
        if entry is None or name == PREPARE_WEIGHTS:
            return list(inputs)
        made = {spec["name"] for spec in entry.outputs}
        given = [spec for spec in inputs if spec["name"] not in made]
        names = {spec["name"] for spec in given}
        return given + [spec for spec in entry.inputs if spec["name"] not in names]

    def prepare(self, params):
        """`params` (arrays by name) as the entry points take them. For a
        library that packs its weights once (tfm-compile's default): with
        the inputs `<weight>.packed` that its `prepare_weights` entry point
        makes once, in place of the weights that no other entry point reads
        unpacked (they can be let go). Any other library takes `params` as
        they are.
        Returns a new dict."""
        entry = self.entry_points.get(PREPARE_WEIGHTS)
        if entry is None:
            return dict(params)
        missing = [s["name"] for s in entry.inputs if s["name"] not in params]
        if missing:
            raise KeyError(f"{PREPARE_WEIGHTS}: parameters missing: {missing}")
        made = [_huge_page_array(spec["shape"], NUMPY_DTYPES[spec["dtype"]])
                for spec in entry.outputs]
        entry(**{s["name"]: params[s["name"]] for s in entry.inputs}, out=made)
        taken = {s["name"] for name, other in self.entry_points.items()
                 if name != PREPARE_WEIGHTS for s in other.inputs}
        packed_from = {s["name"] for s in entry.inputs} - taken
        prepared = {name: array for name, array in params.items()
                    if name not in packed_from}
        prepared.update((spec["name"], array) for spec, array in zip(entry.outputs, made))
        return prepared

    def call(self, name, inputs, outputs):
        """Runs entry point `name` on `inputs`, writing into `outputs`;
        returns its status (0, or 1 + index of the failed runtime check).
        The arrays are checked as by `EntryPoint`."""
        entry = self[name]
        inputs = entry._inputs(inputs)
        status, _ = entry._run(inputs, entry._outputs(outputs, inputs))
        return status


_HUGE_PAGE = 2 << 20


def _huge_page_array(shape, dtype):
    """An array in memory the kernel backs with 2 MiB pages where it can
    (transparent huge pages, asked for with madvise before the first touch):
    the packed weights' panels are read in place, column block by column
    block, and in 4 KiB pages their TLB misses cost what packing per call
    did (f32 projections against packing per call, Intel Xeon: 0.97-1.02x
    at 128 rows and 0.89-0.94x at 512 in 4 KiB pages; 1.06-1.11x and
    1.01x in 2 MiB pages)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if size < _HUGE_PAGE:
        return np.empty(shape, dtype)
    region = mmap.mmap(-1, size + _HUGE_PAGE,
                       flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        region.madvise(mmap.MADV_HUGEPAGE)
    raw = np.frombuffer(region, np.uint8)  # keeps `region` alive
    start = -raw.ctypes.data % _HUGE_PAGE
    return raw[start:start + size].view(dtype).reshape(shape)


class DeviceArray:
    """A dense, row-major array in the device memory of the GPU that cuda
    libraries run on (TFM_CUDA_DEVICE). Entry points of a cuda library read
    and write it in place. `dtype` is the manifest's name ("f32", "f16",
    "bf16", "i32", "i64", "i1") or a NumPy dtype (uint16 for bf16)."""

    def __init__(self, shape, dtype):
        self._setup(shape, dtype)
        pointer = ctypes.c_void_p()
        if _c().tfmDeviceAlloc(self.nbytes, ctypes.byref(pointer)) != _OK:
            raise RuntimeError(_message())
        self.pointer, self._owner, self._owned = pointer.value, None, True

    def _setup(self, shape, dtype):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype if dtype in NUMPY_DTYPES else _RUNTIME_DTYPES[np.dtype(dtype)].decode()
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * NUMPY_DTYPES[self.dtype].itemsize

    @classmethod
    def wrap(cls, pointer, shape, dtype, owner):
        """Device memory allocated elsewhere in this process (e.g. a
        contiguous PyTorch CUDA tensor's `data_ptr()`), kept alive by
        holding `owner` and never freed by this array."""
        array = cls.__new__(cls)
        array._setup(shape, dtype)
        array.pointer, array._owner, array._owned = pointer, owner, False
        return array

    @classmethod
    def from_numpy(cls, array):
        """A device copy of a NumPy array (bf16 as uint16 bit patterns)."""
        array = np.ascontiguousarray(array)
        device = cls(array.shape, array.dtype)
        device.upload(array)
        return device

    @property
    def ndim(self):
        return len(self.shape)

    def upload(self, array):
        """Copies a NumPy array of this shape and dtype into the array."""
        array = np.ascontiguousarray(array)
        if array.shape != self.shape or _RUNTIME_DTYPES.get(array.dtype) != self.dtype.encode():
            raise ValueError(f"cannot upload a {array.dtype} array of shape {array.shape} "
                             f"into a {self.dtype} device array of shape {self.shape}")
        if _c().tfmDeviceUpload(self.pointer, array.ctypes.data, self.nbytes) != _OK:
            raise RuntimeError(_message())

    def numpy(self):
        """A host copy (bf16 as uint16 bit patterns)."""
        host = np.empty(self.shape, NUMPY_DTYPES[self.dtype])
        if _c().tfmDeviceDownload(host.ctypes.data, self.pointer, self.nbytes) != _OK:
            raise RuntimeError(_message())
        return host

    def __del__(self):
        # Only memory this array allocated: a wrapped one belongs to its owner.
        if getattr(self, "_owned", False) and self.pointer:
            _c().tfmDeviceFree(self.pointer)

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype})"


def to_bf16(array):
    """Rounds a float array to bf16 (nearest even), as uint16 bit patterns.
    A NaN becomes the quiet NaN of its sign: rounding its bits could carry
    into the exponent (an infinity) or past the sign bit."""
    bits = np.asarray(array, dtype=np.float32).view(np.uint32).astype(np.int64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, (bits >> 16) & 0x8000 | 0x7FC0, rounded).astype(np.uint16)


def from_bf16(bits):
    """The float32 values of bf16 bit patterns."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
