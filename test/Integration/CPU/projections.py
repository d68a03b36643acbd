# RUN: %python %s %t/default
# RUN: %python %s %t/avx2 --mcpu=x86-64-v3
# RUN: %python %s %t/unfused --no-fuse=all
#
# Projections through the CPU's blocked form (tfm-cpu-tile-projections)
# against the float64 oracle: run-time row counts M of 1, 3, 5, 7, 8, 10,
# 13, 23 and 39 (weights streamed: up to 10 blocks of 4 rows, the last one
# partial), 129, 200 and 301
# (none, some and many 8-row blocks, with remainders; one, two and three
# chunks of up to 128 rows, the last one partial), K that takes one or
# several packed panels (80, 256, 384; 256 and 512 in four parts of 64
# steps each, the next panel's prefetches between them), N of one block or
# several (96, 160, 320, 512), N that whole register blocks do not cover (101, 1000, 29: a
# narrower last block; 8: only that), K that no vector divides (37: the
# plain contraction), f32, bf16 and f16 weights and inputs, with and without
# bias; bf16 decode rows through AVX-512 BF16 dot products; FFNs and residuals whose epilogues run on the column blocks; q, k and v in one loop;
# q and k rotated (RoPE) on their column blocks; LayerNorm'd rows normalized
# as the projections read them; for AVX-512 and for AVX2 (8-lane vectors),
# and with the fusion passes off (--no-fuse=all: each projection
# computed alone, its epilogue, RoPE and norm apart).

import sys

import numpy as np

from harness import Suite, rounded, tensor
from tfm import reference

rng = np.random.default_rng(11)
suite = Suite(sys.argv[1])


def normalized(rows, element):
    """A norm's result as the projections read it: folded into them, as it
    is (more accurate); with the fusion passes off (--no-fuse=all) and on
    the CUDA target (which has none), rounded to its 16-bit element type
    first, as the op's type says."""
    unfused = "--no-fuse=all" in suite.flags or "--target=cuda" in suite.flags
    if element == "f32" or not unfused:
        return rows
    return rounded(rows, element)


shapes = [(80, 96), (256, 320), (384, 512), (512, 160), (64, 688), (37, 101), (64, 101),
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
    for i, (batch, rows) in enumerate([(1, 1), (1, 3), (1, 5), (1, 7), (2, 4), (2, 5), (1, 13), (1, 23),
                                       (1, 39), (3, 43), (2, 100),
                                       (1, 301)]):
        x = rng.standard_normal((batch, rows, k)) * 3.0
        suite.add(f"{name}_m{batch * rows}", function if i == 0 else None,
                  [(x, "f32"), (w, "f32"), (b, "f32")],
                  reference.linear(x, w, b), "f32", entry=name)

# bf16 inputs and weights: packed as pairs for AVX-512 BF16 dot products
# where the CPU has them, else widened as they are packed and read.
k, n = 256, 320
x, w = rng.standard_normal((2, 65, k)), rng.standard_normal((n, k)) / np.sqrt(k)
suite.add_op("linear_bf16_m130", "tfm.linear %a0, %a1",
             [(x, "bf16"), (w, "bf16")], (None, None, n), "bf16",
             reference.linear(rounded(x, "bf16"), rounded(w, "bf16")),
             types=[tensor((None, None, k), "bf16"), tensor((n, k), "bf16")])
# bf16 rows of a decode step (M = 1 and 7) stream the weights: through
# AVX-512 BF16 dot products where the CPU has them (32 weights a step; 4
# rows against 4 weight rows, the rows left against 8), else widened to
# f32. With the dot products, a short prompt (M = 43: 10 blocks of 4 rows
# and 3 rows) streams them too; more rows (M = 130) pack them, as pairs for
# the dot products where they apply. Where the CPU also has AMX-BF16, AMX
# tiles take 2 rows and more: up to 64 rows, where whole 32-column blocks
# cover N, reading the weights in place, the rows in blocks of 32, the last
# padded with zero rows (M = 7, 16, 24: one padded block; 32: one block;
# 43, 48, 63: one block and a padded one); else packing them, in blocks of
# 32 rows, the last padded with zero rows (130 and 301: chunks of up to 128
# rows and a padded block of 2 and 13 rows; N = 101, with its column tail,
# from 16 rows on: M = 16 and 24 one padded block, 48 and 63 one block and a
# padded one). K = 256 (whole dot steps; one 256-step panel), K = 80 (not:
# widened), N = 101 (a 5-column tail block: widened), K = 96 (one 96-step
# panel of pairs: three 32-step tile steps).
for k, n in [(256, 320), (80, 96), (256, 101), (96, 160)]:
    w = rng.standard_normal((n, k)) / np.sqrt(k)
    name = f"linear_bf16_{k}_to_{n}"
    types = [tensor((None, None, k), "bf16"), tensor((n, k), "bf16")]
    function = (f"func.func @{name}(%x: {types[0]}, %w: {types[1]}) -> "
                f"{tensor((None, None, n), 'bf16')} {{\n"
                f"  %r = tfm.linear %x, %w : ({', '.join(types)}) -> "
                f"{tensor((None, None, n), 'bf16')}\n"
                f"  return %r : {tensor((None, None, n), 'bf16')}\n}}")
    for i, rows in enumerate([1, 7, 16, 24, 32, 43, 48, 63, 130, 301]):
        x = rng.standard_normal((1, rows, k)) * 3.0
        suite.add(f"{name}_m{rows}", function if i == 0 else None,
                  [(x, "bf16"), (w, "bf16")],
                  reference.linear(rounded(x, "bf16"), rounded(w, "bf16")), "bf16",
                  entry=name)
# f16 inputs and weights: widened to f32 as they are packed (M = 130) or
# streamed (M = 1, 7), on every CPU (docs/DESIGN.md, Numerics decisions).
k, n = 256, 101
w = rng.standard_normal((n, k)) / np.sqrt(k)
for i, rows in enumerate([1, 7, 130]):
    x = rng.standard_normal((1, rows, k)) * 3.0
    suite.add(f"linear_f16_m{rows}", None if i else (
                  f"func.func @linear_f16(%x: {tensor((None, None, k), 'f16')}, "
                  f"%w: {tensor((n, k), 'f16')}) -> {tensor((None, None, n), 'f16')} {{\n"
                  f"  %r = tfm.linear %x, %w : ({tensor((None, None, k), 'f16')}, "
                  f"{tensor((n, k), 'f16')}) -> {tensor((None, None, n), 'f16')}\n"
                  f"  return %r : {tensor((None, None, n), 'f16')}\n}}"),
              [(x, "f16"), (w, "f16")],
              reference.linear(rounded(x, "f16"), rounded(w, "f16")), "f16", entry="linear_f16")
# Large magnitudes: the blocked sums keep f32 accuracy.
x = rng.standard_normal((129, k)) * 1e3
suite.add_op("linear_large_values_m129", "tfm.linear %a0, %a1",
             [(x, "f32"), (w, "f32")], (None, n), "f32", reference.linear(x, w),
             types=[tensor((None, k), "f32"), tensor((n, k), "f32")])

# Epilogues computed on each column block (fuse-epilogues): every FFN kind
# (gate and up together with act(gate)·up; up with its bias and activation;
# down with its bias), a residual added to a projection, and a bf16 FFN,
# whose epilogue also rounds; d_ff = 200 leaves an 8-column last block.
d_model, d_ff = 64, 200
gate, up = (rng.standard_normal((d_ff, d_model)) / np.sqrt(d_model) for _ in range(2))
down = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_ff)
up_bias, down_bias = rng.standard_normal(d_ff), rng.standard_normal(d_model)
x_type, w_types = tensor((None, None, d_model), "f32"), {
    "gate": tensor((d_ff, d_model), "f32"), "down": tensor((d_model, d_ff), "f32"),
    "up_bias": tensor((d_ff,), "f32"), "down_bias": tensor((d_model,), "f32")}
for kind in ("swiglu", "geglu", "gelu", "gelu_tanh", "relu", "silu"):
    gated = kind in ("swiglu", "geglu")
    if gated:
        args = [("gate", gate), ("up", up), ("down", down)]
        op = f"tfm.ffn {kind} %x gate(%gate) up(%up) down(%down)"
        expected = lambda x: reference.ffn(kind, x, up, down, gate=gate)  # noqa: E731
    else:
        args = [("up", up), ("up_bias", up_bias), ("down", down), ("down_bias", down_bias)]
        op = f"tfm.ffn {kind} %x up(%up, %up_bias) down(%down, %down_bias)"
        expected = lambda x: reference.ffn(kind, x, up, down, up_bias=up_bias,  # noqa: E731
                                           down_bias=down_bias)
    types = [w_types.get(name, w_types["gate"]) for name, _ in args]
    signature = ", ".join([f"%x: {x_type}"] + [f"%{n}: {t}" for (n, _), t in zip(args, types)])
    name = f"ffn_{kind}_epilogue"
    function = (f"func.func @{name}({signature}) -> {x_type} {{\n"
                f"  %r = {op} : ({', '.join([x_type] + types)}) -> {x_type}\n"
                f"  %s = arith.addf %x, %r : {x_type}\n"
                f"  return %s : {x_type}\n}}")
    for i, (batch, rows) in enumerate([(1, 1), (1, 7), (1, 10), (1, 13), (1, 37), (3, 43),
                                       (1, 45)]):
        x = rng.standard_normal((batch, rows, d_model))
        suite.add(f"{name}_m{batch * rows}", function if i == 0 else None,
                  [(x, "f32")] + [(a, "f32") for _, a in args], x + expected(x), "f32",
                  entry=name)
x = rng.standard_normal((2, 65, d_model))
r = [rounded(a, "bf16") for a in (x, gate, up, down)]
suite.add_op("ffn_swiglu_bf16_epilogue_m130", "tfm.ffn swiglu %a0 gate(%a1) up(%a2) down(%a3)",
             [(x, "bf16"), (gate, "bf16"), (up, "bf16"), (down, "bf16")],
             (None, None, d_model), "bf16", reference.ffn("swiglu", r[0], r[2], r[3], gate=r[1]),
             types=[tensor((None, None, d_model), "bf16"), tensor((d_ff, d_model), "bf16"),
                    tensor((d_ff, d_model), "bf16"), tensor((d_model, d_ff), "bf16")])
r = [rounded(a, "f16") for a in (x, gate, up, down)]
suite.add_op("ffn_geglu_f16_epilogue_m130", "tfm.ffn geglu %a0 gate(%a1) up(%a2) down(%a3)",
             [(x, "f16"), (gate, "f16"), (up, "f16"), (down, "f16")],
             (None, None, d_model), "f16", reference.ffn("geglu", r[0], r[2], r[3], gate=r[1]),
             types=[tensor((None, None, d_model), "f16"), tensor((d_ff, d_model), "f16"),
                    tensor((d_ff, d_model), "f16"), tensor((d_model, d_ff), "f16")])
# The same with whole 32-column blocks (d_ff = 96) and 45 rows: on AMX, tiles
# that read the weights in place (one 32-row block), then 13 streamed rows.
d_ff = 96
gate, up, down = (rng.standard_normal(shape) / np.sqrt(shape[1])
                  for shape in ((d_ff, d_model), (d_ff, d_model), (d_model, d_ff)))
x = rng.standard_normal((1, 45, d_model))
r = [rounded(a, "bf16") for a in (x, gate, up, down)]
suite.add_op("ffn_swiglu_bf16_epilogue_m45", "tfm.ffn swiglu %a0 gate(%a1) up(%a2) down(%a3)",
             [(x, "bf16"), (gate, "bf16"), (up, "bf16"), (down, "bf16")],
             (None, None, d_model), "bf16", reference.ffn("swiglu", r[0], r[2], r[3], gate=r[1]),
             types=[tensor((None, None, d_model), "bf16"), tensor((d_ff, d_model), "bf16"),
                    tensor((d_ff, d_model), "bf16"), tensor((d_model, d_ff), "bf16")])

# An RMSNorm folded into the projections of its rows
# (tfm-fuse-norm-projection): the norm's weight scales the packed (or
# streamed) weights, its row scale is an epilogue. q- and k-like
# projections of the same rows, N = 200 (an 8-column last block), M = 1, 7,
# 129 and 45 (5 rows after the register blocks: a zero-padded block), f32
# and bf16.
k, n = 64, 200
g = 1.0 + 0.1 * rng.standard_normal(k)
wq, wk = (rng.standard_normal((n, k)) / np.sqrt(k) for _ in range(2))
x_type = tensor((None, None, k), "f32")
types = [x_type, tensor((k,), "f32"), tensor((n, k), "f32"), tensor((n, k), "f32")]
out = tensor((None, None, n), "f32")
function = (f"func.func @rms_norm_projections(%x: {types[0]}, %g: {types[1]}, %wq: {types[2]}, "
            f"%wk: {types[3]}) -> {out} {{\n"
            f"  %n = tfm.rms_norm %x, %g eps(1.0e-05) : ({types[0]}, {types[1]}) -> {types[0]}\n"
            f"  %q = tfm.linear %n, %wq : ({types[0]}, {types[2]}) -> {out}\n"
            f"  %k = tfm.linear %n, %wk : ({types[0]}, {types[3]}) -> {out}\n"
            f"  %s = arith.addf %q, %k : {out}\n"
            f"  return %s : {out}\n}}")
for i, (batch, rows) in enumerate([(1, 1), (1, 7), (1, 10), (1, 13), (1, 37), (3, 43), (1, 45)]):
    x = rng.standard_normal((batch, rows, k)) * 3.0
    normed = reference.rms_norm(x, g, 1e-5)
    suite.add(f"rms_norm_projections_m{batch * rows}", function if i == 0 else None,
              [(x, "f32"), (g, "f32"), (wq, "f32"), (wk, "f32")],
              reference.linear(normed, wq) + reference.linear(normed, wk), "f32",
              entry="rms_norm_projections")
x = rng.standard_normal((2, 65, k))
r = [rounded(a, "bf16") for a in (x, g, wq)]
# The folded form does not round the normalized rows to bf16 (more accurate).
bf16_types = [tensor((None, None, k), "bf16"), tensor((k,), "bf16"), tensor((n, k), "bf16")]
bf16_out = tensor((None, None, n), "bf16")
suite.add("rms_norm_projection_bf16_m130",
          f"func.func @rms_norm_projection_bf16_m130(%x: {bf16_types[0]}, %g: {bf16_types[1]}, "
          f"%w: {bf16_types[2]}) -> {bf16_out} {{\n"
          f"  %n = tfm.rms_norm %x, %g eps(1.0e-05) : ({bf16_types[0]}, {bf16_types[1]}) "
          f"-> {bf16_types[0]}\n"
          f"  %y = tfm.linear %n, %w : ({bf16_types[0]}, {bf16_types[2]}) -> {bf16_out}\n"
          f"  return %y : {bf16_out}\n}}",
          [(x, "bf16"), (g, "bf16"), (wq, "bf16")],
          reference.linear(normalized(reference.rms_norm(r[0], r[1], 1e-5), "bf16"), r[2]),
          "bf16")
# The same with one row, streamed: the scaled row is rounded to bf16 for
# the dot products where the CPU has them.
x = rng.standard_normal((1, 1, k))
r = [rounded(a, "bf16") for a in (x, g, wq)]
suite.add("rms_norm_projection_bf16_m1", None, [(x, "bf16"), (g, "bf16"), (wq, "bf16")],
          reference.linear(normalized(reference.rms_norm(r[0], r[1], 1e-5), "bf16"), r[2]),
          "bf16",
          entry="rms_norm_projection_bf16_m130")

# q, k and v of the same RMSNorm'd rows in one loop over all their column
# blocks (fuse-siblings): N = 96, 32 and 32 share 32-column blocks, side by
# side in one buffer; M = 1 and 7 (streamed), 43 and 130 (packed); f32,
# bf16 and f16.
k = 64
g = 1 + 0.1 * rng.standard_normal(k)
ws = [rng.standard_normal((n, k)) / np.sqrt(k) for n in (96, 32, 32)]
for element in ("f32", "bf16", "f16"):
    name = f"qkv_one_loop_{element}"
    x_type, g_type = tensor((None, None, k), element), tensor((k,), element)
    w_types = [tensor((n, k), element) for n in (96, 32, 32)]
    out = [tensor((None, None, n), element) for n in (96, 32, 32, 160)]
    function = (f"func.func @{name}(%x: {x_type}, %g: {g_type}, %wq: {w_types[0]}, "
                f"%wk: {w_types[1]}, %wv: {w_types[2]}) -> {out[3]} {{\n"
                f"  %n = tfm.rms_norm %x, %g eps(1.0e-05) : ({x_type}, {g_type}) -> {x_type}\n"
                + "".join(f"  %{p} = tfm.linear %n, %w{p} : ({x_type}, {w_types[i]}) -> {out[i]}\n"
                          for i, p in enumerate("qkv"))
                + f"  %c = tensor.concat dim(2) %q, %k, %v : ({out[0]}, {out[1]}, {out[2]}) "
                f"-> {out[3]}\n  return %c : {out[3]}\n}}")
    for i, rows in enumerate([1, 7, 13, 43, 130]):
        x = rng.standard_normal((1, rows, k)) * 3.0
        r = [rounded(a, element) for a in (x, g, *ws)]
        normed = normalized(reference.rms_norm(r[0], r[1], 1e-5), element)
        suite.add(f"{name}_m{rows}", function if i == 0 else None,
                  [(x, element), (g, element)] + [(w, element) for w in ws],
                  np.concatenate([reference.linear(normed, w) for w in r[2:]], -1),
                  element, entry=name)

# q and k of RMSNorm'd rows, each rotated (RoPE, both pairings) as its
# column blocks finish: head dim 64 (two heads per 128-column block), 4
# query and 2 key heads beside v in one loop, positions up to 1e4; head dim
# 48 (96-column blocks); head dim 40, whose 120 columns have a column tail
# (the rotation stays an op of its own).
k = 128
g = 1 + 0.1 * rng.standard_normal(k)
rope_cases = [(64, style, element, [(1, 1), (1, 7), (1, 43), (2, 65)])
              for element in ("f32", "bf16") for style in ("half", "interleaved")]
rope_cases += [(64, "half", "f16", [(1, 1), (1, 7), (2, 65)]),
               (48, "half", "f32", [(1, 1), (3, 43)]),
               (40, "interleaved", "f32", [(1, 1), (3, 43)])]
for head_dim, style, element, sizes in rope_cases:
    widths = (4 * head_dim, 2 * head_dim, 2 * head_dim)
    ws = [rng.standard_normal((n, k)) / np.sqrt(k) for n in widths]
    name = f"rope_qk_d{head_dim}_{style}_{element}"
    x_type, g_type = tensor((None, None, k), element), tensor((k,), element)
    w_types = [tensor((n, k), element) for n in widths]
    rows_types = [tensor((None, None, n), element) for n in widths]
    pos_type = tensor((None, None), "i32")
    out = tensor((None, None, sum(widths)), element)
    body = [f"  %n = tfm.rms_norm %x, %g eps(1.0e-05) : ({x_type}, {g_type}) -> {x_type}"]
    for i, p in enumerate("qkv"):
        body.append(f"  %{p}0 = tfm.linear %n, %w{p} : ({x_type}, {w_types[i]}) -> {rows_types[i]}")
    for i, (p, heads) in enumerate((("q", 4), ("k", 2))):
        heads_type = tensor((None, heads, None, head_dim), element)
        body += [f"  %{p}1 = tfm.split_heads %{p}0 : {rows_types[i]} -> {heads_type}",
                 f"  %{p}2 = tfm.rope {style} %{p}1, %pos theta(1.0e+04) : ({heads_type}, {pos_type}) -> {heads_type}",
                 f"  %{p} = tfm.merge_heads %{p}2 : {heads_type} -> {rows_types[i]}"]
    body.append(f"  %c = tensor.concat dim(2) %q, %k, %v0 : ({', '.join(rows_types)}) -> {out}")
    function = (f"func.func @{name}(%x: {x_type}, %g: {g_type}, %wq: {w_types[0]}, "
                f"%wk: {w_types[1]}, %wv: {w_types[2]}, %pos: {pos_type}) -> {out} {{\n"
                + "\n".join(body) + f"\n  return %c : {out}\n}}")
    for i, (batch, rows) in enumerate(sizes):
        x = rng.standard_normal((batch, rows, k)) * 3.0
        positions = rng.integers(0, 10000, (batch, rows)).astype(np.int32)
        r = [rounded(a, element) for a in (x, g, *ws)]
        normed = normalized(reference.rms_norm(r[0], r[1], 1e-5), element)
        q, kk, v = (reference.linear(normed, w) for w in r[2:])
        rotated = []
        for projected, heads in ((q, 4), (kk, 2)):
            split = projected.reshape(batch, rows, heads, head_dim).transpose(0, 2, 1, 3)
            # The projection's result is rounded before its rotation.
            split = rounded(split, element)
            turned = reference.rope(split, positions, 1e4, style)
            rotated.append(turned.transpose(0, 2, 1, 3).reshape(batch, rows, -1))
        suite.add(f"{name}_m{batch * rows}", function if i == 0 else None,
                  [(x, element), (g, element)] + [(w, element) for w in ws]
                  + [(positions, "i32")],
                  np.concatenate(rotated + [v], -1), element, entry=name)

# Projections of LayerNorm'd rows, the rows normalized as each panel of
# them is read (tfm-fuse-norm-projection's row transform): with and without
# the norm's bias, K of two panels (256), one (96) and one no vector divides
# into panels of (80: widened), N with a column tail (101), rows offset by
# 10 (the mean large against the deviation), f32 and bf16.
for element, k, n, biased in [("f32", 256, 128, True), ("f32", 96, 101, False),
                              ("bf16", 256, 128, True), ("bf16", 80, 64, True),
                              ("f16", 256, 128, True)]:
    name = f"layer_norm_{k}_to_{n}_{element}{'_biased' if biased else ''}"
    g = 1 + 0.1 * rng.standard_normal(k)
    b = 0.1 * rng.standard_normal(k)
    ws = [rng.standard_normal((n, k)) / np.sqrt(k) for _ in range(2)]
    x_type, v_type = tensor((None, None, k), element), tensor((k,), element)
    w_type, y_type = tensor((n, k), element), tensor((None, None, n), element)
    out = tensor((None, None, 2 * n), element)
    norm_args = "%x, %g, %b" if biased else "%x, %g"
    norm_types = f"{x_type}, {v_type}, {v_type}" if biased else f"{x_type}, {v_type}"
    function = (f"func.func @{name}(%x: {x_type}, %g: {v_type}, %b: {v_type}, "
                f"%w0: {w_type}, %w1: {w_type}) -> {out} {{\n"
                f"  %n = tfm.layer_norm {norm_args} eps(1.0e-05) : ({norm_types}) -> {x_type}\n"
                f"  %y0 = tfm.linear %n, %w0 : ({x_type}, {w_type}) -> {y_type}\n"
                f"  %y1 = tfm.linear %n, %w1 : ({x_type}, {w_type}) -> {y_type}\n"
                f"  %c = tensor.concat dim(2) %y0, %y1 : ({y_type}, {y_type}) -> {out}\n"
                f"  return %c : {out}\n}}")
    for i, (batch, rows) in enumerate([(1, 1), (1, 7), (1, 13), (1, 43), (1, 45), (2, 65)]):
        x = 10.0 + rng.standard_normal((batch, rows, k)) * 2.0
        r = [rounded(a, element) for a in (x, g, b, *ws)]
        normed = normalized(
            reference.layer_norm(r[0], r[1], r[2] if biased else None, 1e-5), element)
        suite.add(f"{name}_m{batch * rows}", function if i == 0 else None,
                  [(x, element), (g, element), (b, element)] + [(w, element) for w in ws],
                  np.concatenate([reference.linear(normed, w) for w in r[3:]], -1),
                  element, entry=name)

suite.run()
