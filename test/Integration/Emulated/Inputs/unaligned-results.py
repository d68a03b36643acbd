"""A projection whose epilogue adds a residual (y = x + a·Wᵀ, bf16), and
attention (bf16, head dim 64, causal), called with device arrays 2 bytes
past a 16-byte boundary (argv[1]: a work directory; argv[2:]:
tfm-compile's flags; attention's inputs stay aligned): the kernels'
staged stores fall back from 16-byte accesses to element ones, and the
results equal those of aligned arrays and match the float64 reference.
Projection rows: 300 (tiles, none whole) and 5 (the few-rows kernel);
N = 256, a multiple of 8 (staged). Attention: 200 queries (a last tile
of 72 rows)."""

import os
import subprocess
import sys

import numpy as np

from tfm import reference, runtime

work, flags = sys.argv[1], sys.argv[2:]
k, n = 96, 256
source = os.path.join(work, "residual.mlir")
x_type, a_type, w_type = (f"tensor<1x?x{n}xbf16>", f"tensor<1x?x{k}xbf16>",
                          f"tensor<{n}x{k}xbf16>")
heads, seq, dim = 2, 200, 64
qkv_type = f"tensor<1x{heads}x{seq}x{dim}xbf16>"
with open(source, "w") as f:
    f.write(f"""
func.func @residual(%x: {x_type}, %a: {a_type}, %w: {w_type}) -> {x_type} {{
  %y = tfm.linear %a, %w : ({a_type}, {w_type}) -> {x_type}
  %s = arith.addf %x, %y : {x_type}
  return %s : {x_type}
}}
func.func @attention(%q: {qkv_type}, %k: {qkv_type}, %v: {qkv_type}) -> {qkv_type} {{
  %o = tfm.attention %q, %k, %v {{mask = #tfm.mask<causal>}}
      : ({qkv_type}, {qkv_type}, {qkv_type}) -> {qkv_type}
  return %o : {qkv_type}
}}
""")
library = os.path.join(work, "residual.so")
kernels = os.path.join(work, "residual.kernels.so")
for output, emit in [(library, []), (kernels, ["--emit=emulated-kernels"])]:
    subprocess.run(["tfm-compile", source, "--target=cuda", *flags, *emit,
                    "-o", output], check=True)
os.environ["FAKE_CUDA_KERNELS"] = kernels
entries = runtime.Library(library)


def placed(host, shift):
    """A device array of `host`'s bf16 values `shift` bytes past the start
    of an allocation (which is 16-byte aligned)."""
    bits = runtime.to_bf16(host)
    raw = runtime.DeviceArray((bits.size + 8,), "bf16")
    padded = np.zeros(bits.size + 8, np.uint16)
    padded[shift // 2:shift // 2 + bits.size] = bits.ravel()
    raw.upload(padded)
    return runtime.DeviceArray.wrap(raw.pointer + shift, bits.shape, "bf16", raw)


def rounded(value):
    return runtime.from_bf16(runtime.to_bf16(value)).astype(np.float64)


def check(name, entry, inputs, shifted, expected):
    """Calls `entry` on `inputs` with the output and the inputs at indices
    `shifted` placed 0 and then 2 bytes past 16-byte boundaries."""
    results = {}
    for shift in (0, 2):
        out = placed(np.zeros(expected.shape), shift)
        entry(*(placed(v, shift if i in shifted else 0)
                for i, v in enumerate(inputs)), out=[out])
        results[shift] = runtime.from_bf16(out.numpy()).astype(np.float64)
    error = np.abs(results[2] - expected).max() / np.abs(expected).max()
    same = np.array_equal(results[0], results[2])
    ok = same and error <= 1e-2
    print(f"{'PASS' if ok else 'FAIL'} {name}, shifted 2 bytes: error "
          f"{error:.2e} (tolerance 1e-02), {'equal' if same else 'not equal'}"
          f" to the aligned call's")
    return ok


rng = np.random.default_rng(7)
w = rng.standard_normal((n, k)) / np.sqrt(k)
failures = 0
for rows in (300, 5):
    x = rng.standard_normal((1, rows, n))
    a = rng.standard_normal((1, rows, k))
    expected = rounded(x) + reference.linear(rounded(a), rounded(w))
    failures += not check(f"{rows} rows", entries["residual"], [x, a, w], {0},
                          expected)
q, key, v = (rng.standard_normal((1, heads, seq, dim)) for _ in range(3))
expected = reference.attention(rounded(q), rounded(key), rounded(v),
                               mask="causal")
# Only the output: sm_90a's TMA loads need 16-byte aligned K and V (a real
# driver refuses their tensor maps, which the runtime reports).
failures += not check("attention", entries["attention"], [q, key, v], set(),
                      expected)
sys.exit(1 if failures else 0)
