"""Projection benchmark: every projection shape of issue 14's model (q/o,
k/v, gate/up, down, the LM head) as a `tfm.linear` compiled by tfm against
PyTorch's `nn.functional.linear` (OpenBLAS for f32, oneDNN for bf16) on the
same random inputs, at several row counts M = B·S, next to the machine's
sgemm rate, FMA peak and STREAM triad. Run through `bench/run.sh
projections` (bench/README.md).

Each implementation runs in its own subprocess (`projections.py worker IMPL
DIR DTYPE ROWS REPS`) with the benchmark's thread settings; it prints one
result line per shape and row count. `--compare-with TFM_COMPILE` also
times the library another tfm-compile builds (an earlier commit's) as
impl `before`.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

from attention import Runner, add_compare_arguments, modified, parse
from model import FULL
from tfm import compiler, runtime

BENCH = pathlib.Path(__file__).resolve().parent
# max-norm relative error of tfm's outputs against PyTorch's
TOLERANCE = {"f32": 1e-5, "bf16": 1e-2}


def shapes(config):
    """(name, N, K) of each projection of a layer and of the LM head."""
    d, heads, kv_heads = config["d_model"], config["num_heads"], config["num_kv_heads"]
    kv = d // heads * kv_heads
    return [("q,o", d, d), ("k,v", kv, d), ("gate,up", config["d_ff"], d),
            ("down", d, config["d_ff"]), ("lm_head", config["vocab_size"], d)]


def entry(name):
    return name.replace(",", "_")


def source(config, dtype):
    """One entry point per shape: y[1, M, N] = x[1, M, K] · w[N, K]ᵀ."""
    text = ""
    for name, n, k in shapes(config):
        x, w, y = (f"tensor<1x?x{k}x{dtype}>", f"tensor<{n}x{k}x{dtype}>",
                   f"tensor<1x?x{n}x{dtype}>")
        text += (f'func.func @{entry(name)}(%x: {x} {{tfm.name = "x"}}, '
                 f'%w: {w} {{tfm.name = "{weight(name)}"}}) -> {y} {{\n'
                 f"  %y = tfm.linear %x, %w : ({x}, {w}) -> {y}\n"
                 f"  return %y : {y}\n}}\n")
    return text


def weight(name):
    """The weight's input name: one per shape, so that a library compiled
    with --prepack-weights packs each once (its prepare_weights)."""
    return f"w.{entry(name)}"


def packed_weights(library):
    """The packed panels of every shape's weight where `library` reads
    weights packed once (its prepare_weights), made once; else {}."""
    weights = {weight(name): inputs(n, k, 1)[1] for name, n, k in shapes(FULL)}
    return {name: array for name, array in library.prepare(weights).items()
            if name not in weights}


def bound_call(library, packed, name, x, w):
    """`library`'s entry point of shape `name` bound to x and w or, where it
    reads them, w's packed panels (`packed`, packed_weights)."""
    spec = library[entry(name)]
    given = {"x": x, weight(name): w, **packed}
    return spec.bind(**{s["name"]: given[s["name"]] for s in spec.inputs})


def aligned(array, alignment=64):
    """A copy of `array` starting on a cache line, as a model's activations
    lie in tfm's workspace: NumPy aligns small arrays to 16 bytes only, and
    a row read in 64-byte vectors then splits every read over two lines."""
    raw = np.empty(array.nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    copy = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def inputs(n, k, rows):
    """The same x [1, rows, K] and w [N, K] in every worker, both starting
    on a cache line."""
    rng = np.random.default_rng(n * 100003 + k)
    w = rng.standard_normal((n, k), dtype=np.float32) / np.sqrt(k)
    x = rng.standard_normal((1, rows, k), dtype=np.float32)
    return aligned(x), aligned(w)


def worker(impl, directory, dtype, rows_list, reps):
    """Times `impl` on every shape and row count; saves its outputs.
    `before+tfm` times both libraries in one process, a call of one then a
    call of the other, so that both see the same moment of the machine."""
    if "+" in impl:
        return interleaved(impl.split("+"), directory, dtype, rows_list, reps)
    if impl == "torch":
        import ctypes

        import torch
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        core = ctypes.CDLL("libopenblas.so.0").openblas_get_corename
        core.restype = ctypes.c_char_p
        kernels = core().decode() if dtype == "f32" else "oneDNN"
    else:
        library = runtime.Library(directory / f"projections-{impl}-{dtype}.so")
        packed = packed_weights(library)
        kernels = "-"
    for name, n, k in shapes(FULL):
        for rows in rows_list:
            x, w = inputs(n, k, rows)
            if impl == "torch":
                kind = torch.float32 if dtype == "f32" else torch.bfloat16
                tx, tw = torch.from_numpy(x).to(kind), torch.from_numpy(w).to(kind)
                call = lambda: torch.nn.functional.linear(tx, tw)  # noqa: E731
                to_f32 = lambda t: t.float().numpy()  # noqa: E731
            else:
                convert = runtime.to_bf16 if dtype == "bf16" else (lambda a: a)
                call = bound_call(library, packed, name, aligned(convert(x)),
                                  aligned(convert(w)))
                to_f32 = runtime.from_bf16 if dtype == "bf16" else (lambda a: a)
            result = call()  # warm-up
            seconds = []
            deadline = time.perf_counter() + 1.0
            while len(seconds) < reps or time.perf_counter() < deadline:
                start = time.perf_counter()
                call()
                seconds.append(time.perf_counter() - start)
            np.save(directory / f"{impl}-{entry(name)}-{rows}.npy", to_f32(result))
            print(f"projection name={name} rows={rows} seconds={np.median(seconds):.7f} "
                  f"reps={len(seconds)} kernels={kernels}", flush=True)


def interleaved(impls, directory, dtype, rows_list, reps):
    libraries = [runtime.Library(directory / f"projections-{impl}-{dtype}.so")
                 for impl in impls]
    packed = [packed_weights(library) for library in libraries]
    convert = runtime.to_bf16 if dtype == "bf16" else (lambda a: a)
    to_f32 = runtime.from_bf16 if dtype == "bf16" else (lambda a: a)
    for name, n, k in shapes(FULL):
        for rows in rows_list:
            x, w = (aligned(convert(a)) for a in inputs(n, k, rows))
            calls = [bound_call(library, made, name, x, w)
                     for library, made in zip(libraries, packed)]
            results = [call() for call in calls]  # warm-up
            seconds = [[] for _ in calls]
            deadline = time.perf_counter() + 2.0
            while len(seconds[0]) < reps or time.perf_counter() < deadline:
                for call, times in zip(calls, seconds):
                    start = time.perf_counter()
                    call()
                    times.append(time.perf_counter() - start)
            for impl, result, times in zip(impls, results, seconds):
                np.save(directory / f"{impl}-{entry(name)}-{rows}.npy", to_f32(result))
                print(f"projection impl={impl} name={name} rows={rows} "
                      f"seconds={np.median(times):.7f} reps={len(times)} kernels=-",
                      flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="1,16,128,512",
                        help="rows M = B·S, comma-separated")
    parser.add_argument("--dtype", default="f32", choices=["f32", "bf16"],
                        help="weights and activations of both implementations")
    parser.add_argument("--reps", type=int, default=5,
                        help="timed calls at least (and at least 1 s of them)")
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("BENCH_THREADS", os.cpu_count())),
                        help="threads (default $BENCH_THREADS, else the cpus)")
    parser.add_argument("--timeout", type=int, default=1800,
                        help="seconds per implementation before it is skipped")
    parser.add_argument("--quick", action="store_true", help="fewer baseline repeats")
    add_compare_arguments(parser, "the projections")
    args = parser.parse_args()
    if args.interleave and not args.compare_with:
        parser.error("--interleave needs --compare-with")
    rows_list = [int(r) for r in args.rows.split(",")]
    runner = Runner(args)
    directory = BENCH / ".build" / "projections"
    directory.mkdir(parents=True, exist_ok=True)

    tool, built = runner.header()
    impls = ["torch", "tfm"]
    compiler.compile_mlir(source(FULL, args.dtype),
                          directory / f"projections-tfm-{args.dtype}.so")
    if args.compare_with:
        print(f"before: {args.compare_with} (built "
              f"{modified(pathlib.Path(args.compare_with))})")
        os.environ["TFM_COMPILE"] = args.compare_with
        compiler.compile_mlir(source(FULL, args.dtype),
                              directory / f"projections-before-{args.dtype}.so")
        del os.environ["TFM_COMPILE"]
        impls.insert(1, "before")
    sgemm_rate, peak, triad = runner.rates("call")

    results = {}
    runs = ["torch", "before+tfm"] if args.interleave else impls
    for impl in runs:
        try:
            done = subprocess.run(
                [sys.executable, str(BENCH / "projections.py"), "worker", impl,
                 str(directory), args.dtype, args.rows, str(args.reps)],
                env=runner.env, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"{impl}: skipped: over the {args.timeout} s timeout")
            continue
        if done.returncode != 0:
            print(f"{impl}: failed: " + (done.stderr.strip().splitlines() or ["?"])[-1])
            continue
        for line in done.stdout.splitlines():
            if line.startswith("projection "):
                fields = parse(line)
                results[fields.get("impl", impl), fields["name"],
                        int(fields["rows"])] = fields

    width = 4 if args.dtype == "f32" else 2
    print(f"{'shape':<8} {'N':>6} {'K':>5} {'M':>5} {'impl':<6} {'ms':>9} {'GFLOP/s':>8} "
          f"{'%sgemm':>7} {'%peak':>6} {'wGB/s':>6} {'%triad':>6} {'torch/x':>8} "
          f"{'error':>9}  kernels")
    for name, n, k in shapes(FULL):
        for rows in rows_list:
            torch_seconds = None
            for impl in impls:
                head = f"{name:<8} {n:>6} {k:>5} {rows:>5} {impl:<6}"
                fields = results.get((impl, name, rows))
                if not fields:
                    print(f"{head} (no result)")
                    continue
                seconds = float(fields["seconds"])
                error = "-"
                if impl == "torch":
                    torch_seconds = seconds
                else:
                    mine = np.load(directory / f"{impl}-{entry(name)}-{rows}.npy")
                    theirs = np.load(directory / f"torch-{entry(name)}-{rows}.npy")
                    relative = np.abs(mine - theirs).max() / np.abs(theirs).max()
                    error = f"{relative:.2e}" + (
                        "" if relative <= TOLERANCE[args.dtype] else " WRONG")
                rate = 2 * rows * n * k / seconds / 1e9
                wrate = width * n * k / seconds / 1e9
                ratio = torch_seconds / seconds if torch_seconds else float("nan")
                print(f"{head} {seconds * 1e3:>9.3f} {rate:>8.1f} "
                      f"{100 * rate / sgemm_rate:>6.1f}% {100 * rate / peak:>5.1f}% "
                      f"{wrate:>6.1f} {100 * wrate / triad:>5.1f}% {ratio:>8.3f} "
                      f"{error:>9}  {fields['kernels']}")
    runner.closing(sgemm_rate, tool, built)


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker(sys.argv[2], pathlib.Path(sys.argv[3]), sys.argv[4],
               [int(r) for r in sys.argv[5].split(",")], int(sys.argv[6]))
    else:
        main()
