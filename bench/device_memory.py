"""The most device memory one call of a --target=cuda model holds at once,
and the kernels it launches, without a GPU: the call runs on the fake
driver of the runtime tests (test/Runtime/Inputs/fake-cuda-driver.c,
whose device memory is host memory and whose kernels do nothing), which
counts what is allocated and launched.

    PYTHONPATH=python:bench python3 bench/device_memory.py [--tfm-compile PATH]
        [--length S] [--model full|quick] [--entry forward|decode]
        [-- TFM_COMPILE_FLAGS...]

compiles bench/model.py's FULL (or QUICK) description in bf16 for
--target=cuda (sm_90a unless the flags say otherwise) and calls `forward`
on S tokens (default 2048), or `decode` on one token with caches of S
positions, batch 1, twice, with every parameter, input and output in
device arrays allocated before the calls. It prints the call's own peak
(what it allocated beyond those arrays) and the kernels the second call
launched (a projection's kernel with an empty grid, which the runtime
skips, is not one).
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FAKE_DRIVER = [ROOT / "test/Runtime/Inputs/fake-cuda-driver.c",
               ROOT / "test/Runtime/Inputs/fake-cuda-kernels.c"]


def measure(library, length, entry):
    """In a process that finds the fake driver as libcuda.so.1: two calls."""
    from tfm import runtime
    forward = runtime.Library(library)[entry]

    def concrete(shape):
        """[B, S, ...] dynamic: batch 1, S = length (decode: the caches'
        positions)."""
        sizes = iter((1, length))
        return [next(sizes) if d < 0 else d for d in shape]

    arrays = {spec["name"]: runtime.DeviceArray(concrete(spec["shape"]), spec["dtype"])
              for spec in forward.inputs}
    out = [runtime.DeviceArray(concrete(spec["shape"]), spec["dtype"])
           for spec in forward.outputs]
    held = sum(a.nbytes for a in arrays.values()) + sum(a.nbytes for a in out)
    call = forward.bind(**arrays, out=out)
    for number in (1, 2):
        print(f"call {number}", file=sys.stderr, flush=True)
        call()
    print(json.dumps({"held": held}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tfm-compile", default=str(ROOT / "build/bin/tfm-compile"))
    parser.add_argument("--length", type=int, default=2048)
    parser.add_argument("--model", choices=("full", "quick"), default="full")
    parser.add_argument("--entry", choices=("forward", "decode"), default="forward")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("flags", nargs="*")
    args = parser.parse_args()
    if args.measure:
        return measure(args.measure, args.length, args.entry)

    from model import FULL, QUICK
    config = dict(FULL if args.model == "full" else QUICK, dtype="bf16")
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        subprocess.run(["clang", "-std=c11", "-shared", "-fPIC", *map(str, FAKE_DRIVER),
                        "-o", str(work / "libcuda.so.1")], check=True)
        (work / "model.json").write_text(json.dumps(config))
        flags = args.flags or ["--gpu-arch=sm_90a"]
        subprocess.run([args.tfm_compile, str(work / "model.json"), "--target=cuda",
                        *flags, "-o", str(work / "model.so")], check=True)
        env = dict(os.environ, LD_LIBRARY_PATH=str(work), FAKE_CUDA_PRINT_MEMORY="1",
                   FAKE_CUDA_PRINT_LAUNCHES="1", FAKE_CUDA_ALLOC_FILL="1")
        run = subprocess.run([sys.executable, __file__, "--measure", str(work / "model.so"),
                              "--length", str(args.length), "--entry", args.entry],
                             env=env, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(run.stdout + run.stderr)
        held = json.loads(run.stdout.splitlines()[-1])["held"]
        peak = int(run.stderr.split("at most ")[1].split()[0])
        launches = run.stderr.split("call 2")[1].count("cuLaunchKernel")
        print(f"{args.model} bf16 {args.entry}, S = {args.length}, {' '.join(flags)}: "
              f"arrays {held / 2**20:.1f} MiB, the call's own peak "
              f"{(peak - held) / 2**20:.1f} MiB, {launches} kernel launches")


if __name__ == "__main__":
    main()
