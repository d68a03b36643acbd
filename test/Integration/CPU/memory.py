# RUN: env OMP_NUM_THREADS=2 %python %s %t
# UNSUPPORTED: asan
#
# Issue 14's memory bound on the hot path: during a forward, the process's
# peak RSS beyond its weights, inputs and outputs stays within one layer's
# activations (the f32 tensors a layer computes, unfused) + 64 MiB. A
# 3-layer model at S = 2048, whose layer activations (59 MiB) are large
# against the 64 MiB: keeping every layer's (177 MiB) would exceed the
# bound. The first call (the workspace allocated and faulted in) and a
# second (the runtime's buffer cache hands it back) are both measured, and
# the logits checked against the float64 reference. (ASan's shadow memory
# would count: unsupported there.)

import pathlib
import sys

import numpy as np

from tfm import compiler, reference, runtime

workdir = pathlib.Path(sys.argv[1])
workdir.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(1414)

CONFIG = {
    "vocab_size": 512, "d_model": 512, "num_layers": 3, "num_heads": 8,
    "num_kv_heads": 2, "d_ff": 1408, "norm": "rms_norm", "ffn": "swiglu",
    "positions": {"kind": "rope", "theta": 10000.0, "style": "half"}}
BATCH, LENGTH = 1, 2048


def layer_activation_bytes(config, batch, length):
    """Norm output, q, k, v, attention output, o_proj output, residual, norm
    output, gate, up, hidden and down output of one layer, in f32 (the
    same count as bench/model.py's bound column)."""
    d = config["d_model"]
    kv = config["num_kv_heads"] * d // config["num_heads"]
    return 4 * batch * length * (6 * d + 2 * kv + 3 * config["d_ff"])


def status_kib(field):
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


library = runtime.Library(compiler.compile_model(CONFIG, workdir / "model.so"))
params = {}
for spec in library.given_inputs("forward")[2:]:
    value = rng.standard_normal(spec["shape"]) / np.sqrt(spec["shape"][-1])
    if spec["name"].endswith("norm.weight"):
        value = 1.0 + 0.1 * rng.standard_normal(spec["shape"])
    params[spec["name"]] = value.astype(np.float32)
ids = rng.integers(0, CONFIG["vocab_size"], (BATCH, LENGTH)).astype(np.int32)
positions = np.tile(np.arange(LENGTH, dtype=np.int32), (BATCH, 1))
logits = np.empty((BATCH, LENGTH, CONFIG["vocab_size"]), np.float32)
logits.fill(0.0)  # its pages resident before the measurement, as the inputs'
# The weights packed once (prepare_weights) are weights: bound before the
# measurement.
call = library["forward"].bind(input_ids=ids, position_ids=positions,
                               **library.prepare(params), out=[logits])

bound_mib = (layer_activation_bytes(CONFIG, BATCH, LENGTH) + (64 << 20)) / 2**20
failures = 0
for which in ("first call", "second call"):
    base = status_kib("VmRSS")
    pathlib.Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    call()
    extra_mib = (status_kib("VmHWM") - base) / 1024
    ok = extra_mib <= bound_mib
    failures += not ok
    print(f"{'PASS' if ok else 'FAIL'} {which}: peak RSS +{extra_mib:.1f} MiB "
          f"(bound {bound_mib:.1f} MiB: one layer's activations + 64 MiB)")

expected = reference.language_model(CONFIG, params, ids, positions)
error = np.abs(logits - expected).max() / np.abs(expected).max()
ok = error <= 1e-5
failures += not ok
print(f"{'PASS' if ok else 'FAIL'} logits: error {error:.2e} (tolerance 1e-05)")
sys.exit(1 if failures else 0)
