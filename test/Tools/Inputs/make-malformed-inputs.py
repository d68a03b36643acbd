"""Writes the malformed and adversarial files of untrusted-input.test into
the directory argv[1]: .npy and .safetensors files that a lax reader would
accept (and then read out of bounds), model descriptions with sizes nobody
means, and JSON and MLIR nested deep enough to overflow a recursive parser.
Also Fortran-ordered copies of tfm-run.test's inputs, which must be read
correctly."""

import json
import pathlib
import struct
import sys

import numpy as np

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)


def npy(name, header, payload=b"", version=(1, 0), length=None):
    """A .npy file with `header` (the dict's text) padded as NumPy pads it."""
    text = header.encode()
    text += b" " * (-(10 + len(text) + 1) % 64) + b"\n"
    size = len(text) if length is None else length
    prefix = b"\x93NUMPY" + bytes(version)
    prefix += struct.pack("<H" if version[0] == 1 else "<I", size)
    (out / name).write_bytes(prefix + text + payload)


def dict_text(descr="'<i4'", fortran="False", shape="(2, 7)", extra=""):
    return f"{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, {extra}}}"


ids = bytes(4 * 14)
# 2^32 x 2^32 elements wrap to 0 in 64 bits: a lax reader takes 16 bytes.
npy("overflow.npy", dict_text(shape="(4294967296, 4294967296, 1)"), bytes(16))
npy("version9.npy", dict_text(), ids, version=(9, 0))
npy("fortran-int.npy", dict_text(fortran="1"), ids)
npy("extra-key.npy", dict_text(extra="'order': 'C', "), ids)
npy("float-dim.npy", dict_text(shape="(2.0, 7)"), ids)
npy("not-a-tuple.npy", dict_text(shape="(14)"), ids)
npy("negative-dim.npy", dict_text(shape="(-2, -7)"), ids)
npy("big-endian.npy", dict_text(descr="'>i4'"), ids)
npy("truncated.npy", dict_text(), ids[:-1])
npy("huge-header.npy", dict_text() + " " * 20000, ids, version=(2, 0))
npy("header-past-end.npy", dict_text(), ids, length=60000)


def safetensors(name, header, payload=b"", size=None):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    size = len(text) if size is None else size
    (out / name).write_bytes(struct.pack("<Q", size) + text + payload)


def entry(shape, begin, end, dtype="F32"):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


safetensors("st-float-shape.safetensors", b'{"a": {"dtype": "F32", "shape": [2.0], '
            b'"data_offsets": [0, 8]}}', bytes(8))
safetensors("st-float-offsets.safetensors", b'{"a": {"dtype": "F32", "shape": [2], '
            b'"data_offsets": [0, 8e0]}}', bytes(8))
safetensors("st-negative-offset.safetensors", b'{"a": {"dtype": "F32", "shape": [2], '
            b'"data_offsets": [-8, 0]}}', bytes(8))
safetensors("st-duplicate.safetensors", b'{"a": {"dtype": "F32", "shape": [2], '
            b'"data_offsets": [0, 8]}, "a": {"dtype": "F32", "shape": [1], '
            b'"data_offsets": [8, 12]}}', bytes(12))
safetensors("st-overflow.safetensors",
            {"a": entry([4294967296, 4294967296, 1], 0, 0)})
safetensors("st-gap.safetensors", {"a": entry([2], 0, 8), "b": entry([2], 12, 20)},
            bytes(20))
safetensors("st-overlap.safetensors", {"a": entry([2], 0, 8), "b": entry([2], 4, 12)},
            bytes(12))
safetensors("st-trailing.safetensors", {"a": entry([2], 0, 8)}, bytes(12))
safetensors("st-huge-header.safetensors", b"{}", size=100_000_001)
safetensors("st-deep.safetensors", b'{"__metadata__": ' + b"[" * 100000 + b"]" * 100000 + b"}")
safetensors("st-metadata.safetensors", {"__metadata__": {"format": 1}})
safetensors("st-extra-field.safetensors",
            {"a": dict(entry([2], 0, 8), layout="row-major")}, bytes(8))

# Model descriptions.
tiny = {"vocab_size": 101, "d_model": 64, "num_layers": 1, "num_heads": 8,
        "num_kv_heads": 2, "d_ff": 96}


def description(name, **fields):
    (out / name).write_text(json.dumps(dict(tiny, **fields)))


description("many-layers.json", num_layers=1000000)
description("huge-dim.json", d_model=2**40)
description("huge-embedding.json", vocab_size=2**31 - 1, d_model=65536)
description("huge-layers.json", num_layers=1024, d_model=131072, num_heads=8,
            num_kv_heads=8, d_ff=262144)
description("tiny-theta.json", positions={"kind": "rope", "theta": 1e-50})
description("huge-eps.json", norm_eps=1e39)
(out / "duplicate-key.json").write_text(json.dumps(tiny)[:-1] + ', "d_model": 32}')
(out / "deep.json").write_text('{"name": ' + "[" * 100000 + "]" * 100000 + "}")

# MLIR whose attribute nests 100000 levels deep.
(out / "deep.mlir").write_text(
    "func.func @deep() attributes {a = " + "[" * 100000 + "]" * 100000 + "} {\n"
    "  return\n}\n")

# An entry point whose argument no caller could allocate (2^64 elements).
huge = "tensor<4294967296x4294967296xf32>"
(out / "huge-entry.mlir").write_text(
    f"func.func @huge(%x: {huge}, %w: tensor<4294967296xf32>) -> {huge} {{\n"
    f"  %o = tfm.rms_norm %x, %w eps(1.0e-05) : ({huge}, tensor<4294967296xf32>) -> {huge}\n"
    f"  return %o : {huge}\n}}\n")

# Fortran-ordered copies of tfm-run's inputs (argv[2]): NumPy writes them when
# an array is column-major (a transposed view, say); tfm reads them in order.
if len(sys.argv) > 2:
    run = pathlib.Path(sys.argv[2])
    for name in ["ids", "pos", "reference"]:
        array = np.asfortranarray(np.load(run / f"{name}.npy"))
        assert not array.flags["C_CONTIGUOUS"]
        np.save(out / f"{name}-fortran.npy", array)
