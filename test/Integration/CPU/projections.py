# RUN: %python %s %t/default
# RUN: %python %s %t/avx2 --mcpu=x86-64-v3
#
# Projections through the CPU's blocked form (tfm-cpu-tile-projections)
# against the float64 oracle: run-time row counts M of 1, 7, 8, 129 and 200
# (none, some and many 8-row blocks, with remainders), K that takes one or
# several packed panels (80, 256, 384), N of one block or several (96, 320,
# 512), N that whole register blocks do not cover (101, 1000, 29: a
# narrower last block; 8: only that), K that no vector divides (37: the
# plain contraction), f32 and bf16 weights and inputs, with and without
# bias; for AVX-512 and for AVX2 (8-lane vectors).

import sys

import numpy as np

from harness import Suite, rounded, tensor
from tfm import reference

rng = np.random.default_rng(11)
suite = Suite(sys.argv[1])

shapes = [(80, 96), (256, 320), (384, 512), (64, 688), (37, 101), (64, 101),
          (64, 1000), (64, 8), (128, 29)]
for k, n in shapes:
    w, b = rng.standard_normal((n, k)) / np.sqrt(k), rng.standard_normal(n)
    name = f"linear_{k}_to_{n}"
    types = [tensor((None, None, k), "f32"), tensor((n, k), "f32"), tensor((n,), "f32")]
    function = (f"func.func @{name}(%x: {types[0]}, %w: {types[1]}, %b: {types[2]})"
                f" -> {tensor((None, None, n), 'f32')} {{\n"
                f"  %r = tfm.linear %x, %w, %b : ({', '.join(types)}) -> "
                f"{tensor((None, None, n), 'f32')}\n"
                f"  return %r : {tensor((None, None, n), 'f32')}\n}}")
    for i, (batch, rows) in enumerate([(1, 1), (1, 7), (2, 4), (3, 43), (2, 100)]):
        x = rng.standard_normal((batch, rows, k)) * 3.0
        suite.add(f"{name}_m{batch * rows}", function if i == 0 else None,
                  [(x, "f32"), (w, "f32"), (b, "f32")],
                  reference.linear(x, w, b), "f32", entry=name)

# bf16 inputs and weights, widened as they are packed and read.
k, n = 256, 320
x, w = rng.standard_normal((2, 65, k)), rng.standard_normal((n, k)) / np.sqrt(k)
suite.add_op("linear_bf16_m130", "tfm.linear %a0, %a1",
             [(x, "bf16"), (w, "bf16")], (None, None, n), "bf16",
             reference.linear(rounded(x, "bf16"), rounded(w, "bf16")),
             types=[tensor((None, None, k), "bf16"), tensor((n, k), "bf16")])
# Large magnitudes: the blocked sums keep f32 accuracy.
x = rng.standard_normal((129, k)) * 1e3
suite.add_op("linear_large_values_m129", "tfm.linear %a0, %a1",
             [(x, "f32"), (w, "f32")], (None, n), "f32", reference.linear(x, w),
             types=[tensor((None, k), "f32"), tensor((n, k), "f32")])

suite.run()
