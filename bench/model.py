"""Whole-model benchmark: a LLaMA-style model description compiled by tfm
against the same model in PyTorch eager (Hugging Face LLaMA math, float32,
or bfloat16 with `--dtype bf16`), with the same weights and tokens, next to
the machine's sgemm rate. Run through `bench/run.sh model`
(bench/README.md).

Each implementation runs in its own subprocess (`model.py worker IMPL DIR`)
with the benchmark's thread settings, reads the weights and tokens from DIR,
writes its logits there and prints one result line. `--compare-with
TFM_COMPILE` also times the model another tfm-compile builds (an earlier
commit's) as impl `before`; with `--interleave`, `before` and tfm run in one
process, a call of one then a call of the other.
"""

import argparse
import json
import math
import os
import pathlib
import sys
import time

import numpy as np

from attention import Runner, add_compare_arguments, logits_error, modified, status_kib
from tfm import compiler, runtime

BENCH = pathlib.Path(__file__).resolve().parent
# max-norm relative error of tfm's logits against PyTorch's
TOLERANCE = {"f32": 1e-4, "bf16": 3e-2}
# Timed calls last at least this long: a few calls of a short forward (the
# example's 4 ms) read up to 2.5x its time right after the large models.
MIN_SECONDS = 1.0

# The model of issue 14: LLaMA-style, GQA 32/4, SwiGLU, tied to nothing.
FULL = {"vocab_size": 32000, "d_model": 2048, "num_layers": 2, "num_heads": 32,
        "num_kv_heads": 4, "d_ff": 5632}
QUICK = {"vocab_size": 4000, "d_model": 512, "num_layers": 2, "num_heads": 8,
         "num_kv_heads": 2, "d_ff": 1376}


def flops(config, batch, length, logits="all"):
    """2 per weight per token for the projections, FFN and LM head; 4·D per
    visible (query, key) pair and query head for attention (causal). With
    the last position's logits only, the last layer's output projection and
    FFN and the LM head count one row per sequence (what both tfm and the
    PyTorch forward compute then, as llama.cpp does)."""
    d, layers = config["d_model"], config["num_layers"]
    head_dim = d // config["num_heads"]
    kv_rows = config["num_kv_heads"] * head_dim
    qkv = d * d + 2 * kv_rows * d
    after_attention = d * d + 3 * d * config["d_ff"]
    pairs = length * (length + 1) // 2
    attention = pairs * 4 * head_dim * config["num_heads"] * layers
    rows = 1 if logits == "last" else length
    weights = ((layers * qkv + (layers - 1) * after_attention) * length
               + (after_attention + config["vocab_size"] * d) * rows)
    return batch * (2 * weights + attention)


def prompt_flops(config, batch, length):
    """The work of a prompt as llama.cpp's llama-bench counts it (and issue
    14's llama.cpp figures): every layer on every position, the LM head on
    the last one, although both tfm and llama.cpp run the last layer's
    output projection and FFN on the last position only."""
    return (flops(config, batch, length, "all")
            - batch * (length - 1) * 2 * config["vocab_size"] * config["d_model"])


def layer_activation_bytes(config, batch, length):
    """The f32 tensors one layer computes, unfused: norm output, q, k, v,
    attention output, o_proj output, residual, norm output, gate, up,
    hidden, down output (issue 14's RSS bound is this + 64 MiB beyond the
    weights, inputs and outputs)."""
    d = config["d_model"]
    kv_rows = config["num_kv_heads"] * d // config["num_heads"]
    return 4 * batch * length * (6 * d + 2 * kv_rows + 3 * config["d_ff"])


def torch_weights(weights, dtype):
    """The weights as PyTorch tensors of `dtype` (f32 ones share NumPy's)."""
    import torch

    torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
    return {name: torch.from_numpy(array).to(torch_dtype) for name, array in weights.items()}


def torch_logits(config, w, ids, positions, logits="all"):
    """The Hugging Face LLaMA forward pass, written out in PyTorch in the
    dtype and on the device of the weights `w` (torch_weights, or CUDA
    tensors); with `logits="last"`, the last
    layer's output projection, FFN and LM head on the last position only.
    Returns a tensor of that dtype."""
    import torch

    torch_dtype = w["model.embed_tokens.weight"].dtype
    device = w["model.embed_tokens.weight"].device  # the CPU, or a GPU
    heads, kv_heads = config["num_heads"], config["num_kv_heads"]
    head_dim = config["d_model"] // heads
    batch, length = ids.shape
    inverse = 1.0 / 10000.0 ** (torch.arange(0, head_dim, 2, device=device).double()
                                / head_dim)
    angles = torch.from_numpy(positions).to(device).double()[..., None] * inverse
    cos = torch.cat([angles.cos()] * 2, -1).to(torch_dtype)[:, None]  # [B, 1, S, D]
    sin = torch.cat([angles.sin()] * 2, -1).to(torch_dtype)[:, None]
    causal = torch.full((length, length), float("-inf"), device=device).triu(1).to(torch_dtype)

    def norm(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * weight

    def rope(x):
        first, second = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-second, first), dim=-1) * sin

    def split(x, count):
        return x.view(batch, length, count, head_dim).transpose(1, 2)

    with torch.no_grad():
        x = w["model.embed_tokens.weight"][torch.from_numpy(ids).to(device).long()]
        for layer in range(config["num_layers"]):
            p = f"model.layers.{layer}."
            h = norm(x, w[p + "input_layernorm.weight"])
            q = rope(split(h @ w[p + "self_attn.q_proj.weight"].T, heads))
            k = rope(split(h @ w[p + "self_attn.k_proj.weight"].T, kv_heads))
            v = split(h @ w[p + "self_attn.v_proj.weight"].T, kv_heads)
            k = k.repeat_interleave(heads // kv_heads, dim=1)
            v = v.repeat_interleave(heads // kv_heads, dim=1)
            scores = q @ k.transpose(-1, -2) / math.sqrt(head_dim) + causal
            attention = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, -1)
            if logits == "last" and layer == config["num_layers"] - 1:
                x, attention = x[:, -1:], attention[:, -1:]
            x = x + attention @ w[p + "self_attn.o_proj.weight"].T
            h = norm(x, w[p + "post_attention_layernorm.weight"])
            gate = torch.nn.functional.silu(h @ w[p + "mlp.gate_proj.weight"].T)
            x = x + (gate * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        head = w.get("lm_head.weight", w["model.embed_tokens.weight"])  # tied
        return norm(x, w["model.norm.weight"]) @ head.T


def worker(impl, directory, logits, length, reps, dtype):
    """Times one implementation on the weights in `directory` and the
    tokens of `length` positions there."""
    config = json.loads((directory / "model.json").read_text())
    ids = np.load(directory / f"ids-{length}.npy")
    positions = np.load(directory / f"positions-{length}.npy")
    weights = dict(np.load(directory / "weights.npz"))
    kernels = "-"
    if impl == "torch":
        import ctypes

        import torch
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        core = ctypes.CDLL("libopenblas.so.0").openblas_get_corename
        core.restype = ctypes.c_char_p
        kernels = core().decode()
        w = torch_weights(weights, dtype)
        del weights
        call = lambda: torch_logits(config, w, ids, positions, logits)  # noqa: E731
        to_f32 = lambda t: t.float().numpy()  # noqa: E731
    elif "+" in impl:
        return interleaved(impl.split("+"), directory, logits, ids, positions,
                           weights, reps, dtype)
    else:
        call = tfm_call(directory / library_name(impl, logits, dtype), ids,
                        positions, weights, dtype)
        to_f32 = runtime.from_bf16 if dtype == "bf16" else (lambda a: a)
        del weights
    # The peak from here: converting the weights (bf16) must not count.
    pathlib.Path("/proc/self/clear_refs").write_text("5")
    base = status_kib("VmRSS")  # weights, token ids and (tfm) the logits
    result = call()  # warm-up
    seconds = []
    deadline = time.perf_counter() + MIN_SECONDS
    while len(seconds) < reps or time.perf_counter() < deadline:
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    extra = status_kib("VmHWM") - base
    # Widened to f32 outside the timed calls and the RSS peak.
    np.save(directory / f"logits-{impl}.npy", to_f32(result))
    print(f"model seconds={np.median(seconds):.6f} reps={len(seconds)} "
          f"kernels={kernels} rss_extra_kib={extra}")


def library_name(impl, logits, dtype):
    return f"model-{logits}-{dtype}{'-before' if impl == 'before' else ''}.so"


def tfm_call(path, ids, positions, weights, dtype):
    """The forward of the library at `path`, bound to these arrays."""
    library = runtime.Library(path)
    forward = library["forward"]
    convert = runtime.to_bf16 if dtype == "bf16" else (lambda a: a)
    params = {name: convert(array) for name, array in weights.items()}
    params = library.prepare(params)  # weights packed once, if so built
    return forward.bind(ids, positions,
                        *[params[s["name"]] for s in forward.inputs[2:]])


def interleaved(impls, directory, logits, ids, positions, weights, reps, dtype):
    """Times the libraries of `impls` call by call in one process, so that
    both see the same moment of the machine; no RSS (two libraries)."""
    calls = [tfm_call(directory / library_name(impl, logits, dtype), ids,
                      positions, weights, dtype) for impl in impls]
    results = [call() for call in calls]  # warm-up
    seconds = [[] for _ in calls]
    deadline = time.perf_counter() + MIN_SECONDS
    while len(seconds[0]) < reps or time.perf_counter() < deadline:
        for call, times in zip(calls, seconds):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
    to_f32 = runtime.from_bf16 if dtype == "bf16" else (lambda a: a)
    for impl, result, times in zip(impls, results, seconds):
        np.save(directory / f"logits-{impl}.npy", to_f32(result))
        print(f"model impl={impl} seconds={np.median(times):.6f} reps={len(times)} "
              f"kernels=- rss_extra_kib=-")


def prepare(directory, config, batch, lengths, logits_modes, dtype, before=None):
    """Compiles the model in `dtype` for each logits mode, draws its weights
    (f32; a bf16 run rounds them) and the token ids of each length; returns
    the weights and compile seconds."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.json").write_text(json.dumps(config))
    start = time.perf_counter()
    for logits in logits_modes:
        library = runtime.Library(compiler.compile_model(
            dict(config, logits=logits, dtype=dtype),
            directory / library_name("tfm", logits, dtype)))
    compile_seconds = (time.perf_counter() - start) / len(logits_modes)
    if before:  # `before` compiles the same description
        os.environ["TFM_COMPILE"] = str(before)
        try:
            for logits in logits_modes:
                compiler.compile_model(dict(config, logits=logits, dtype=dtype),
                                       directory / library_name("before", logits, dtype))
        finally:
            del os.environ["TFM_COMPILE"]
    rng = np.random.default_rng(0)
    weights = {}
    for spec in library.given_inputs("forward")[2:]:
        shape = spec["shape"]
        if len(shape) == 1:  # norm weights around 1
            weights[spec["name"]] = (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            scale = 1 / math.sqrt(shape[-1])
            weights[spec["name"]] = (scale * rng.standard_normal(shape)).astype(np.float32)
    np.savez(directory / "weights.npz", **weights)
    for length in lengths:
        ids = rng.integers(0, config["vocab_size"], (batch, length)).astype(np.int32)
        np.save(directory / f"ids-{length}.npy", ids)
        np.save(directory / f"positions-{length}.npy",
                np.tile(np.arange(length, dtype=np.int32), (batch, 1)))
    return weights, compile_seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a small model and fewer repeats")
    parser.add_argument("--layers", type=int, help="override num_layers")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", default="1,16,128,512",
                        help="tokens per sequence, comma-separated")
    parser.add_argument("--logits", default="all,last",
                        help="'all', 'last' or both: logits of every position, "
                        "or of the last one (a prompt before generating)")
    parser.add_argument("--no-example", action="store_true",
                        help="leave out the bundled example (examples/tiny_llama.json)")
    parser.add_argument("--dtype", default="f32", choices=["f32", "bf16"],
                        help="weights and activations of both implementations")
    parser.add_argument("--reps", type=int, help="timed calls at least, and at least 1 s of them "
                        "(default 3, --quick 1)")
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("BENCH_THREADS", os.cpu_count())),
                        help="threads (default $BENCH_THREADS, else the cpus)")
    parser.add_argument("--timeout", type=int, default=1800,
                        help="seconds per implementation before it is skipped")
    add_compare_arguments(parser, "the model")
    args = parser.parse_args()
    if args.interleave and not args.compare_with:
        parser.error("--interleave needs --compare-with")
    config = dict(QUICK if args.quick else FULL)
    if args.layers:
        config["num_layers"] = args.layers
    lengths = [int(n) for n in args.seq.split(",")]
    logits_modes = [m for m in ("all", "last") if m in args.logits.split(",")]
    reps = args.reps or (1 if args.quick else 3)
    runner = Runner(args)

    # (name, directory, config, batch, lengths, logits modes)
    models = [("issue14", BENCH / ".build" / "model", config, args.batch, lengths,
               logits_modes)]
    if not args.no_example:
        example = json.loads((BENCH.parent / "examples" / "tiny_llama.json").read_text())
        # scripts/run-example.sh's shape: B = 2, S = 64, every position.
        models.append(("example", BENCH / ".build" / "example", example, 2, [64], ["all"]))

    tool, built = runner.header()
    impls, runs = ["torch", "tfm"], ["torch", "tfm"]
    if args.compare_with:
        print(f"before: {args.compare_with} (built "
              f"{modified(pathlib.Path(args.compare_with))})")
        impls.insert(1, "before")
        runs = ["torch", "before+tfm"] if args.interleave else impls
    prepared = {}
    for name, directory, model, batch, model_lengths, modes in models:
        weights, compile_seconds = prepare(directory, model, batch, model_lengths, modes,
                                           args.dtype, args.compare_with)
        # Every weight is read once per forward, but the (untied) embedding
        # table: only its rows for the tokens.
        width = 4 if args.dtype == "f32" else 2
        weight_bytes = width * sum(a.size for key, a in weights.items()
                               if key != "model.embed_tokens.weight")
        prepared[name] = weight_bytes
        print(f"model {name}: {json.dumps(model)}, batch {batch}, "
              f"{sum(a.size for a in weights.values()) / 1e6:.0f}M weights ({args.dtype}), "
              f"{weight_bytes / 1e9:.2f} GB read per forward, compiled in "
              f"{compile_seconds:.1f} s")
    sgemm_rate, peak, triad = runner.rates("forward")

    print(f"{'model':<8} {'S':>4} {'logits':<6} {'impl':<6} {'ms':>9} {'tokens/s':>9} "
          f"{'GFLOP/s':>8} {'%sgemm':>7} {'%peak':>6} {'wGB/s':>6} {'%triad':>6} "
          f"{'torch/x':>8} {'error':>9} {'+RSS MiB':>8} {'bound':>6}  kernels")
    prompts = []  # (name, S, impl, seconds) of the last-position runs
    for name, directory, model, batch, model_lengths, modes in models:
        for length in model_lengths:
            for logits in modes:
                work = flops(model, batch, length, logits)
                bound = (layer_activation_bytes(model, batch, length) + (64 << 20)) / 2**20
                torch_seconds = None
                results = {}
                for run in runs:
                    result, why = runner.run_all([sys.executable, BENCH / "model.py",
                                                  "worker", run, directory, logits,
                                                  length, reps, args.dtype])
                    for impl in run.split("+"):
                        results[impl] = (next((r for r in result
                                               if r.get("impl", impl) == impl), None)
                                         if result else None, why)
                for impl in impls:
                    result, why = results[impl]
                    head = f"{name:<8} {length:>4} {logits:<6} {impl:<6}"
                    if not result:
                        print(f"{head} {why}")
                        continue
                    seconds = float(result["seconds"])
                    error = "-"
                    if impl == "torch":
                        torch_seconds = seconds
                    elif torch_seconds:
                        error = logits_error(directory / f"logits-{impl}.npy",
                                             directory / "logits-torch.npy",
                                             TOLERANCE[args.dtype])
                    if logits == "last":
                        prompts.append((model, batch, length, impl, seconds))
                    rss = result["rss_extra_kib"]
                    rss = "-" if rss == "-" else f"{int(rss) / 1024:.1f}"
                    rate = work / seconds / 1e9
                    wrate = prepared[name] / seconds / 1e9
                    print(f"{head} {seconds * 1e3:>9.1f} {batch * length / seconds:>9.1f} "
                          f"{rate:>8.1f} {100 * rate / sgemm_rate:>6.1f}% "
                          f"{100 * rate / peak:>5.1f}% {wrate:>6.1f} "
                          f"{100 * wrate / triad:>5.1f}% "
                          f"{(torch_seconds / seconds if torch_seconds else float('nan')):>8.3f} "
                          f"{error:>9} {rss:>8} "
                          f"{bound:>6.0f}  {result['kernels']}")
                    sys.stdout.flush()
    if prompts:
        print("\nlast position's logits counted as llama-bench counts a prompt "
              "(every layer on every position):")
        for model, batch, length, impl, seconds in prompts:
            rate = prompt_flops(model, batch, length) / seconds / 1e9
            print(f"  S = {length:>4} {impl:<6} {rate:>7.1f} GFLOP/s "
                  f"{100 * rate / sgemm_rate:>6.1f}% of sgemm {100 * rate / peak:>6.1f}% of peak")
    runner.closing(sgemm_rate, tool, built)


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker(sys.argv[2], pathlib.Path(sys.argv[3]), sys.argv[4], int(sys.argv[5]),
               int(sys.argv[6]), sys.argv[7])
    else:
        main()
