"""Runs a model library compiled for --target=cuda on the inputs that
test/Tools/Inputs/make-run-inputs.py wrote into DIR (params.safetensors,
ids.npy, pos.npy) and compares its logits with reference.npy (float64
reference, f32 tolerance): once on host arrays (copied to the GPU and back
around the call), once with the parameters uploaded once as device arrays
and the logits left on the device; prints the median time of a call each
way. Then greedy generation (tfm.generation, weights and KV caches on the
GPU): each step's logits against the forward pass over the whole sequence
so far. Needs only NumPy and libtfm_runtime.so: it runs on a GPU machine
without a compiler (scripts/gpu-tests.sh check)."""

import pathlib
import sys
import time

import numpy as np

from tfm import generation, runtime, safetensors

directory = pathlib.Path(sys.argv[1])
library = runtime.Library(directory / "model.so")
forward = library["forward"]
params = safetensors.load(directory / "params.safetensors")
ids = np.load(directory / "ids.npy")
positions = np.load(directory / "pos.npy")
expected = np.load(directory / "reference.npy").astype(np.float64)


def check(what, logits):
    error = np.abs(logits - expected).max() / np.abs(expected).max()
    ok = np.isfinite(logits).all() and error <= 1e-5
    print(f"{'PASS' if ok else 'FAIL'} model logits ({what}): error {error:.2e} "
          f"(tolerance 1e-05)")
    return ok


def median_ms(call, reps=20):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1e3 * sorted(times)[reps // 2]


ok = check("host arrays", forward(input_ids=ids, position_ids=positions, **params))
weights = {name: runtime.DeviceArray.from_numpy(array) for name, array in params.items()}
logits = forward(input_ids=ids, position_ids=positions, **weights)
assert isinstance(logits, runtime.DeviceArray), logits
ok &= check("device weights", logits.numpy())
host_ms = median_ms(forward.bind(input_ids=ids, position_ids=positions, **params))
device_ms = median_ms(forward.bind(input_ids=runtime.DeviceArray.from_numpy(ids),
                                   position_ids=runtime.DeviceArray.from_numpy(positions),
                                   **weights))
print(f"a call: {host_ms:.3f} ms on host arrays, {device_ms:.3f} ms on device arrays")

prompt = [int(token) for token in ids[0]]
steps_logits = []
tokens = [int(step[0]) for step in
          generation.Model(library, params).generate([prompt], 6, logits=steps_logits)]
worst = 0.0
for step, logits in enumerate(steps_logits):
    sequence = (prompt + tokens)[:len(prompt) + step]
    full = forward(input_ids=np.array([sequence], np.int32),
                   position_ids=np.arange(len(sequence), dtype=np.int32)[None],
                   **params)[0, -1].astype(np.float64)
    worst = max(worst, np.abs(logits[0] - full).max() / np.abs(full).max())
generated = np.isfinite(worst) and worst <= 1e-5
print(f"{'PASS' if generated else 'FAIL'} generation: {len(tokens)} tokens {tokens}, "
      f"decode logits within {worst:.2e} of the forward pass (tolerance 1e-05)")
ok &= generated
sys.exit(0 if ok else 1)
