"""Compiles the Hugging Face model directory argv[1] with tfm-compile and
checks its logits against the float64 reference of the model description
argv[2] (JSON) that the directory's config.json means. With argv[3], also
writes tfm-run's inputs there: the parameters as a checkpoint saved from a
GPT-2 base model names them (no "transformer." prefix), the same with both
names of one tensor, the token ids, positions and reference logits."""

import json
import pathlib
import sys
import tempfile

import numpy as np

from tfm import compiler, reference, runtime, safetensors

directory, description = sys.argv[1], json.loads(sys.argv[2])
with tempfile.TemporaryDirectory() as work:
    library = runtime.Library(compiler.compile_model(directory, f"{work}/model.so"))
    rng = np.random.default_rng(11)
    params = {s["name"]: (0.2 * rng.standard_normal(s["shape"]) + (len(s["shape"]) == 1))
              .astype(np.float32) for s in library.given_inputs("forward")[2:]}
    ids = rng.integers(0, description["vocab_size"], (2, 9)).astype(np.int32)
    positions = np.tile(np.arange(9, dtype=np.int32), (2, 1))
    logits = library["forward"](input_ids=ids, position_ids=positions,
                                **library.prepare(params))
    expected = reference.language_model(description, params, ids, positions)
    error = np.abs(logits - expected).max() / np.abs(expected).max()
    assert error <= 1e-5, error
    print(f"PASS {directory}: logits match the reference within {error:.1e}")
    if len(sys.argv) > 3:
        out = pathlib.Path(sys.argv[3])
        out.mkdir(parents=True, exist_ok=True)
        bare = {name.removeprefix("transformer."): a for name, a in params.items()}
        safetensors.save(out / "base-model.safetensors", bare)
        first = next(iter(params))
        safetensors.save(out / "both-names.safetensors", dict(bare, **{first: params[first]}))
        np.save(out / "ids.npy", ids)
        np.save(out / "pos.npy", positions)
        np.save(out / "reference.npy", expected.astype(np.float32))
