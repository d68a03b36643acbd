# RUN: env OMP_NUM_THREADS=1 %python %s %t/1
# RUN: env OMP_NUM_THREADS=3 %python %s %t/3
#
# One workspace per call (tfm-cpu-plan-workspace): a forward's activations
# and every thread's scratch are views of one allocation sized by the call's
# token count and thread count. One library is called at token counts that
# grow and shrink from call to call (the buffer cache hands back the last
# call's block, larger or smaller than this one needs), under 1 thread and
# under 3 (more threads than this machine may have cores: 3 slots of
# scratch), against the float64 reference every time. The dims make every
# projection form run: decode-sized rows (streamed), packed register blocks
# with row and column tails (d_ff 200: an 8-column last block, a vocabulary
# of 301), f32 and bf16.

import pathlib
import sys

import numpy as np

from tfm import compiler, reference, runtime

workdir = pathlib.Path(sys.argv[1])
workdir.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(4242)

CONFIG = {
    "vocab_size": 301, "d_model": 128, "num_layers": 2, "num_heads": 4,
    "num_kv_heads": 2, "d_ff": 200, "norm": "rms_norm", "ffn": "swiglu",
    "positions": {"kind": "rope", "theta": 10000.0, "style": "half"}}
SIZES = [(2, 40), (1, 1), (1, 130), (3, 7), (1, 3), (2, 70)]
# bf16 rounds every op's output, so its error grows with the layers and the
# sequence: one layer, and S up to 70 (140 rows: the packed form), keep it
# within 1e-2 (S = 130 measured 1.04e-2).
BF16_SIZES = [size for size in SIZES if size[1] <= 70]

failures = 0
for dtype, tolerance, sizes in [("f32", 1e-5, SIZES), ("bf16", 1e-2, BF16_SIZES)]:
    config = dict(CONFIG, dtype=dtype, num_layers=2 if dtype == "f32" else 1)
    library = runtime.Library(compiler.compile_model(
        config, workdir / f"model-{dtype}.so"))
    params, arguments = {}, {}
    for spec in library.given_inputs("forward")[2:]:
        value = rng.standard_normal(spec["shape"]) / np.sqrt(spec["shape"][-1])
        if spec["name"].endswith("norm.weight"):
            value = 1.0 + 0.1 * rng.standard_normal(spec["shape"])
        name = spec["name"]
        if dtype == "bf16":
            arguments[name] = runtime.to_bf16(value)
            params[name] = runtime.from_bf16(arguments[name]).astype(np.float64)
        else:
            arguments[name] = value.astype(np.float32)
            params[name] = arguments[name].astype(np.float64)
    arguments = library.prepare(arguments)
    for batch, length in sizes:
        ids = rng.integers(0, config["vocab_size"], (batch, length)).astype(np.int32)
        positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
        logits = library["forward"](input_ids=ids, position_ids=positions, **arguments)
        if dtype == "bf16":
            logits = runtime.from_bf16(logits)
        expected = reference.language_model(config, params, ids, positions)
        error = np.abs(logits.astype(np.float64) - expected).max() / np.abs(expected).max()
        ok = logits.shape == expected.shape and error <= tolerance
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {dtype} B={batch} S={length}: "
              f"error {error:.2e} (tolerance {tolerance:.0e})")

sys.exit(1 if failures else 0)
