"""Writes the seed corpora of the fuzz targets into argv[1]/{manifest,mlir,
model,npy,safetensors,tokenizer}: the test suite's MLIR cases (split at
`// -----`), its model descriptions, tokenizers and malformed inputs
(test/Tools/Inputs), small
valid .npy and .safetensors files of every element type tfm reads, and
manifests of the shape tfm-compile embeds."""

import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

from tfm import safetensors

root = pathlib.Path(__file__).resolve().parent.parent
out = pathlib.Path(sys.argv[1])
MAX_SEED_BYTES = 16384
corpora = {name: out / name
           for name in ["manifest", "mlir", "model", "npy", "safetensors", "tokenizer"]}
for directory in corpora.values():
    directory.mkdir(parents=True, exist_ok=True)


def seed(corpus, name, data):
    if len(data) <= MAX_SEED_BYTES:
        (corpora[corpus] / name).write_bytes(data)


for path in sorted(root.glob("test/**/*.mlir")) + sorted(root.glob("examples/*.mlir")):
    text = path.read_text()
    for i, case in enumerate(text.split("\n// -----\n")):
        seed("mlir", f"{path.stem}-{i}.mlir", case.encode())
for path in sorted(root.glob("examples/*.json")) + sorted(root.glob("test/Tools/Inputs/*.json")):
    seed("model", path.name, path.read_bytes())

with tempfile.TemporaryDirectory() as malformed:
    subprocess.run([sys.executable, str(root / "test/Tools/Inputs/make-malformed-inputs.py"),
                    malformed], check=True)
    for path in sorted(pathlib.Path(malformed).iterdir()):
        corpus = {".npy": "npy", ".safetensors": "safetensors", ".json": "model",
                  ".mlir": "mlir"}[path.suffix]
        seed(corpus, "malformed-" + path.name, path.read_bytes())

# Tokenizers, each with the texts of tfm-run-tokenizers.test after a NUL.
TEXTS = ["the cat's 123 café  \n\nhi<|endoftext|>!", "the CAT'S 12345 (cat café  \n\n hi"]
with tempfile.TemporaryDirectory() as tokenizers:
    subprocess.run([sys.executable, str(root / "test/Tools/Inputs/make-tokenizers.py"),
                    tokenizers], check=True)
    for path in sorted(pathlib.Path(tokenizers).glob("*/tokenizer.json")):
        for i, text in enumerate(TEXTS):
            seed("tokenizer", f"{path.parent.name}-{i}",
                 path.read_bytes() + b"\0" + text.encode())

rng = np.random.default_rng(0)
arrays = {"f32": rng.standard_normal((3, 5)).astype(np.float32),
          "f16": rng.standard_normal((2, 3, 2)).astype(np.float16),
          "u16": rng.integers(0, 2**16, (4,)).astype(np.uint16),
          "i32": rng.integers(-9, 9, (2, 7)).astype(np.int32),
          "i64": rng.integers(-9, 9, (7,)).astype(np.int64),
          "bool": rng.integers(0, 2, (3, 3)).astype(np.bool_),
          "scalar": np.float32(1.5), "empty": np.zeros((0, 4), np.float32)}
for name, array in arrays.items():
    path = corpora["npy"] / f"{name}.npy"
    np.save(path, array)
    np.save(corpora["npy"] / f"{name}-fortran.npy", np.asfortranarray(array))
    with open(corpora["npy"] / f"{name}-v2.npy", "wb") as file:
        np.lib.format.write_array(file, np.asarray(array), version=(2, 0))
safetensors.save(corpora["safetensors"] / "all-dtypes.safetensors",
                 {name: a for name, a in arrays.items() if name != "u16"} | {"b": arrays["u16"]},
                 bf16={"b"})
safetensors.save(corpora["safetensors"] / "one.safetensors", {"w": arrays["f32"]})

forward = {"name": "forward",
           "inputs": [{"name": "input_ids", "shape": [-1, -1], "dtype": "i32"},
                      {"name": "w", "shape": [64, 32], "dtype": "bf16"}],
           "outputs": [{"name": "logits", "shape": [-1, -1, 64], "dtype": "f32",
                        "dim_sources": [[0, 0], [0, 1], None]}],
           "checks": ["every element of 'input_ids' must be in [0, 64)"]}
manifests = {
    "model": {"device": "cpu", "entry_points": [forward],
              "flops": {"per_token": 1e6, "per_visible_pair": 512.5, "sliding_window": 0}},
    "two-entries": {"device": "cpu", "entry_points": [
        forward, {"name": "attn\u00e9", "inputs": [], "outputs": [], "checks": []}]},
    "gpu": {"device": "cuda", "entry_points": []},
}
for name, manifest in manifests.items():
    seed("manifest", name + ".json", json.dumps(manifest).encode())
