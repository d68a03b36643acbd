# RUN: %python %s %t
#
# Norms, projections, every FFN kind, RoPE, heads and embedding through the
# reference lowering against the float64 oracle, with odd sizes (d_model 100,
# 37 -> 53 projections), f16/bf16 inputs and dynamic shapes.

import sys

import numpy as np

from harness import Suite, rounded, tensor
from tfm import reference

rng = np.random.default_rng(7)
suite = Suite(sys.argv[1])


def normal(*shape):
    return rng.standard_normal(shape)


def weight(out_features, in_features):
    return rng.standard_normal((out_features, in_features)) / np.sqrt(in_features)


# Norms.
for element in ["f32", "f16", "bf16"]:
    x, w, b = 3.0 * normal(3, 5, 100) + 1.0, normal(100), normal(100)
    r = [rounded(a, element) for a in (x, w, b)]
    suite.add_op(f"rms_norm_{element}", "tfm.rms_norm %a0, %a1 eps(1.0e-05)",
                 [(x, element), (w, element)], x.shape, element,
                 reference.rms_norm(r[0], r[1], 1e-5))
    suite.add_op(f"layer_norm_bias_{element}",
                 "tfm.layer_norm %a0, %a1, %a2 eps(1.0e-05)",
                 [(x, element), (w, element), (b, element)], x.shape, element,
                 reference.layer_norm(r[0], r[1], r[2], 1e-5))
x, w = normal(4, 33) * 10.0 + 5.0, normal(33)
suite.add_op("layer_norm_no_bias_offset_mean", "tfm.layer_norm %a0, %a1 eps(1.0e-06)",
             [(x, "f32"), (w, "f32")], x.shape, "f32",
             reference.layer_norm(x, w, None, 1e-6))
for rows in (2, 9):
    x = normal(rows, 3, 100)
    suite.add_op(f"rms_norm_dynamic_{rows}_rows", "tfm.rms_norm %a0, %a1 eps(1.0e-06)",
                 [(x, "f32"), (w := normal(100), "f32")], (None, None, 100), "f32",
                 reference.rms_norm(x, w, 1e-6),
                 types=[tensor((None, None, 100), "f32"), tensor((100,), "f32")])

# Projections.
x, w, b = normal(2, 7, 37), weight(53, 37), normal(53)
suite.add_op("linear_bias_rank3", "tfm.linear %a0, %a1, %a2",
             [(x, "f32"), (w, "f32"), (b, "f32")], (2, 7, 53), "f32",
             reference.linear(x, w, b))
suite.add_op("linear_no_bias_rank2", "tfm.linear %a0, %a1",
             [(x[0], "f32"), (w, "f32")], (7, 53), "f32", reference.linear(x[0], w))
suite.add_op("linear_bf16", "tfm.linear %a0, %a1, %a2",
             [(x, "bf16"), (w, "bf16"), (b, "bf16")], (2, 7, 53), "bf16",
             reference.linear(rounded(x, "bf16"), rounded(w, "bf16"), rounded(b, "bf16")))

# Every FFN kind.
d_model, d_ff = 40, 72
x = normal(2, 5, d_model)
gate, up, down = weight(d_ff, d_model), weight(d_ff, d_model), weight(d_model, d_ff)
up_bias, down_bias = normal(d_ff), normal(d_model)
for kind in ["swiglu", "geglu"]:
    suite.add_op(f"ffn_{kind}", f"tfm.ffn {kind} %a0 gate(%a1) up(%a2) down(%a3)",
                 [(x, "f32"), (gate, "f32"), (up, "f32"), (down, "f32")], x.shape, "f32",
                 reference.ffn(kind, x, up, down, gate=gate))
for kind in ["gelu", "gelu_tanh", "relu", "silu"]:
    suite.add_op(f"ffn_{kind}_biases", f"tfm.ffn {kind} %a0 up(%a1, %a2) down(%a3, %a4)",
                 [(x, "f32"), (up, "f32"), (up_bias, "f32"), (down, "f32"),
                  (down_bias, "f32")], x.shape, "f32",
                 reference.ffn(kind, x, up, down, up_bias=up_bias, down_bias=down_bias))
suite.add_op("ffn_gelu_no_biases", "tfm.ffn gelu %a0 up(%a1) down(%a2)",
             [(x, "f32"), (up, "f32"), (down, "f32")], x.shape, "f32",
             reference.ffn("gelu", x, up, down))
r = [rounded(a, "f16") for a in (x, gate, up, down)]
suite.add_op("ffn_swiglu_f16", "tfm.ffn swiglu %a0 gate(%a1) up(%a2) down(%a3)",
             [(x, "f16"), (gate, "f16"), (up, "f16"), (down, "f16")], x.shape, "f16",
             reference.ffn("swiglu", r[0], r[2], r[3], gate=r[1]))

# RoPE: both styles, shared and per-batch positions, large positions.
x = normal(2, 3, 7, 16)
shared = np.arange(7) + 1000
per_batch = np.stack([np.arange(7), np.arange(7) + 40000])
for style in ["half", "interleaved"]:
    suite.add_op(f"rope_{style}_shared_positions",
                 f"tfm.rope {style} %a0, %a1 theta(1.0e+04)",
                 [(x, "f32"), (shared, "i32")], x.shape, "f32",
                 reference.rope(x, shared, 1e4, style))
    suite.add_op(f"rope_{style}_batch_positions_theta_5e5",
                 f"tfm.rope {style} %a0, %a1 theta(5.0e+05)",
                 [(x, "f32"), (per_batch, "i64")], x.shape, "f32",
                 reference.rope(x, per_batch, 5e5, style))

# Llama 3's frequency scaling: short wavelengths kept, long ones divided by
# the factor, a blend between (original_max_positions small enough that
# head dim 16 has pairs of all three kinds).
scaling = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_positions": 64}
suite.add_op("rope_half_llama3_scaling",
             "tfm.rope half %a0, %a1 theta(5.0e+05) scaling(#tfm.rope_scaling<llama3, "
             "factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, "
             "original_max_positions = 64>)",
             [(x, "f32"), (per_batch, "i64")], x.shape, "f32",
             reference.rope(x, per_batch, 5e5, "half", scaling))

# Heads and embedding.
x = normal(2, 7, 48)
suite.add_op("split_heads", "tfm.split_heads %a0", [(x, "f32")], (2, 4, 7, 12), "f32",
             reference.split_heads(x, 4), functional=False)
h = normal(2, 4, 7, 12)
suite.add_op("merge_heads", "tfm.merge_heads %a0", [(h, "f32")], (2, 7, 48), "f32",
             reference.merge_heads(h), functional=False)
ids, table = rng.integers(0, 50, (3, 5)), normal(50, 24)
suite.add_op("embedding", "tfm.embedding %a0, %a1", [(ids, "i32"), (table, "f32")],
             (3, 5, 24), "f32", reference.embedding(ids, table))

suite.run()
