"""Reads and writes .safetensors files with NumPy (no other dependency).

Format: an 8-byte little-endian header size, a JSON header mapping names to
{"dtype", "shape", "data_offsets"}, then the raw little-endian data. bf16
tensors are exchanged as uint16 bit patterns (see `runtime.to_bf16`).
"""

import json
import math
import pathlib
import struct

import numpy as np

_TO_NUMPY = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16,
             "I32": np.int32, "I64": np.int64, "BOOL": np.bool_, "F64": np.float64}
_FROM_NUMPY = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
               np.dtype(np.int32): "I32", np.dtype(np.int64): "I64",
               np.dtype(np.bool_): "BOOL", np.dtype(np.float64): "F64"}
_KEYS = {"dtype", "shape", "data_offsets"}
MAX_HEADER_SIZE = 100_000_000  # the reference implementation's limit
MAX_RANK = 64  # NumPy's (32 before NumPy 2)


def save(path, tensors, *, bf16=()):
    """Writes `tensors` (name -> array); names in `bf16` hold uint16 bf16 bits."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        if name == "__metadata__":
            raise ValueError("'__metadata__' is reserved, not a tensor name")
        array = np.asarray(array, order="C")  # keeps 0-d arrays 0-d
        if name in bf16 and array.dtype != np.uint16:
            raise TypeError(f"tensor '{name}': bf16 bits must be uint16, got {array.dtype}")
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
        for blob in blobs:  # in the order of their data_offsets
            file.write(blob)


def load(path):
    """name -> array of every tensor in the file (bf16 as uint16 bits).
    Raises ValueError unless the file follows the format as strictly as the
    reference implementation requires."""
    with open(path, "rb") as file:
        data = file.read()
    try:
        return _parse(data)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def load_checkpoint(*paths):
    """name -> (array, file) of a checkpoint given as .safetensors files
    and/or Hugging Face index files (`model.safetensors.index.json`, whose
    "weight_map" names the shard of every tensor, beside the index), as
    tfm-run --params reads it. A tensor in two files, or a shard that does
    not hold exactly what the index maps to it, raises ValueError."""
    checkpoint = {}

    def add(tensors, file):
        for name, array in tensors.items():
            if name in checkpoint:
                raise ValueError(f"tensor '{name}' is in both "
                                 f"'{checkpoint[name][1]}' and '{file}'")
            checkpoint[name] = (array, str(file))

    for path in map(pathlib.Path, paths):
        if path.suffix != ".json":
            add(load(path), path)
            continue
        for shard, names in sorted(_read_index(path).items()):
            tensors = load(shard)
            missing = sorted(set(names) - set(tensors))
            extra = sorted(set(tensors) - set(names))
            if missing:
                raise ValueError(f"'{path}' maps tensor '{missing[0]}' to "
                                 f"'{shard}', which does not hold it")
            if extra:
                raise ValueError(f"'{shard}' holds tensor '{extra[0]}', which "
                                 f"'{path}' does not list")
            add(tensors, shard)
    return checkpoint


def _read_index(path):
    """shard path -> names of the tensors an index file maps to it."""
    try:
        index = json.loads(path.read_text(), object_pairs_hook=_object)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"'{path}' is not a valid checkpoint index: {error}") from None
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict):
        raise ValueError(f"'{path}' is not a valid checkpoint index: "
                         "no \"weight_map\" object")
    shards = {}
    for name, file in weight_map.items():
        if (not isinstance(file, str) or not file or pathlib.PurePath(file).is_absolute()
                or ".." in pathlib.PurePath(file).parts):
            raise ValueError(f"'{path}' is not a valid checkpoint index: tensor "
                             f"'{name}' must map to a shard file beside the index")
        shards.setdefault(path.parent / file, []).append(name)
    return shards


def _parse(data):
    """The tensors of the file contents `data`."""
    if len(data) < 8:
        raise ValueError(f"{len(data)} bytes, too short for the header size")
    (size,) = struct.unpack("<Q", data[:8])
    if size > MAX_HEADER_SIZE:
        raise ValueError(f"header size {size} exceeds {MAX_HEADER_SIZE} bytes")
    if 8 + size > len(data):
        raise ValueError(f"header size {size} exceeds the file ({len(data)} bytes)")
    header = _parse_header(data[8:8 + size])
    payload = memoryview(data)[8 + size:]
    _check_metadata(header.get("__metadata__", {}))
    entries = {name: _check_entry(name, entry) for name, entry in header.items()
               if name != "__metadata__"}
    _check_tiling(entries, len(payload))
    tensors = {}
    for name, (dtype, shape, begin, end) in entries.items():
        try:
            tensors[name] = np.frombuffer(payload[begin:end], dtype=dtype).reshape(shape)
        except ValueError as error:  # more dims than this NumPy allows
            raise ValueError(f"tensor '{name}': {error}") from None
    return tensors


def _object(pairs):
    """A JSON object; a key given twice is an error."""
    result = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicated key '{key}'")
        result[key] = value
    return result


def _parse_header(text):
    """The header's JSON object."""
    try:
        if not text.startswith(b"{"):
            raise ValueError("it does not start with '{'")
        return json.loads(text.decode("utf-8"), object_pairs_hook=_object)
    except RecursionError:
        raise ValueError("the header is nested too deeply") from None
    except ValueError as error:  # also UnicodeDecodeError, JSONDecodeError
        raise ValueError(f"the header is not a JSON object: {error}") from None


def _check_metadata(metadata):
    if not isinstance(metadata, dict) or not all(
            isinstance(value, str) for value in metadata.values()):
        raise ValueError("__metadata__ must map strings to strings")


def _is_size(value):
    # bool is a subclass of int, but `true` is not a size.
    return type(value) is int and value >= 0


def _check_entry(name, entry):
    """(NumPy dtype, shape, begin, end) of header entry `name`."""
    if not isinstance(entry, dict) or set(entry) != _KEYS:
        raise ValueError(f"tensor '{name}': expected an object with exactly "
                         f"the keys {sorted(_KEYS)}")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(dtype, str) or dtype not in _TO_NUMPY:
        raise ValueError(f"tensor '{name}': unsupported dtype {dtype!r}")
    # A rank bound keeps the size product small (Python parses JSON ints of
    # at most 4300 digits).
    if (not isinstance(shape, list) or len(shape) > MAX_RANK
            or not all(_is_size(d) for d in shape)):
        raise ValueError(f"tensor '{name}': shape {shape!r} is not a list of at "
                         f"most {MAX_RANK} non-negative integers")
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(_is_size(o) for o in offsets) or offsets[0] > offsets[1]):
        raise ValueError(f"tensor '{name}': data_offsets {offsets!r} is not "
                         f"[begin, end] with 0 <= begin <= end")
    dtype = np.dtype(_TO_NUMPY[dtype]).newbyteorder("<")
    begin, end = offsets
    needed = math.prod(shape) * dtype.itemsize
    if end - begin != needed:
        raise ValueError(f"tensor '{name}': data_offsets {offsets} hold "
                         f"{end - begin} bytes, its shape needs {needed}")
    return dtype, shape, begin, end


def _check_tiling(entries, size):
    """The tensors' byte ranges must cover the `size`-byte data section
    exactly once, without gaps or overlaps."""
    position = 0
    for begin, end, name in sorted((begin, end, name)
                                   for name, (_, _, begin, end) in entries.items()):
        if begin != position:
            raise ValueError(f"tensor '{name}': data begins at byte {begin}, "
                             f"expected {position} (tensors must tile the data "
                             f"without gaps or overlaps)")
        position = end
    if position != size:
        raise ValueError(f"the tensors cover {position} bytes of data, the file "
                         f"holds {size}")
