# RUN: %python %s %t
#
# safetensors.load is as strict as the format's reference implementation:
# every malformed header or data layout below (written by hand) is a
# ValueError naming what is wrong; well-formed files, including those `save`
# writes, still load. load_checkpoint reads sharded checkpoints strictly too.

import json
import pathlib
import struct
import sys

import numpy as np

from tfm import safetensors

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)


def write(header, data=b"", *, text=None, size=None):
    """A file with JSON `header` (or raw header bytes `text`), its size field
    `size` when given, then `data`."""
    text = json.dumps(header).encode() if text is None else text
    path = out / "t.safetensors"
    path.write_bytes(struct.pack("<Q", len(text) if size is None else size)
                     + text + data)
    return path


def rejects(fragment, header=None, data=b"", **kwargs):
    path = write(header, data, **kwargs)
    try:
        safetensors.load(path)
    except ValueError as error:
        assert fragment in str(error) and str(path) in str(error), str(error)
        print(f"PASS {error}"[:200])
        return
    raise AssertionError(f"loaded: {fragment}")


def tensor(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


# The header size field.
(out / "short.safetensors").write_bytes(b"\x02\x00")
try:
    safetensors.load(out / "short.safetensors")
    raise AssertionError("loaded a 2-byte file")
except ValueError as error:
    assert "short.safetensors: 2 bytes, too short for the header size" in str(error)
rejects("header size 100000001 exceeds 100000000 bytes", text=b"{}", size=100_000_001)
rejects("header size 64 exceeds the file (16 bytes)", text=b"{}      ", size=64)

# The header: a UTF-8 JSON object, each key once, shallow.
rejects("not a JSON object", text=b'{"\xff": 1}')
rejects("not a JSON object", text=b'{"a": ')
rejects("does not start with '{'", text=b"[]")
rejects("does not start with '{'", text=b" {}")
rejects("duplicated key 'a'",
        text=b'{"a": ' + json.dumps(tensor()).encode() + b', "a": '
        + json.dumps(tensor()).encode() + b"}", data=bytes(8))
rejects("duplicated key 'dtype'",
        text=b'{"a": {"dtype": "F32", "dtype": "F32", "shape": [2], '
        b'"data_offsets": [0, 8]}}', data=bytes(8))
rejects("nested too deeply", text=b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
rejects("__metadata__ must map strings to strings",
        {"__metadata__": {"a": json.loads("[" * 100 + "]" * 100)}})
rejects("__metadata__ must map strings to strings", {"__metadata__": ["a"]})
rejects("__metadata__ must map strings to strings", {"__metadata__": {"a": 1}})

# Each entry: exactly dtype, shape and data_offsets, well typed.
rejects("tensor 'a': expected an object with exactly the keys", {"a": [1]})
rejects("tensor 'a': expected an object with exactly the keys",
        {"a": {"dtype": "F32", "shape": [2]}}, bytes(8))
rejects("tensor 'a': expected an object with exactly the keys",
        {"a": dict(tensor(), extra=1)}, bytes(8))
rejects("tensor 'a': unsupported dtype 'F8_E4M3'", {"a": tensor("F8_E4M3")}, bytes(8))
rejects("tensor 'a': unsupported dtype ['F32']", {"a": tensor(["F32"])}, bytes(8))
for shape in ["2", [2.0], [True, 2], [-1], [1] * 65, [[2]]]:
    rejects("tensor 'a': shape", {"a": dict(tensor(), shape=shape)}, bytes(8))
for offsets in ["0,8", [0], [0, 8, 8], [0.0, 8], [False, 8], [-8, 0], [8, 0]]:
    rejects("tensor 'a': data_offsets", {"a": dict(tensor(), data_offsets=offsets)},
            bytes(8))

try:  # NumPy 2 allows 64 dims, NumPy 1 only 32
    assert safetensors.load(write({"a": tensor(shape=[1] * 33, offsets=(0, 4))},
                                  bytes(4)))["a"].ndim == 33
except ValueError as error:
    assert "tensor 'a': maximum supported dimension" in str(error), str(error)

# Sizes: end - begin is exactly the shape's bytes (exact, no 64-bit wrap).
rejects("tensor 'a': data_offsets [0, 4] hold 4 bytes, its shape needs 8",
        {"a": tensor(offsets=(0, 4))}, bytes(4))
rejects("its shape needs 73786976294838206464",
        {"a": tensor(shape=(2**62, 4), offsets=(0, 0))})
rejects("its shape needs 6", {"a": tensor("BF16", (3,), (0, 8))}, bytes(8))

# Layout: the byte ranges tile the data section exactly.
rejects("tensor 'a': data begins at byte 4, expected 0",
        {"a": tensor(offsets=(4, 12))}, bytes(12))
rejects("tensor 'b': data begins at byte 12, expected 8",
        {"a": tensor(), "b": tensor(offsets=(12, 20))}, bytes(20))
rejects("tensor 'b': data begins at byte 4, expected 8",
        {"a": tensor(), "b": tensor(offsets=(4, 12))}, bytes(12))
rejects("tensor 'b': data begins at byte 0, expected 8",
        {"a": tensor(), "b": tensor()}, bytes(8))
rejects("the tensors cover 8 bytes of data, the file holds 12", {"a": tensor()}, bytes(12))
rejects("the tensors cover 8 bytes of data, the file holds 4", {"a": tensor()}, bytes(4))
rejects("the tensors cover 0 bytes of data, the file holds 4", {}, bytes(4))

# Well-formed files load: metadata, entries out of order, padding, empty and
# zero-size tensors, unaligned offsets.
a, b = np.array([1.5, -2.0], np.float32), np.array([7, 8, 9], np.int16).view(np.float16)
loaded = safetensors.load(write(
    {"__metadata__": {"format": "pt"}, "b": tensor("F16", (3,), (8, 14)),
     "a": tensor(), "e": tensor("I64", (0, 4), (8, 8))},
    a.tobytes() + b.tobytes()))
assert list(loaded) == ["b", "a", "e"] and loaded["e"].shape == (0, 4)
assert np.array_equal(loaded["a"], a) and np.array_equal(loaded["b"].view(np.int16), [7, 8, 9])
assert safetensors.load(write({}, text=b"{}" + b" " * 6)) == {}
print("PASS well-formed hand-written files load")

tensors = {"f16": np.array([1, 2, 3], np.float16), "f32": np.arange(6, dtype=np.float32)
           .reshape(2, 3), "bits": np.array([0x3F80, 0x7FC0], np.uint16),
           "i64": np.array([-1, 2**40]), "flags": np.array([True, False]),
           "scalar": np.float64(2.5), "empty": np.zeros((0, 3), np.int32),
           "i32": np.arange(4, dtype=np.int32)[::2]}
safetensors.save(out / "saved.safetensors", tensors, bf16={"bits"})
loaded = safetensors.load(out / "saved.safetensors")
assert list(loaded) == list(tensors)
for name, array in tensors.items():
    assert loaded[name].dtype == array.dtype and loaded[name].shape == np.shape(array)
    assert np.array_equal(loaded[name], array), name
print("PASS save writes what the strict loader accepts")

for bad, error_type, fragment in [({"__metadata__": np.zeros(1)}, ValueError, "reserved"),
                                  ({"b": np.zeros(1, np.float32)}, TypeError, "uint16")]:
    try:
        safetensors.save(out / "bad.safetensors", bad, bf16={"b"})
        raise AssertionError(f"saved: {fragment}")
    except error_type as error:
        assert fragment in str(error), (fragment, str(error))
        print(f"PASS {error}")
# Sharded checkpoints, as tfm-run --params reads them: through the Hugging
# Face index or shard by shard; a tensor in two files or an index that
# disagrees with its shards is a ValueError.
rng = np.random.default_rng(4)
weights = {f"w{i}": rng.standard_normal((3, i + 1)).astype(np.float32) for i in range(5)}
shards = {"model-00001-of-00002.safetensors": ["w0", "w2", "w4"],
          "model-00002-of-00002.safetensors": ["w1", "w3"]}
for shard, names in shards.items():
    safetensors.save(out / shard, {n: weights[n] for n in names})
weight_map = {n: shard for shard, names in shards.items() for n in names}


def index(name, mapping):
    (out / name).write_text(json.dumps({"metadata": {}, "weight_map": mapping}))
    return out / name


for paths in ([index("model.safetensors.index.json", weight_map)],
              [out / shard for shard in shards]):
    checkpoint = safetensors.load_checkpoint(*paths)
    assert sorted(checkpoint) == sorted(weights)
    assert all(np.array_equal(checkpoint[n][0], weights[n]) for n in weights)
print("PASS a sharded checkpoint loads through its index and shard by shard")
for fragment, paths in [
        ("is in both", [out / "model-00001-of-00002.safetensors",
                        index("model.safetensors.index.json", weight_map)]),
        ("maps tensor 'ghost' to", [index("ghost.json", dict(weight_map, ghost=list(shards)[0]))]),
        ("holds tensor 'w0', which", [index("moved.json", dict(weight_map, w0=list(shards)[1]))]),
        ("must map to a shard file beside the index",
         [index("escape.json", dict(weight_map, w0="../elsewhere.safetensors"))]),
        ("no \"weight_map\" object", [out / "t.json"])]:
    if fragment.startswith("no "):
        (out / "t.json").write_text("[]")
    try:
        safetensors.load_checkpoint(*paths)
        raise AssertionError(f"loaded: {fragment}")
    except ValueError as error:
        assert fragment in str(error), (fragment, str(error))
        print(f"PASS {error}"[:200])
print("all safetensors checks passed")
