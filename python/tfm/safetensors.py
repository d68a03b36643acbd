"""Reads and writes .safetensors files with NumPy (no other dependency).

Format: an 8-byte little-endian header size, a JSON header mapping names to
{"dtype", "shape", "data_offsets"}, then the raw little-endian data. bf16
tensors are exchanged as uint16 bit patterns (see `runtime.to_bf16`).
"""

import json
import struct

import numpy as np

_TO_NUMPY = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16,
             "I32": np.int32, "I64": np.int64, "BOOL": np.bool_, "F64": np.float64}
_FROM_NUMPY = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
               np.dtype(np.int32): "I32", np.dtype(np.int64): "I64",
               np.dtype(np.bool_): "BOOL", np.dtype(np.float64): "F64"}


def save(path, tensors, *, bf16=()):
    """Writes `tensors` (name -> array); names in `bf16` hold uint16 bf16 bits."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        dtype = "BF16" if name in bf16 else _FROM_NUMPY.get(array.dtype)
        if dtype is None:
            raise TypeError(f"tensor '{name}': unsupported dtype {array.dtype}")
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(text)))
        file.write(text)
        for blob in blobs:
            file.write(blob)


def load(path):
    """name -> array of every tensor in the file (bf16 as uint16 bits)."""
    with open(path, "rb") as file:
        data = file.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    payload = memoryview(data)[8 + size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        dtype = np.dtype(_TO_NUMPY[entry["dtype"]]).newbyteorder("<")
        tensors[name] = np.frombuffer(payload[begin:end], dtype=dtype).reshape(entry["shape"])
    return tensors
