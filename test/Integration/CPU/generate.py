# RUN: %python %s %t
#
# Generation with KV caches (prefill + decode entry points, caches updated
# in place) against two oracles on random weights:
# - the float64 reference language model recomputing the whole prefix at
#   every step: greedy generation of 32 tokens gives exactly its tokens and
#   every step's logits are within 1e-4 (f32) of its logits;
# - a PyTorch LLaMA decoder with a Hugging Face-style KV cache (torch.cat of
#   past keys and values), written here: the same tokens, logits within 1e-4.
# Models: GQA with tied embeddings and a batch of prompts of different
# lengths; heads wider than d_model / num_heads ("head_dim", as in Llama 3
# and Mistral Nemo); MQA with a sliding window past its window (the caches are rings
# of W positions); Llama 3's scaled RoPE frequencies; a GPT-2 model (learned positions, LayerNorm, biases,
# GPT-2 checkpoint names); a post-norm model with prompts of different
# lengths; f16 and bf16 (logits within 1e-2 of the
# reference fed the same tokens); weights packed once (the default) and in every
# call (--prepack-weights=false). Also: sampling is reproducible from a
# seed, top_k = 1 is greedy, and bad caches, lengths and prompts are refused
# before anything runs.

import pathlib
import sys

import numpy as np
import torch

from tfm import compiler, generation, reference, runtime

workdir = pathlib.Path(sys.argv[1])
workdir.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(2027)
failures = 0


def check(ok, what):
    global failures
    failures += not ok
    print(f"{'PASS' if ok else 'FAIL'} {what}")


def random_params(inputs, dtype="f32"):
    """Fan-in scaled weights, norm weights around 1; (compiled values,
    float64 values they round to)."""
    device, exact = {}, {}
    for spec in inputs:
        name, shape = spec["name"], spec["shape"]
        if name in ("input_ids", "position_ids") or name.startswith("cache"):
            continue
        value = rng.standard_normal(shape) / np.sqrt(shape[-1])
        if len(shape) == 1 and name.endswith("weight"):
            value = 1.0 + 0.1 * rng.standard_normal(shape)
        if dtype == "bf16":
            device[name] = runtime.to_bf16(value)
            exact[name] = runtime.from_bf16(device[name]).astype(np.float64)
        else:
            device[name] = value.astype(runtime.NUMPY_DTYPES[dtype])
            exact[name] = device[name].astype(np.float64)
    return device, exact


def reference_logits(config, params, sequence):
    ids = np.array([sequence], np.int32)
    positions = np.arange(len(sequence), dtype=np.int32)[None]
    return reference.language_model(config, params, ids, positions)[0, -1]


def run_greedy(name, config, prompts, steps=32, dtype="f32", tolerance=1e-4,
               flags=()):
    """Greedy generation against the reference recomputing each prefix."""
    library = runtime.Library(compiler.compile_model(
        dict(config, dtype=dtype), workdir / f"{name}.so", flags=flags))
    device, exact = random_params(library.given_inputs("forward"), dtype)
    model = generation.Model(library, device)
    steps_logits = []
    generated = list(model.generate(prompts, steps, logits=steps_logits))
    sequences = [list(p) for p in prompts]
    worst, same = 0.0, True
    for step, (tokens, logits) in enumerate(zip(generated, steps_logits)):
        for b, sequence in enumerate(sequences):
            expected = reference_logits(config, exact, sequence)
            worst = max(worst, np.abs(logits[b] - expected).max() / np.abs(expected).max())
            # 16-bit models: the tokens follow their own rounding; only the
            # logits are compared, on the same tokens.
            same &= dtype != "f32" or tokens[b] == expected.argmax()
            sequence.append(int(tokens[b]))
    check(len(generated) == steps and same and worst <= tolerance,
          f"{name}: {steps} greedy tokens {'match' if same else 'DIFFER'}, "
          f"logits error {worst:.2e} (tolerance {tolerance:g})")
    return library, device, exact, sequences


LLAMA = {"vocab_size": 89, "d_model": 64, "num_layers": 2, "num_heads": 8,
         "num_kv_heads": 2, "d_ff": 96, "tie_embeddings": True}
WINDOW = {"vocab_size": 61, "d_model": 48, "num_layers": 2, "num_heads": 6,
          "num_kv_heads": 1, "d_ff": 80, "mask": {"sliding_window": 4},
          "positions": {"kind": "rope", "theta": 1e6, "style": "interleaved"}}
GPT2 = {"vocab_size": 73, "d_model": 36, "num_layers": 2, "num_heads": 3,
        "d_ff": 72, "norm": "layer_norm", "ffn": "gelu_tanh", "naming": "gpt2",
        "positions": {"kind": "learned", "max_positions": 48},
        "attention_bias": True, "mlp_bias": True, "tie_embeddings": True}

prompts = [rng.integers(0, 89, 7).tolist(), rng.integers(0, 89, 3).tolist()]
llama, llama_params, llama_exact, llama_sequences = run_greedy("llama_gqa", LLAMA, prompts)
run_greedy("wide_heads", dict(LLAMA, head_dim=12), [rng.integers(0, 89, 6).tolist()],
           steps=16)
run_greedy("mqa_window", WINDOW, [rng.integers(0, 61, 6).tolist()])
run_greedy("llama3_scaled_rope", dict(LLAMA, positions={
    "kind": "rope", "theta": 5e5, "scaling": {"type": "llama3", "factor": 8.0,
    "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_positions": 16}}),
    [rng.integers(0, 89, 5).tolist()], steps=16)
run_greedy("gpt2", GPT2, [rng.integers(0, 73, 5).tolist(), rng.integers(0, 73, 9).tolist()])
run_greedy("llama_f16", dict(LLAMA, num_layers=1), [prompts[0]], steps=8, dtype="f16",
           tolerance=1e-2)
run_greedy("llama_bf16", dict(LLAMA, num_layers=1), [prompts[0]], steps=8, dtype="bf16",
           tolerance=1e-2)
# The f32 weights are packed once (tfm-compile's default): generation.Model
# runs the library's prepare_weights when it binds them, and prefill and
# decode read the packed panels; prompts of 45 and 52 tokens (8-row blocks
# with rows left), one row per decode step. Then the same with the weights
# packed in every call (--prepack-weights=false).
for flags in [(), ("--prepack-weights=false",)]:
    suffix = "_per_call" if flags else ""
    run_greedy("llama_long" + suffix, LLAMA, [rng.integers(0, 89, 45).tolist(),
                                              rng.integers(0, 89, 52).tolist()],
               steps=8, flags=flags)
    # GPT-2's Conv1D weights ([K, N]; c_attn in q, k and v slices).
    run_greedy("gpt2_again" + suffix, GPT2, [rng.integers(0, 73, 5).tolist(),
                                             rng.integers(0, 73, 9).tolist()],
               steps=8, flags=flags)
# Post-norm: prefill's last layer takes each row's last token before its
# residual add and norm, as pre-norm does before its output projection.
run_greedy("post_norm", dict(LLAMA, norm_placement="post"),
           [rng.integers(0, 89, 4).tolist(), rng.integers(0, 89, 8).tolist()], steps=8)


def torch_greedy(config, params, prompt, steps):
    """A PyTorch LLaMA decoder (RMSNorm, rotate-half RoPE, GQA, SwiGLU) with
    a Hugging Face-style KV cache: past keys and values concatenated."""
    w = {name: torch.from_numpy(np.asarray(a, np.float32)) for name, a in params.items()}
    heads, kv_heads = config["num_heads"], config["num_kv_heads"]
    head_dim = config["d_model"] // heads
    inverse = 1.0 / 10000.0 ** (torch.arange(0, head_dim, 2).double() / head_dim)
    cache = [[None, None] for _ in range(config["num_layers"])]

    def norm(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * weight

    def rope(x, positions):
        angles = positions.double()[:, None] * inverse
        cos = torch.cat([angles.cos()] * 2, -1).float()
        sin = torch.cat([angles.sin()] * 2, -1).float()
        first, second = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-second, first), dim=-1) * sin

    def step(tokens, start):
        length = len(tokens)
        positions = torch.arange(start, start + length)
        x = w["model.embed_tokens.weight"][torch.tensor(tokens)][None]
        for layer in range(config["num_layers"]):
            p = f"model.layers.{layer}."
            h = norm(x, w[p + "input_layernorm.weight"])

            def split(y, count):
                return y.view(1, length, count, head_dim).transpose(1, 2)

            q = rope(split(h @ w[p + "self_attn.q_proj.weight"].T, heads), positions)
            k = rope(split(h @ w[p + "self_attn.k_proj.weight"].T, kv_heads), positions)
            v = split(h @ w[p + "self_attn.v_proj.weight"].T, kv_heads)
            if cache[layer][0] is not None:
                k = torch.cat([cache[layer][0], k], 2)
                v = torch.cat([cache[layer][1], v], 2)
            cache[layer] = [k, v]
            k = k.repeat_interleave(heads // kv_heads, 1)
            v = v.repeat_interleave(heads // kv_heads, 1)
            scores = q @ k.transpose(-1, -2) / head_dim ** 0.5
            total = k.shape[2]
            visible = torch.arange(total)[None] <= (torch.arange(length)[:, None] + total - length)
            scores = scores.masked_fill(~visible, float("-inf"))
            o = (scores.softmax(-1) @ v).transpose(1, 2).reshape(1, length, -1)
            x = x + o @ w[p + "self_attn.o_proj.weight"].T
            h = norm(x, w[p + "post_attention_layernorm.weight"])
            gate = torch.nn.functional.silu(h @ w[p + "mlp.gate_proj.weight"].T)
            x = x + (gate * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        return (norm(x, w["model.norm.weight"]) @ w["model.embed_tokens.weight"].T)[0, -1]

    tokens, logits = [], []
    with torch.no_grad():
        out = step(list(prompt), 0)
        for count in range(steps):
            logits.append(out.double().numpy())
            tokens.append(int(out.argmax()))
            out = step([tokens[-1]], len(prompt) + count)
    return tokens, logits


# The PyTorch decoder with its own cache agrees with tfm's on the first
# prompt (tfm ran it in a batch, padded, beside a shorter one).
torch_tokens, torch_logits = torch_greedy(LLAMA, llama_params, prompts[0], 32)
tfm_tokens = llama_sequences[0][len(prompts[0]):]
steps_logits = []
list(generation.Model(llama, llama_params).generate([prompts[0]], 32, logits=steps_logits))
worst = max(np.abs(t[0] - p).max() / np.abs(p).max() for t, p in zip(steps_logits, torch_logits))
check(torch_tokens == tfm_tokens and worst <= 1e-4,
      f"llama_gqa against PyTorch with a KV cache: tokens "
      f"{'match' if torch_tokens == tfm_tokens else 'DIFFER'}, logits error {worst:.2e}")

# Sampling: the same seed draws the same tokens; top_k = 1 is greedy.
model = generation.Model(llama, llama_params)
draws = [np.stack(list(model.generate(prompts, 12, temperature=0.8, top_k=20, top_p=0.9,
                                      seed=7))) for _ in range(2)]
greedy = np.stack(list(model.generate(prompts, 12)))
top1 = np.stack(list(model.generate(prompts, 12, temperature=1.5, top_k=1, seed=3)))
check((draws[0] == draws[1]).all() and (top1 == greedy).all(),
      "sampling: reproducible from a seed, top_k = 1 equals greedy")
# Stopping at the first occurrence of a token greedy generation produces.
column = [int(t) for t in greedy[:, 0]]
first = max(i for i, t in enumerate(column) if t not in column[:i])
ids = [t[0] for t in model.generate([prompts[0]], 12, eos_token_id=column[first])]
check(ids == column[:first + 1], f"generation stops at eos_token_id (after {first + 1} tokens)")

# Bad inputs are refused before anything runs: the caches are untouched.
decode = llama["decode"]
params = list(model.params)
caches = model.new_caches(2, 8)
for cache in caches:
    cache[:] = 1.0
one = np.ones((2, 1), np.int32)


def refused(what, call, message, error=runtime.RuntimeCheckError):
    try:
        call()
    except error as exception:
        check(message in str(exception) and all((c == 1.0).all() for c in caches),
              f"{what} refused: {exception}")
        return
    check(False, f"{what}: no error")


refused("a length at the caches' capacity",
        lambda: decode(one, one, np.array([3, 8], np.int32), *caches, *params),
        "every element of 'cache_lengths' must be in [0, dim 2 of 'cache.0.key')")
refused("a negative length",
        lambda: decode(one, one, np.array([-1, 0], np.int32), *caches, *params),
        "every element of 'cache_lengths' must be in [0, dim 2 of 'cache.0.key')")
short = [c[:, :, :4].copy() if i == 2 else c for i, c in enumerate(caches)]
refused("caches of different capacities",
        lambda: decode(one, one, np.array([0, 0], np.int32), *short, *params),
        "dim 2 of 'cache.1.key' must equal dim 2 of 'cache.0.key'")
refused("a cache of another batch",
        lambda: decode(one, one, np.array([0, 0], np.int32), caches[0][:1].copy(),
                       *caches[1:], *params),
        "dim 0 of 'cache.0.key' must equal dim 0 of 'input_ids'")
refused("a cache of the wrong dtype",
        lambda: decode(one, one, np.array([0, 0], np.int32), caches[0].astype(np.float16),
                       *caches[1:], *params),
        "input 'cache.0.key' must be [?, 2, ?, 8] f32, got [2, 2, 8, 8] f16", TypeError)
refused("a read-only cache",
        lambda: decode(one, one, np.array([0, 0], np.int32),
                       np.lib.stride_tricks.as_strided(caches[0], writeable=False),
                       *caches[1:], *params),
        "input 'cache.0.key' is updated in place and is read-only", ValueError)
prefill = llama["prefill"]
ids = np.ones((2, 5), np.int32)
positions = np.tile(np.arange(5, dtype=np.int32), (2, 1))
refused("a prompt longer than the caches",
        lambda: prefill(np.ones((2, 9), np.int32), np.ones((2, 9), np.int32),
                        np.array([9, 9], np.int32), *caches, *params),
        "dim 2 of 'cache.0.key' must be at least dim 1 of 'input_ids'")
refused("an empty prompt",
        lambda: prefill(ids, positions, np.array([5, 0], np.int32), *caches, *params),
        "every element of 'prompt_lengths' must be in [1, dim 1 of 'input_ids']")
try:
    list(model.generate([[1, 2], []], 4))
    check(False, "an empty prompt in generate: no error")
except ValueError as error:
    check("at least one token" in str(error), f"an empty prompt in generate refused: {error}")

sys.exit(1 if failures else 0)
