"""Inputs of the bundled example: random LLaMA-style parameters (fixed
seed) as .safetensors, token and position ids as .npy, and the float64
reference logits that tfm-run checks the compiled model against.

usage: make_inputs.py MODEL.json OUT_DIR [BATCH] [SEQ]
"""

import json
import pathlib
import sys

import numpy as np

from tfm import reference, runtime, safetensors

config = json.loads(pathlib.Path(sys.argv[1]).read_text())
out = pathlib.Path(sys.argv[2])
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 2
length = int(sys.argv[4]) if len(sys.argv) > 4 else 64
library = runtime.Library(out / "model.so")
rng = np.random.default_rng(0)

# The parameters as a caller gives them (tfm-run packs the f32 weights once
# with the library's prepare_weights).
params = {}
for spec in library.given_inputs("forward")[2:]:
    shape = spec["shape"]
    if spec["name"].endswith("norm.weight"):
        value = 1.0 + 0.1 * rng.standard_normal(shape)
    else:
        value = rng.standard_normal(shape) / np.sqrt(shape[-1])
    params[spec["name"]] = value.astype(np.float32)
safetensors.save(out / "params.safetensors", params)

ids = rng.integers(0, config["vocab_size"], (batch, length)).astype(np.int32)
positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
np.save(out / "input_ids.npy", ids)
np.save(out / "position_ids.npy", positions)
logits = reference.language_model(config, params, ids, positions)
np.save(out / "reference_logits.npy", logits.astype(np.float32))
print(f"{len(params)} parameters, {sum(p.size for p in params.values())} weights; "
      f"input_ids {list(ids.shape)}; float64 reference logits {list(logits.shape)}")
