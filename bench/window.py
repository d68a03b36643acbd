"""Cache memory of a sliding-window model while it generates: the same
model with a window of W positions and causal, each generating 4·W tokens
with tfm.generation.Model in its own process; the process's RSS after the
prompt and after every W tokens. The window model's caches are rings of W
positions, so its RSS stays flat; the causal model's grow with the text.
Run through `bench/run.sh window` (bench/README.md).
"""

import argparse
import json
import subprocess
import sys
import tempfile

import numpy as np

from attention import machine, status_kib
from tfm import compiler, generation, runtime

# MHA, so that caches are large next to the weights: 8 KiB a position.
MODEL = {"vocab_size": 4000, "d_model": 512, "num_layers": 2, "num_heads": 8,
         "d_ff": 1376}


def worker(library_path, window):
    library = runtime.Library(library_path)
    rng = np.random.default_rng(0)
    params = {}
    for spec in library.given_inputs("forward")[2:]:
        shape = spec["shape"]
        params[spec["name"]] = (rng.standard_normal(shape) / np.sqrt(shape[-1])
                                ).astype(np.float32)
    model = generation.Model(library, params)
    prompt = rng.integers(0, MODEL["vocab_size"], 16).tolist()
    samples = [status_kib("VmRSS")]
    for count, _ in enumerate(model.generate([prompt], 4 * window), start=1):
        if count % window == 0:
            samples.append(status_kib("VmRSS"))
    print(" ".join(str(kib) for kib in samples))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=int, default=1024)
    args = parser.parse_args()
    window = args.window
    print(machine())
    per_position = 2 * MODEL["num_layers"] * MODEL["d_model"] * 4
    print(f"model: {json.dumps(MODEL)}, window W = {window}, f32; K and V take "
          f"{per_position // 1024} KiB a position")
    with tempfile.TemporaryDirectory() as work:
        rows = {}
        for name, mask in (("window", {"sliding_window": window}), ("causal", "causal")):
            path = compiler.compile_model(dict(MODEL, mask=mask), f"{work}/{name}.so")
            out = subprocess.run([sys.executable, __file__, "worker", str(path), str(window)],
                                 capture_output=True, text=True, check=True).stdout
            rows[name] = [int(kib) for kib in out.split()]
    print(f"{'model':<7} {'cache':>10} " + " ".join(f"{f'RSS@{k}W':>9}" for k in range(5))
          + f" {'growth':>9}")
    for name, samples in rows.items():
        positions = window if name == "window" else 16 + 4 * window
        growth = samples[-1] - samples[0]
        print(f"{name:<7} {positions * per_position / 2**20:>7.1f} MiB "
              + " ".join(f"{kib / 1024:>5.1f} MiB" for kib in samples)
              + f" {growth / 1024:>5.1f} MiB")
    print("RSS@kW: after the prompt (k = 0) and after k·W new tokens; growth: "
          "RSS@4W − RSS@0W")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        worker(sys.argv[2], int(sys.argv[3]))
    else:
        main()
