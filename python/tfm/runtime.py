"""Calls compiled tfm entry points with NumPy arrays.

An entry point `@name` compiled by `tfm-lower-to-llvm-pipeline` is exported
as `_mlir_ciface_name(descriptor*...)`: one pointer to a memref descriptor
per input, then one per output (docs/DESIGN.md, entry-point ABI). The caller
allocates the outputs; inputs and outputs must not alias.
"""

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


class Library:
    """A compiled tfm shared library."""

    def __init__(self, path):
        self.path = str(path)
        self._library = ctypes.CDLL(self.path)

    def call(self, name, inputs, outputs):
        """Runs entry point `name` on `inputs`, writing into `outputs`."""
        try:
            function = getattr(self._library, "_mlir_ciface_" + name)
        except AttributeError:
            raise KeyError(f"{self.path} has no entry point '{name}'") from None
        arrays = [np.ascontiguousarray(a) for a in inputs] + list(outputs)
        descriptors = [_describe(a) for a in arrays]
        function.restype = None
        function(*[ctypes.byref(d) for d in descriptors])
        return outputs


def to_bf16(array):
    """Rounds a float array to bf16 (nearest even), as uint16 bit patterns."""
    bits = np.asarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounding = 0x7FFF + ((bits >> 16) & 1)
    return ((bits + rounding) >> 16).astype(np.uint16)


def from_bf16(bits):
    """The float32 values of bf16 bit patterns."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
