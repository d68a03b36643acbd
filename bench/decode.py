"""Decode benchmark: one generated token per call of a model description's
`decode` entry point (KV caches updated in place) against a PyTorch eager
decoder with a Hugging Face-style KV cache (past keys and values joined
with torch.cat every step), on the same weights, next to the machine's
STREAM triad. Run through `bench/run.sh decode` (bench/README.md).

Each implementation runs in its own subprocess (`decode.py worker IMPL DIR
DTYPE CONTEXT REPS`) and prints one result line.
"""

import argparse
import json
import math
import os
import pathlib
import sys
import time

import numpy as np

from attention import Runner, logits_error, modified
from tfm import compiler, runtime

BENCH = pathlib.Path(__file__).resolve().parent
TOLERANCE = {"f32": 1e-4, "bf16": 3e-2}  # max-norm relative, tfm vs PyTorch

# Issue 15's decode model: LLaMA-style, GQA 32/4, SwiGLU, 4 layers.
FULL = {"vocab_size": 32000, "d_model": 2048, "num_layers": 4, "num_heads": 32,
        "num_kv_heads": 4, "d_ff": 5632}
QUICK = {"vocab_size": 4000, "d_model": 512, "num_layers": 2, "num_heads": 8,
         "num_kv_heads": 2, "d_ff": 1376}


def bytes_per_token(config, dtype, context, batch):
    """Weights (every matrix once; the embedding's one row) and the K/V
    cache of `context` positions read per decode step."""
    d, layers = config["d_model"], config["num_layers"]
    head_dim = d // config["num_heads"]
    kv_rows = config["num_kv_heads"] * head_dim
    matrices = layers * (2 * d * d + 2 * kv_rows * d + 3 * d * config["d_ff"]) \
        + config["vocab_size"] * d
    width = 4 if dtype == "f32" else 2
    return width * (matrices + batch * layers * 2 * context * kv_rows)


def torch_decoder(config, weights, dtype):
    """One decode step of the Hugging Face LLaMA forward pass in PyTorch:
    step(token ids [B], position, past) -> (logits [B, vocab], past), past
    keys and values joined with torch.cat as HF's DynamicCache does."""
    import torch

    torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
    w = {name: torch.from_numpy(array.astype(np.float32)).to(torch_dtype)
         for name, array in weights.items()}
    heads, kv_heads = config["num_heads"], config["num_kv_heads"]
    head_dim = config["d_model"] // heads
    inverse = 1.0 / 10000.0 ** (torch.arange(0, head_dim, 2).double() / head_dim)

    def norm(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * weight

    def rope(x, position):
        angles = inverse * position
        cos = torch.cat([angles.cos()] * 2).to(torch_dtype)
        sin = torch.cat([angles.sin()] * 2).to(torch_dtype)
        first, second = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-second, first), dim=-1) * sin

    def step(ids, position, past):
        batch = ids.shape[0]
        x = w["model.embed_tokens.weight"][torch.from_numpy(ids).long()][:, None]
        new_past = []
        for layer in range(config["num_layers"]):
            p = f"model.layers.{layer}."
            h = norm(x, w[p + "input_layernorm.weight"])

            def split(y, count):
                return y.view(batch, 1, count, head_dim).transpose(1, 2)

            q = rope(split(h @ w[p + "self_attn.q_proj.weight"].T, heads), position)
            k = rope(split(h @ w[p + "self_attn.k_proj.weight"].T, kv_heads), position)
            v = split(h @ w[p + "self_attn.v_proj.weight"].T, kv_heads)
            k = torch.cat([past[layer][0], k], 2)
            v = torch.cat([past[layer][1], v], 2)
            new_past.append((k, v))
            k = k.repeat_interleave(heads // kv_heads, 1)
            v = v.repeat_interleave(heads // kv_heads, 1)
            scores = q @ k.transpose(-1, -2) / math.sqrt(head_dim)
            o = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, 1, -1)
            x = x + o @ w[p + "self_attn.o_proj.weight"].T
            h = norm(x, w[p + "post_attention_layernorm.weight"])
            gate = torch.nn.functional.silu(h @ w[p + "mlp.gate_proj.weight"].T)
            x = x + (gate * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        return (norm(x, w["model.norm.weight"]) @ w["lm_head.weight"].T)[:, 0], new_past

    return step


def worker(impl, directory, dtype, context, reps):
    """Times decode steps at `context` cached positions; prints a line."""
    config = json.loads((directory / "model.json").read_text())
    weights = dict(np.load(directory / "weights.npz"))
    past = np.load(directory / "past.npz")
    ids = np.load(directory / "ids.npy")
    batch = ids.shape[0]
    kernels = "-"
    if impl == "torch":
        import ctypes

        import torch
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        core = ctypes.CDLL("libopenblas.so.0").openblas_get_corename
        core.restype = ctypes.c_char_p
        kernels = core().decode()
        step = torch_decoder(config, weights, dtype)
        torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
        cache = [(torch.from_numpy(past[f"k{layer}"]).to(torch_dtype),
                  torch.from_numpy(past[f"v{layer}"]).to(torch_dtype))
                 for layer in range(config["num_layers"])]

        def call():
            with torch.no_grad():
                logits, _ = step(ids, context, cache)  # the past stays as it is
            return logits.float().numpy()
    else:
        library = runtime.Library(directory / f"model-{dtype}.so")
        decode = library["decode"]
        convert = runtime.to_bf16 if dtype == "bf16" else (lambda a: a.astype(np.float32))
        caches = []
        for layer in range(config["num_layers"]):
            for kind in "kv":
                array = past[f"{kind}{layer}"]
                cache = np.zeros(array.shape[:2] + (context + 1,) + array.shape[3:],
                                 runtime.NUMPY_DTYPES[dtype])
                cache[:, :, :context] = convert(array)
                caches.append(cache)
        prepared = library.prepare({name: convert(array) for name, array in weights.items()})
        params = [prepared[s["name"]] for s in decode.inputs[3 + len(caches):]]
        lengths = np.full(batch, context, np.int32)
        # Each call writes position `context` again: the same step repeated.
        bound = decode.bind(ids[:, None], lengths[:, None], lengths, *caches, *params)

        def call():
            logits = bound()[:, 0]
            return runtime.from_bf16(logits) if dtype == "bf16" else logits
    result = call()  # warm-up
    seconds = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    np.save(directory / f"logits-{impl}-{dtype}.npy", np.asarray(result, np.float32))
    print(f"decode seconds={np.median(seconds):.6f} reps={reps} kernels={kernels}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small model, fewer repeats")
    parser.add_argument("--context", type=int, default=1024,
                        help="cached positions before the step (default 1024)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--reps", type=int, help="timed steps (default 10, --quick 3)")
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("BENCH_THREADS", os.cpu_count())))
    parser.add_argument("--timeout", type=int, default=1800)
    args = parser.parse_args()
    config = dict(QUICK if args.quick else FULL)
    reps = args.reps or (3 if args.quick else 10)
    dtypes = [d for d in ("f32", "bf16") if d in args.dtypes.split(",")]
    runner = Runner(args)
    directory = BENCH / ".build" / "decode"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.json").write_text(json.dumps(config))

    tool, built = runner.header("OMP_NUM_THREADS for tfm, torch.set_num_threads "
                                "and OPENBLAS_NUM_THREADS for PyTorch")
    for dtype in dtypes:
        start = time.perf_counter()
        library = runtime.Library(compiler.compile_model(
            dict(config, dtype=dtype), directory / f"model-{dtype}.so"))
        print(f"{dtype}: compiled in {time.perf_counter() - start:.1f} s")
    rng = np.random.default_rng(0)
    weights = {}
    for spec in library.given_inputs("forward")[2:]:
        shape = spec["shape"]
        scale = 0.1 if len(shape) == 1 else 1 / math.sqrt(shape[-1])
        weights[spec["name"]] = ((1.0 if len(shape) == 1 else 0.0)
                                 + scale * rng.standard_normal(shape)).astype(np.float32)
    np.savez(directory / "weights.npz", **weights)
    head_dim = config["d_model"] // config["num_heads"]
    np.savez(directory / "past.npz", **{
        f"{kind}{layer}": rng.standard_normal(
            (args.batch, config["num_kv_heads"], args.context, head_dim)).astype(np.float32)
        for layer in range(config["num_layers"]) for kind in "kv"})
    np.save(directory / "ids.npy",
            rng.integers(0, config["vocab_size"], args.batch).astype(np.int32))

    print(f"model: {json.dumps(config)}, batch {args.batch}, {args.context} cached positions")
    triad = float(runner.triad()["gbps"])
    print(f"STREAM triad: {triad:.1f} GB/s\n")
    print(f"{'dtype':<5} {'impl':<6} {'ms/token':>9} {'tokens/s':>9} {'GB/token':>9} "
          f"{'GB/s':>6} {'%triad':>7} {'torch/x':>8} {'error':>9}  kernels")
    for dtype in dtypes:
        moved = bytes_per_token(config, dtype, args.context, args.batch) / 1e9
        torch_seconds = None
        for impl in ("torch", "tfm"):
            result, why = runner.run([sys.executable, BENCH / "decode.py", "worker", impl,
                                      directory, dtype, args.context, reps])
            if not result:
                print(f"{dtype:<5} {impl:<6} {why}")
                continue
            seconds = float(result["seconds"])
            error = "-"
            if impl == "torch":
                torch_seconds = seconds
            elif torch_seconds:
                error = logits_error(directory / f"logits-tfm-{dtype}.npy",
                                     directory / f"logits-torch-{dtype}.npy",
                                     TOLERANCE[dtype])
            print(f"{dtype:<5} {impl:<6} {seconds * 1e3:>9.2f} {args.batch / seconds:>9.1f} "
                  f"{moved:>9.3f} {moved / seconds:>6.1f} {100 * moved / seconds / triad:>6.1f}% "
                  f"{(torch_seconds / seconds if torch_seconds else float('nan')):>8.2f} "
                  f"{error:>9}  {result['kernels']}")
            sys.stdout.flush()
    again = float(runner.triad()["gbps"])
    print(f"\nSTREAM triad again: {again:.1f} GB/s, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if modified(tool) != built:
        print("WARNING: tfm-compile was rebuilt during the run")


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker(sys.argv[2], pathlib.Path(sys.argv[3]), sys.argv[4], int(sys.argv[5]),
               int(sys.argv[6]))
    else:
        main()
