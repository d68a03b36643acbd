# Projections on tensor cores (tfm-gpu-tensor-core-matmul) against the
# float64 oracle: bf16 and f16, with and without bias, token counts 1, 7
# and 8 (the few-rows kernel) and 9, 129 and 300 (tensor-core tiles of 128
# rows: none divides), widths that divide no 128
# column tile, one wider than 1024 (the 128x256 tiles of 8 warps) that
# divides no 256 column tile, K up to 1024 and K = 40 (a last step of 32
# read partly,
# zeros past K), a gated FFN (three projections, f32 hidden rows rounded
# for the down projection), and shapes the kernel does not take (odd N, K
# not a multiple of 8), which keep the generic mapping; the gated FFN
# again with 3 rows (decode: its epilogues in the few-rows kernel). Run by test/Integration/GPU/ops.test (and
# scripts/gpu-tests.sh) with --target=cuda.

import sys

import numpy as np

from harness import Suite, rounded as round_to, tensor
from tfm import reference

rng = np.random.default_rng(16)
suite = Suite(sys.argv[1])

for element in ("bf16", "f16"):
    for k, n, bias in [(64, 100, False), (256, 130, True), (1024, 256, False),
                       (64, 33, True), (40, 64, False), (36, 64, False),
                       (96, 1100, True)]:
        name = f"{element}_linear_{k}_to_{n}{'_bias' if bias else ''}"
        x_type = tensor((None, None, k), element)
        types = [x_type, tensor((n, k), element)] + ([tensor((n,), element)] if bias else [])
        result = tensor((None, None, n), element)
        args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
        operands = ", ".join(f"%a{i}" for i in range(len(types)))
        function = (f"func.func @{name}({args}) -> {result} {{\n"
                    f"  %r = tfm.linear {operands} : ({', '.join(types)}) -> {result}\n"
                    f"  return %r : {result}\n}}")
        w = rng.standard_normal((n, k)) / np.sqrt(k)
        b = rng.standard_normal(n)
        for i, (batch, rows) in enumerate([(1, 1), (1, 7), (2, 4), (1, 9), (3, 43),
                                           (2, 150)]):
            x = rng.standard_normal((batch, rows, k))
            inputs = [(x, element), (w, element)] + ([(b, element)] if bias else [])
            expected = reference.linear(round_to(x, element), round_to(w, element),
                                        round_to(b, element) if bias else None)
            suite.add(f"{name}_m{batch * rows}", function if i == 0 else None,
                      inputs, expected, element, entry=name)

# A gated FFN: gate and up from the same rows, then down; 130 rows, and 3.
d, hidden = 128, 352
gate, up = (rng.standard_normal((hidden, d)) / np.sqrt(d) for _ in range(2))
down = rng.standard_normal((d, hidden)) / np.sqrt(hidden)
for name, shape in [("bf16_swiglu", (2, 65, d)), ("bf16_swiglu_few_rows", (3, 1, d))]:
    x = rng.standard_normal(shape)
    suite.add_op(name, "tfm.ffn swiglu %a0 gate(%a1) up(%a2) down(%a3)",
                 [(x, "bf16"), (gate, "bf16"), (up, "bf16"), (down, "bf16")],
                 x.shape, "bf16",
                 reference.ffn("swiglu", round_to(x, "bf16"), round_to(up, "bf16"),
                               round_to(down, "bf16"), gate=round_to(gate, "bf16")))

suite.run()
