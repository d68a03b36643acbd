# RUN: %python %s %t
#
# Model descriptions compiled by tfm-compile and called through the Python
# runtime (manifest-checked inputs, outputs sized from the manifest), against
# the float64 reference language model: a 2-layer LLaMA-style model with tied
# embeddings, a Mistral-style sliding-window GQA model, a GPT-2-style model
# (learned positions, LayerNorm, gelu_tanh, biases), a post-norm model, a
# GPT-2 model under GPT-2 checkpoint names, and a model for each FFN kind
# those leave out (geglu, gelu, silu). Each library is called at B·S = 5,
# 51, 7 and (where its positions reach) 129, its f32 weights packed once by
# its prepare_weights (tfm-compile's default). One model also compiles with
# the projection fusions off, and three with their weights packed in every
# call (--prepack-weights=false).

import pathlib
import sys

import numpy as np

from tfm import compiler, reference, runtime

workdir = pathlib.Path(sys.argv[1])
workdir.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(2026)

MODELS = {
    "llama_tied": {
        "vocab_size": 97, "d_model": 64, "num_layers": 2, "num_heads": 8,
        "num_kv_heads": 2, "d_ff": 96, "norm": "rms_norm", "ffn": "swiglu",
        "positions": {"kind": "rope", "theta": 10000.0, "style": "half"},
        "tie_embeddings": True},
    "mistral_window": {
        "vocab_size": 61, "d_model": 48, "num_layers": 2, "num_heads": 6,
        "num_kv_heads": 2, "d_ff": 80, "ffn": "swiglu", "mask": {"sliding_window": 3},
        "positions": {"kind": "rope", "theta": 1000000.0, "style": "interleaved"}},
    "gpt2_like": {
        "vocab_size": 73, "d_model": 36, "num_layers": 2, "num_heads": 3,
        "d_ff": 72, "norm": "layer_norm", "ffn": "gelu_tanh",
        "positions": {"kind": "learned", "max_positions": 40},
        "attention_bias": True, "mlp_bias": True, "tie_embeddings": True},
    # A GPT-2 checkpoint's own names and layouts (fused c_attn, Conv1D).
    "gpt2_checkpoint_names": {
        "vocab_size": 67, "d_model": 48, "num_layers": 2, "num_heads": 4,
        "d_ff": 96, "norm": "layer_norm", "ffn": "gelu_tanh", "naming": "gpt2",
        "positions": {"kind": "learned", "max_positions": 32},
        "attention_bias": True, "mlp_bias": True, "tie_embeddings": True},
    "post_norm_relu": {
        "vocab_size": 50, "d_model": 40, "num_layers": 1, "num_heads": 4,
        "num_kv_heads": 1, "d_ff": 56, "norm": "layer_norm", "norm_placement": "post",
        "ffn": "relu", "norm_eps": 1e-6},
    # The FFN kinds the models above leave out: GeGLU with an untied head,
    # GELU (erf) with biases after LayerNorm, SiLU with one key/value head.
    "geglu_untied": {
        "vocab_size": 53, "d_model": 64, "num_layers": 1, "num_heads": 4,
        "num_kv_heads": 2, "d_ff": 200, "ffn": "geglu",
        "positions": {"kind": "rope", "theta": 10000.0, "style": "half"}},
    "gelu_layer_norm": {
        "vocab_size": 59, "d_model": 48, "num_layers": 1, "num_heads": 4,
        "d_ff": 100, "norm": "layer_norm", "ffn": "gelu", "mlp_bias": True,
        "positions": {"kind": "rope", "theta": 10000.0, "style": "interleaved"}},
    "silu_mqa": {
        "vocab_size": 47, "d_model": 32, "num_layers": 1, "num_heads": 4,
        "num_kv_heads": 1, "d_ff": 72, "ffn": "silu", "tie_embeddings": True},
}



def random_params(inputs):
    """Random f32 parameters for these inputs (a forward's, after the ids
    and positions): norm weights around 1, other weights fan-in scaled, as
    trained ones are. (At 0.3 instead, a random LLaMA-style model is so
    ill-conditioned at S = 129 that f32 rounding alone moves its logits by
    1e-5: the untiled reference lowering of the attention measured the
    same.)"""
    params = {}
    for spec in inputs:
        is_norm = spec["name"].endswith("norm.weight") or "layernorm" in spec["name"] \
            or ".ln_" in spec["name"]
        scale = 1.0 if is_norm else 1.0 / np.sqrt(spec["shape"][-1])
        base = 1.0 if is_norm and spec["name"].endswith("weight") else 0.0
        params[spec["name"]] = (base + scale * rng.standard_normal(spec["shape"])).astype(np.float32)
    return params


def forward_of(library, params):
    """`library`'s forward on `params` (the weights as a caller gives
    them), called with ids and positions: the weights packed once
    (Library.prepare) and passed by name."""
    bound = library.prepare(params)
    return lambda ids, positions, **out: library["forward"](
        input_ids=ids, position_ids=positions, **bound, **out)


def sizes_of(config):
    """(B, S) with M = B·S of 5, 51, 7 and (where the positions reach) 129:
    streamed weights, packed ones, and 8-row blocks with rows left."""
    sizes = [(1, 5), (3, 17), (1, 7)]
    if config.get("positions", {}).get("max_positions", 129) >= 129:
        sizes.append((1, 129))
    return sizes


failures = 0
for name, config in MODELS.items():
    library = runtime.Library(compiler.compile_model(config, workdir / f"{name}.so"))
    params = random_params(library.given_inputs("forward")[2:])
    forward = forward_of(library, params)
    for batch, length in sizes_of(config):
        ids = rng.integers(0, config["vocab_size"], (batch, length)).astype(np.int32)
        positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
        logits = forward(ids, positions)
        expected = reference.language_model(config, params, ids, positions)
        error = np.abs(logits - expected).max() / np.abs(expected).max()
        ok = logits.shape == expected.shape and error <= 1e-5
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name} B={batch} S={length}: "
              f"error {error:.2e} (tolerance 1e-05)")



def check_compiled(label, library, config, batch, length):
    """Calls `library`'s forward on random f32 parameters (fan-in scaled)
    and tokens against the float64 reference; prints and returns whether it
    is within 1e-5."""
    params = {s["name"]: (rng.standard_normal(s["shape"]) / np.sqrt(s["shape"][-1]) + (
        1.0 if s["name"].endswith("norm.weight") else 0.0)).astype(np.float32)
              for s in library.given_inputs("forward")[2:]}
    ids = rng.integers(0, config["vocab_size"], (batch, length)).astype(np.int32)
    positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
    logits = forward_of(library, params)(ids, positions)
    expected = reference.language_model(config, params, ids, positions)
    error = np.abs(logits - expected).max() / np.abs(expected).max()
    print(f"{'PASS' if error <= 1e-5 else 'FAIL'} {label}: "
          f"error {error:.2e} (tolerance 1e-05)")
    return error <= 1e-5


# An AVX2-only target (--mcpu=x86-64-v3) computes the same numbers.
config = MODELS["mistral_window"]
library = runtime.Library(compiler.compile_model(
    config, workdir / "mistral_avx2.so", cpu="x86-64-v3"))
failures += not check_compiled("mistral_window on x86-64-v3", library, config, 2, 13)

# bf16 and f16 models: parameters and activations in 16 bits, accumulation
# in f32; within 1e-2 of the float64 reference on the rounded weights. Every
# op rounds its output to the 16-bit type (as PyTorch does), so the error
# grows with depth: bf16 (8-bit mantissa) is tested on one layer, f16 on two.
# LLaMA-style (RMSNorm, SwiGLU, RoPE), GPT-2-style (LayerNorm with biases,
# learned positions, gelu_tanh) and post-norm (ReLU, MQA) models.
for name, dtype, layers in [("llama_tied", "bf16", 1), ("llama_tied", "f16", 2),
                            ("gpt2_like", "bf16", 1), ("gpt2_like", "f16", 1),
                            ("post_norm_relu", "f16", 1)]:
    config = dict(MODELS[name], dtype=dtype, num_layers=layers)
    forward = runtime.Library(compiler.compile_model(
        config, workdir / f"{name}_{dtype}.so"))["forward"]
    params, device = {}, []
    for spec in forward.inputs[2:]:
        # Fan-in scaled, as trained weights are: no layer amplifies the
        # (unavoidable) rounding of each op's 16-bit output.
        value = rng.standard_normal(spec["shape"]) / np.sqrt(spec["shape"][-1])
        if spec["name"].endswith("norm.weight"):
            value = 1.0 + 0.1 * rng.standard_normal(spec["shape"])
        if dtype == "bf16":
            bits = runtime.to_bf16(value)
            device.append(bits)
            params[spec["name"]] = runtime.from_bf16(bits).astype(np.float64)
        else:
            device.append(value.astype(np.float16))
            params[spec["name"]] = device[-1].astype(np.float64)
    # 2 x 9 rows: a 16-row block and rows left; 1 x 45 (bf16): a 32-row
    # block, an 8-row block and single rows (on AMX tiles where the CPU has
    # them), all reading the normed rows rounded once per projection.
    shapes = [(2, 9)] + ([(1, 45)] if dtype == "bf16" and name == "llama_tied" else [])
    for batch, length in shapes:
        ids = rng.integers(0, config["vocab_size"], (batch, length)).astype(np.int32)
        positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
        logits = forward(ids, positions, *device)
        actual = (runtime.from_bf16(logits) if dtype == "bf16" else logits).astype(np.float64)
        expected = reference.language_model(config, params, ids, positions)
        error = np.abs(actual - expected).max() / np.abs(expected).max()
        ok = error <= 1e-2
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name} {dtype} {batch}x{length}: "
              f"error {error:.2e} (tolerance 1e-02)")

# "logits": "last": the last position's logits only, [B, 1, vocab]; the LM
# head, the final norm and (pre-norm) the last layer's FFN run on those rows
# alone (tfm-fuse-row-selection). Every norm kind and placement, GPT-2
# naming, tied and untied heads; B = 0 and S = 1 too. S = 0 has no last
# position: the compiled code refuses it.
for name in ("llama_tied", "mistral_window", "gpt2_like", "gpt2_checkpoint_names",
             "post_norm_relu"):
    config = dict(MODELS[name], logits="last")
    library = runtime.Library(compiler.compile_model(config, workdir / f"{name}_last.so"))
    params = {s["name"]: (rng.standard_normal(s["shape"]) / np.sqrt(s["shape"][-1]) + (
        1.0 if len(s["shape"]) == 1 and s["name"].endswith("weight") else 0.0)).astype(np.float32)
              for s in library.given_inputs("forward")[2:]}
    forward = forward_of(library, params)
    for batch, length in [(2, 11), (1, 1), (0, 3)]:
        ids = rng.integers(0, config["vocab_size"], (batch, length)).astype(np.int32)
        positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
        logits = forward(ids, positions)
        expected = reference.language_model(config, params, ids, positions)[:, -1:]
        error = (np.abs(logits - expected).max() / np.abs(expected).max()
                 if expected.size else 0.0)
        ok = logits.shape == expected.shape and error <= 1e-5
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name} last logits B={batch} S={length}: "
              f"error {error:.2e} (tolerance 1e-05)")
    try:
        forward(np.zeros((2, 0), np.int32), np.zeros((2, 0), np.int32))
        print(f"FAIL {name} last logits S=0: no error")
        failures += 1
    except runtime.RuntimeCheckError as error:
        ok = "dim 1 of 'input_ids' must be at least 1" in str(error)
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name} last logits S=0 refused: {error}")

# Inputs are checked against the manifest before anything runs.
forward = runtime.Library(workdir / "post_norm_relu.so")["forward"]
ids = np.zeros((1, 4), np.int32)
weights = [np.zeros([max(d, 1) for d in spec["shape"]], np.float32)
           for spec in forward.inputs[2:]]
wrong_shape = list(weights)
wrong_shape[0] = np.zeros((49, 40), np.float32)
for bad, message in [((ids.astype(np.float32), ids, *weights),
                      "must be [?, ?] i32, got [1, 4] f32"),
                     ((ids, ids, *wrong_shape), "must be [50, 40] f32, got [49, 40] f32"),
                     ((ids, ids), f"expected {len(forward.inputs)} inputs, got 2")]:
    try:
        forward(*bad)
        print(f"FAIL no error for {message}")
        failures += 1
    except (TypeError, ValueError) as error:
        ok = message in str(error)
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} rejected: {error}")

# Wrong runtime shapes and out-of-range token ids are refused by the compiled
# code itself (its status), before anything is read or written.
forward = runtime.Library(workdir / "llama_tied.so")["forward"]
params = [np.full([max(d, 1) for d in spec["shape"]], 0.5, np.float32)
          for spec in forward.inputs[2:]]
ids = np.array([[1, 2, 3]], np.int32)
positions = np.array([[0, 1, 2]], np.int32)
cases = [
    ("short position_ids", ids, positions[:, :2],
     "dim 1 of 'position_ids' must equal dim 1 of 'input_ids'"),
    ("id equal to vocab_size", np.array([[1, 97, 3]], np.int32), positions,
     "every element of 'input_ids' must be in [0, 97)"),
    ("negative id", np.array([[-1, 2, 3]], np.int32), positions,
     "every element of 'input_ids' must be in [0, 97)"),
]
for what, bad_ids, bad_positions, message in cases:
    out = np.full((bad_ids.shape[0], bad_ids.shape[1], 97), 7.0, np.float32)
    try:
        forward(bad_ids, bad_positions, *params, out=[out])
        print(f"FAIL {what}: no error")
        failures += 1
    except runtime.RuntimeCheckError as error:
        ok = message in str(error) and (out == 7.0).all()
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {what} refused: {error}")

# Without the projection fusions (tfm-compile --no-fuse=all): each
# projection alone, its norm, epilogues and RoPE apart, within the same
# tolerance.
rng = np.random.default_rng(29)
config = MODELS["llama_tied"]
library = runtime.Library(compiler.compile_model(
    config, workdir / "llama_unfused.so", flags=["--no-fuse=all"]))
failures += not check_compiled("llama_tied unfused", library, config, 1, 51)

# Weights packed once (tfm-compile's default) against packed in every call
# (--prepack-weights=false): the library's prepare_weights makes each f32
# weight's packed panels (a folded RMSNorm's weight scaling them, the
# columns past the whole panels in one padded with zeros) from the
# parameters, and forward reads them instead of the weights, which it no
# longer takes where nothing else reads them (Library.prepare leaves them
# out). M of 5 and 7 (where the library that packs per call streams the
# weights), 51 and 129 (8-row blocks with rows left), vocabularies of 97,
# 59 and 67 that leave columns past the whole panels; LayerNorm folded into
# the projections, with biases; GPT-2 checkpoint names, whose Conv1D
# weights ([K, N]) are packed as they lie, c_attn in q, k and v slices (the
# tied embedding stays, for the gather). Whether the logits are those of
# the library that packs per call, bit for bit, is printed: they are where
# both read the same panels the same way, but the streamed form and a
# one-column tail (97 = 3 x 32 + 1, read from the padded panel) sum in
# another order.
for name in ["llama_tied", "gelu_layer_norm", "gpt2_checkpoint_names"]:
    config = MODELS[name]
    library = runtime.Library(workdir / f"{name}.so")
    per_call_library = runtime.Library(compiler.compile_model(
        config, workdir / f"{name}_per_call.so", flags=["--prepack-weights=false"]))
    assert "prepare_weights" not in per_call_library.entry_points
    forward, per_call = library["forward"], per_call_library["forward"]
    params = random_params(per_call.inputs[2:])
    bound = library.prepare(params)
    packed = [key for key in bound if key.endswith(".packed")]
    dropped = set(params) - set(bound)
    taken = {s["name"] for s in forward.inputs}
    ok = len(packed) > 0 and taken == set(bound) | {"input_ids", "position_ids"}
    ok &= len(dropped) > 0
    failures += not ok
    print(f"{'PASS' if ok else 'FAIL'} {name} prepacked: {len(packed)} packed weights, "
          f"{len(dropped)} weights no longer taken")
    for batch, length in sizes_of(config):
        ids = rng.integers(0, config["vocab_size"], (batch, length)).astype(np.int32)
        positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
        logits = forward(ids, positions, *[bound[s["name"]] for s in forward.inputs[2:]])
        per_call_logits = per_call(ids, positions, *params.values())
        expected = reference.language_model(config, params, ids, positions)
        scale = np.abs(expected).max()
        error = np.abs(logits - expected).max() / scale
        per_call_error = np.abs(per_call_logits - expected).max() / scale
        same = np.array_equal(logits, per_call_logits)
        ok = max(error, per_call_error) <= 1e-5
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name} B={batch} S={length}: error packed once "
              f"{error:.2e}, per call {per_call_error:.2e} (tolerance 1e-05), "
              f"{'the same' if same else 'not the same'} logits")

sys.exit(1 if failures else 0)
