"""Runs a model library compiled for --target=cuda on the inputs that
test/Tools/Inputs/make-run-inputs.py wrote into DIR (params.safetensors,
ids.npy, pos.npy) and compares its logits with reference.npy (float64
reference, f32 tolerance). Needs only NumPy and libtfm_runtime.so: it runs
on a GPU machine without a compiler (scripts/gpu-tests.sh check)."""

import pathlib
import sys

import numpy as np

from tfm import runtime, safetensors

directory = pathlib.Path(sys.argv[1])
forward = runtime.Library(directory / "model.so")["forward"]
params = safetensors.load(directory / "params.safetensors")
ids = np.load(directory / "ids.npy")
positions = np.load(directory / "pos.npy")
logits = forward(input_ids=ids, position_ids=positions, **params)
expected = np.load(directory / "reference.npy").astype(np.float64)
error = np.abs(logits - expected).max() / np.abs(expected).max()
ok = np.isfinite(logits).all() and error <= 1e-5
print(f"{'PASS' if ok else 'FAIL'} model logits: error {error:.2e} (tolerance 1e-05)")
sys.exit(0 if ok else 1)
