# RUN: %python %s %t
#
# The Python package's API: compile a description, call by position and by
# name, weights packed once (Library.prepare), safetensors round trips (bf16
# included), and the errors it raises.

import pathlib
import sys

import numpy as np

from harness import expect
from tfm import compiler, reference, runtime, safetensors

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(3)

config = {"vocab_size": 50, "d_model": 32, "num_layers": 1, "num_heads": 4,
          "num_kv_heads": 2, "d_ff": 48, "tie_embeddings": True}
library = runtime.Library(compiler.compile_model(config, out / "model.so",
                                                 header=out / "model.h"))
assert list(library.entry_points) == ["forward", "prefill", "decode", "prepare_weights"]
forward = library["forward"]
assert [s["name"] for s in forward.inputs[:3]] == [
    "input_ids", "position_ids", "model.embed_tokens.weight"]
assert "int32_t _mlir_ciface_forward(" in (out / "model.h").read_text()
assert "int32_t _mlir_ciface_prepare_weights(" in (out / "model.h").read_text()

# Weights packed once (the default): Library.prepare gives the parameters
# as the entry points take them, with the packed inputs in place of the
# weights they are made from; the weights themselves are refused.
params = {s["name"]: (rng.standard_normal(s["shape"]) * 0.2).astype(np.float32)
          for s in library.given_inputs("forward")[2:]}
bound = library.prepare(params)
assert "model.layers.0.self_attn.q_proj.weight.packed" in bound, sorted(bound)
assert "model.layers.0.self_attn.q_proj.weight" not in bound, sorted(bound)
assert "model.embed_tokens.weight" in bound, sorted(bound)  # the gather's
ids = rng.integers(0, 50, (2, 5)).astype(np.int32)
positions = np.tile(np.arange(5, dtype=np.int32), (2, 1))
by_position = forward(ids, positions, *[bound[s["name"]] for s in forward.inputs[2:]])
by_name = forward(input_ids=ids, position_ids=positions, **bound)
assert np.array_equal(by_position, by_name)
expected = reference.language_model(config, params, ids, positions)
assert np.abs(by_name - expected).max() <= 1e-5 * np.abs(expected).max()
expect(TypeError, "missing inputs ['model.layers.0.self_attn.q_proj.weight.packed'",
       lambda: forward(input_ids=ids, position_ids=positions, **params))
expect(TypeError, "packs its f32 weights once: pass the parameters through Library.prepare",
       lambda: forward(input_ids=ids, position_ids=positions, **params))
expect(KeyError, "prepare_weights: parameters missing: ['model.layers.0.self_attn.q_proj.weight'",
       lambda: library.prepare({}))

# Packed in every call (--prepack-weights=false): the entry points take the
# weights themselves, what a caller gives (given_inputs) for both.
per_call = runtime.Library(compiler.compile_model(
    config, out / "per-call.so", flags=["--prepack-weights=false"]))
assert list(per_call.entry_points) == ["forward", "prefill", "decode"]
assert per_call.prepare(params) == params
assert per_call.given_inputs("forward") == per_call["forward"].inputs
assert sorted(s["name"] for s in library.given_inputs("forward")) == sorted(
    s["name"] for s in per_call["forward"].inputs)
assert np.abs(per_call["forward"](input_ids=ids, position_ids=positions, **params)
              - expected).max() <= 1e-5 * np.abs(expected).max()

# Safetensors round trip, bf16 as bit patterns.
bits = runtime.to_bf16(np.array([1.0, -2.5, 3.14159], np.float32))
safetensors.save(out / "t.safetensors", {"a": params["model.norm.weight"], "b": bits,
                                         "ids": ids}, bf16={"b"})
loaded = safetensors.load(out / "t.safetensors")
assert np.array_equal(loaded["a"], params["model.norm.weight"])
assert np.array_equal(loaded["ids"], ids)
assert np.allclose(runtime.from_bf16(loaded["b"]), [1.0, -2.5, 3.140625])

expect(FileNotFoundError, "no compiled library", lambda: runtime.Library(out / "nope.so"))
expect(KeyError, "no entry point 'backward'", lambda: library["backward"])
expect(TypeError, "missing inputs ['position_ids']",
       lambda: forward(input_ids=ids, **bound))
expect(TypeError, "by position or by name", lambda: forward(ids, position_ids=positions))
expect(compiler.CompileError, "model description: unknown field 'colour'",
       lambda: compiler.compile_model(dict(config, colour=1), out / "bad.so"))
expect(compiler.CompileError, "command failed: ",
       lambda: compiler.compile_mlir("func.func @f(", out / "bad.so"))
expect(runtime.RuntimeCheckError, "must be in [0, 50)",
       lambda: forward(input_ids=ids + 50, position_ids=positions, **bound))
print("all API checks passed")
