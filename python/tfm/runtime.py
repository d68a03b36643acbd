"""Calls compiled tfm entry points with NumPy arrays.

An entry point `@name` is exported as `_mlir_ciface_name(descriptor*...)`:
one pointer to a memref descriptor per input, then one per output
(docs/DESIGN.md, entry-point ABI). The caller allocates the outputs; inputs
and outputs must not alias. Every library embeds a JSON manifest (symbol
`tfm_manifest`) with the names, shapes and dtypes of its entry points, which
`EntryPoint` uses to check inputs and allocate outputs.
"""

import json
import os

import ctypes

import numpy as np

# NumPy dtypes of the element types the entry points use. bf16 has no NumPy
# dtype: such buffers travel as uint16 bit patterns (see `to_bf16`).
_SUPPORTED = {
    np.dtype(np.float32),
    np.dtype(np.float16),
    np.dtype(np.uint16),
    np.dtype(np.int32),
    np.dtype(np.int64),
    np.dtype(np.bool_),
}

_DESCRIPTORS = {}


def _descriptor_type(rank):
    """ctypes struct of a rank-`rank` memref descriptor:
    {allocated, aligned, offset, sizes[rank], strides[rank]}."""
    if rank not in _DESCRIPTORS:
        fields = [
            ("allocated", ctypes.c_void_p),
            ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64),
        ]
        if rank:
            fields += [
                ("sizes", ctypes.c_int64 * rank),
                ("strides", ctypes.c_int64 * rank),
            ]
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESCRIPTORS[rank]


def _describe(array):
    if array.dtype not in _SUPPORTED:
        raise TypeError(f"unsupported element type {array.dtype}")
    if not array.flags["C_CONTIGUOUS"]:
        raise ValueError("arrays passed to tfm entry points must be C-contiguous")
    descriptor = _descriptor_type(array.ndim)()
    pointer = array.ctypes.data_as(ctypes.c_void_p)
    descriptor.allocated = pointer
    descriptor.aligned = pointer
    descriptor.offset = 0
    for i, size in enumerate(array.shape):
        descriptor.sizes[i] = size
        descriptor.strides[i] = array.strides[i] // array.itemsize
    return descriptor


NUMPY_DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
                "bf16": np.dtype(np.uint16), "i32": np.dtype(np.int32),
                "i64": np.dtype(np.int64), "i1": np.dtype(np.bool_)}


class ShapeError(ValueError):
    pass


class RuntimeCheckError(ValueError):
    """An entry point refused its inputs (it computed nothing)."""


class EntryPoint:
    """A callable entry point: `outputs = entry(*inputs)` or by name."""

    def __init__(self, library, spec):
        self._library = library
        self.spec = spec
        self.name = spec["name"]
        self.inputs = spec["inputs"]
        self.outputs = spec["outputs"]

    def _check(self, kind, spec, array, shape):
        """Raises unless `array` has `spec`'s dtype and `shape` (None: any
        size)."""
        expected = NUMPY_DTYPES[spec["dtype"]]
        if array.dtype != expected:
            raise TypeError(f"{self.name}: {kind} '{spec['name']}' must be "
                            f"{spec['dtype']} ({expected}), got {array.dtype}")
        if array.ndim != len(shape) or any(
                s is not None and s != a for s, a in zip(shape, array.shape)):
            pretty = ["?" if s is None else s for s in shape]
            raise ShapeError(f"{self.name}: {kind} '{spec['name']}' must have "
                             f"shape {pretty}, got {list(array.shape)}")

    def _bind(self, args, named):
        """The inputs in manifest order, given by position or by name."""
        if args and named:
            raise TypeError(f"{self.name}: pass inputs by position or by name, not both")
        if not named:
            return args
        missing = [s["name"] for s in self.inputs if s["name"] not in named]
        unknown = set(named) - {s["name"] for s in self.inputs}
        if missing or unknown:
            raise TypeError(f"{self.name}: missing inputs {missing}, "
                            f"unknown inputs {sorted(unknown)}")
        return [named[s["name"]] for s in self.inputs]

    def _inputs(self, args):
        """`args` as checked, C-contiguous, aligned arrays (copies only where
        the layout requires one; values are never converted, except int64
        token ids narrowed to int32)."""
        if len(args) != len(self.inputs):
            raise TypeError(f"{self.name}: expected {len(self.inputs)} inputs, "
                            f"got {len(args)}")
        inputs = []
        for spec, value in zip(self.inputs, args):
            try:
                array = np.asarray(value)
            except ValueError as error:  # e.g. a ragged list
                raise TypeError(f"{self.name}: input '{spec['name']}' is not "
                                f"an array: {error}") from None
            if spec["dtype"] == "i32" and array.dtype == np.int64:
                array = self._narrow(spec, array)
            self._check("input", spec, array,
                        [s if s >= 0 else None for s in spec["shape"]])
            inputs.append(np.require(array, requirements=["C", "A"]))
        return inputs

    def _narrow(self, spec, array):
        """int64 token ids (NumPy's and PyTorch's default) as the int32 the
        entry point takes, when every value fits."""
        info = np.iinfo(np.int32)
        outside = (array < info.min) | (array > info.max)
        if outside.any():
            value = array[outside].flat[0]
            raise ValueError(f"{self.name}: input '{spec['name']}' holds {value}, "
                             "which does not fit int32")
        return array.astype(np.int32)

    def _output_shape(self, spec, inputs):
        """`spec`'s shape, dynamic dims sized from their dim source (None
        where the manifest has none)."""
        sources = spec.get("dim_sources") or [None] * len(spec["shape"])
        return [size if size >= 0 else
                inputs[source[0]].shape[source[1]] if source else None
                for size, source in zip(spec["shape"], sources)]

    def _allocate(self, inputs):
        outputs = []
        for spec in self.outputs:
            shape = self._output_shape(spec, inputs)
            if None in shape:
                raise ShapeError(f"{self.name}: cannot size output "
                                 f"'{spec['name']}'; pass out=")
            outputs.append(np.empty(shape, NUMPY_DTYPES[spec["dtype"]]))
        return outputs

    def _outputs(self, out, inputs):
        """The caller's output buffers, checked: the compiled code writes
        into them without knowing their size, and must not write into an
        input (the ABI forbids aliasing) or a read-only buffer."""
        count = len(self.outputs)
        if not isinstance(out, (list, tuple)) or len(out) != count:
            got = f"{len(out)}" if isinstance(out, (list, tuple)) else type(out).__name__
            raise TypeError(f"{self.name}: out= must be a list of {count} "
                            f"output arrays, got {got}")
        names = [s["name"] for s in self.inputs + self.outputs]
        for i, (spec, array) in enumerate(zip(self.outputs, out)):
            where = f"{self.name}: output '{spec['name']}'"
            if not isinstance(array, np.ndarray):
                raise TypeError(f"{where} must be a numpy.ndarray, "
                                f"got {type(array).__name__}")
            self._check("output", spec, array, self._output_shape(spec, inputs))
            if not (array.flags.c_contiguous and array.flags.aligned):
                raise ValueError(f"{where} must be C-contiguous and aligned")
            if not array.flags.writeable:
                raise ValueError(f"{where} is read-only")
            for name, other in zip(names, inputs + list(out[:i])):
                if np.may_share_memory(array, other):
                    raise ValueError(f"{where} overlaps '{name}': inputs and "
                                     f"outputs must not alias")
        return list(out)

    def _failure(self, status):
        checks = self.spec.get("checks", [])
        what = checks[status - 1] if 0 < status <= len(checks) else "unknown check"
        return RuntimeCheckError(f"{self.name}: runtime check {status} failed: {what}")

    def __call__(self, *args, out=None, **named):
        inputs = self._inputs(self._bind(args, named))
        outputs = self._allocate(inputs) if out is None else self._outputs(out, inputs)
        status = self._library._invoke(self.name, inputs + outputs)
        if status != 0:
            raise self._failure(status)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


class Library:
    """A compiled tfm shared library."""

    def __init__(self, path):
        # Absolute: a bare file name would be searched for on the system path.
        self.path = os.path.abspath(path)
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"no compiled library at {self.path}")
        self._library = ctypes.CDLL(self.path)
        try:
            # A NUL-terminated char array, not a pointer.
            first = ctypes.c_char.in_dll(self._library, "tfm_manifest")
            text = ctypes.cast(ctypes.addressof(first), ctypes.c_char_p).value
        except ValueError:
            text = None  # not built by tfm-compile: only `call` works
        manifest = json.loads(text) if text else {"device": "cpu", "entry_points": []}
        self.device = manifest["device"]
        if self.device != "cpu":
            raise RuntimeError(f"{self.path} runs on device '{self.device}'; "
                               "this runtime runs cpu libraries")
        self.entry_points = {spec["name"]: EntryPoint(self, spec)
                             for spec in manifest["entry_points"]}

    def __getitem__(self, name):
        try:
            return self.entry_points[name]
        except KeyError:
            raise KeyError(f"{self.path} has no entry point '{name}'") from None

    def call(self, name, inputs, outputs):
        """Runs entry point `name` on `inputs`, writing into `outputs`;
        returns its status (0, or 1 + index of the failed runtime check).
        When the manifest describes `name`, the arrays are checked as by
        `EntryPoint`; otherwise the caller must get them right."""
        entry = self.entry_points.get(name)
        if entry:
            inputs = entry._inputs(inputs)
            outputs = entry._outputs(outputs, inputs)
        else:
            inputs = [np.require(a, requirements=["C", "A"]) for a in inputs]
            outputs = list(outputs)
        return self._invoke(name, inputs + outputs)

    def _invoke(self, name, arrays):
        try:
            function = getattr(self._library, "_mlir_ciface_" + name)
        except AttributeError:
            raise KeyError(f"{self.path} has no entry point '{name}'") from None
        descriptors = [_describe(a) for a in arrays]
        function.restype = ctypes.c_int32
        return function(*[ctypes.byref(d) for d in descriptors])


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
