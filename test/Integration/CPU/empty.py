# RUN: %python %s %t/tiled
# RUN: %python %s %t/reference --reference-attention
# RUN: %python %s %t/split-keys --kv-splits=3
#
# Zero-size dimensions are legal (empty tensors are, and a zero-length batch
# is a real case): every op family with an empty static dim compiles and
# computes what the float64 reference does (nothing, a bias, or zeros for
# attention rows that see no key), and a whole model runs on a batch of zero
# rows and on zero-length sequences.

import sys

import numpy as np

from harness import Suite, tensor
from tfm import compiler, reference, runtime

rng = np.random.default_rng(1123)
suite = Suite(sys.argv[1])


def normal(*shape):
    return rng.standard_normal(shape)


def attention(name, batch, q_len, kv_len, mask=None):
    q, k, v = normal(batch, 4, q_len, 16), normal(batch, 2, kv_len, 16), normal(batch, 2, kv_len, 16)
    types = [tensor(a.shape, "f32") for a in (q, k, v)]
    result = tensor(q.shape, "f32")
    attrs = f" {{mask = #tfm.mask<{mask}>}}" if mask else ""
    function = f"""
func.func @{name}(%q: {types[0]}, %k: {types[1]}, %v: {types[2]}) -> {result} {{
  %o = tfm.attention %q, %k, %v{attrs} : ({', '.join(types)}) -> {result}
  return %o : {result}
}}"""
    suite.add(name, function, [(q, "f32"), (k, "f32"), (v, "f32")],
              reference.attention(q, k, v, mask=mask), "f32")


attention("attention_no_queries", 1, 0, 5, "causal")
attention("attention_no_keys", 1, 3, 0)  # every row sees no key: zeros
attention("attention_decode_no_keys", 2, 1, 0)
attention("attention_empty_batch", 0, 3, 5, "causal")

x, w = normal(0, 3, 100), normal(100)
suite.add_op("rms_norm_no_rows", "tfm.rms_norm %a0, %a1 eps(1.0e-05)",
             [(x, "f32"), (w, "f32")], x.shape, "f32", reference.rms_norm(x, w, 1e-5))

# Projections with an empty M, N or K (K = 0: the bias alone).
for tag, (m, n, k) in {"no_rows": (0, 5, 7), "no_outputs": (3, 0, 7),
                       "no_inputs": (3, 5, 0)}.items():
    x, w, b = normal(2, m, k), normal(n, k), normal(n)
    suite.add_op(f"linear_{tag}", "tfm.linear %a0, %a1, %a2",
                 [(x, "f32"), (w, "f32"), (b, "f32")], (2, m, n), "f32",
                 reference.linear(x, w, b))

# FFNs with no hidden units: zeros, or the down bias.
x = normal(2, 3, 8)
gate, up, down = normal(0, 8), normal(0, 8), normal(8, 0)
suite.add_op("ffn_swiglu_no_hidden", "tfm.ffn swiglu %a0 gate(%a1) up(%a2) down(%a3)",
             [(x, "f32"), (gate, "f32"), (up, "f32"), (down, "f32")], x.shape, "f32",
             reference.ffn("swiglu", x, up, down, gate=gate))
up_bias, down_bias = normal(0), normal(8)
suite.add_op("ffn_gelu_no_hidden_biases", "tfm.ffn gelu %a0 up(%a1, %a2) down(%a3, %a4)",
             [(x, "f32"), (up, "f32"), (up_bias, "f32"), (down, "f32"), (down_bias, "f32")],
             x.shape, "f32",
             reference.ffn("gelu", x, up, down, up_bias=up_bias, down_bias=down_bias))

x, positions = normal(2, 3, 0, 16), np.zeros(0)
suite.add_op("rope_no_positions", "tfm.rope half %a0, %a1 theta(1.0e+04)",
             [(x, "f32"), (positions, "i32")], x.shape, "f32",
             reference.rope(x, positions, 1e4, "half"))
ids, table = np.zeros((2, 0), np.int32), normal(50, 24)
suite.add_op("embedding_no_tokens", "tfm.embedding %a0, %a1", [(ids, "i32"), (table, "f32")],
             (2, 0, 24), "f32", reference.embedding(ids, table))
x = normal(2, 0, 48)
suite.add_op("split_heads_no_tokens", "tfm.split_heads %a0", [(x, "f32")], (2, 4, 0, 12),
             "f32", reference.split_heads(x, 4), functional=False)

# Plain linalg with an empty parallel dim goes through the same CPU passes.
a, b, c = normal(8, 16), normal(16, 0), np.zeros((8, 0))
suite.add("matmul_no_columns", """
func.func @matmul_no_columns(%a: tensor<8x16xf32>, %b: tensor<16x0xf32>) -> tensor<8x0xf32> {
  %init = tensor.empty() : tensor<8x0xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x0xf32>)
      outs(%init : tensor<8x0xf32>) -> tensor<8x0xf32>
  return %r : tensor<8x0xf32>
}""", [(a, "f32"), (b, "f32")], c, "f32")

# A whole model on an empty batch and on empty sequences (dynamic dims of 0).
config = {"vocab_size": 40, "d_model": 32, "num_layers": 1, "num_heads": 4,
          "num_kv_heads": 2, "d_ff": 48}
library = runtime.Library(compiler.compile_model(
    config, suite.workdir / "model.so", flags=suite.flags))
params = library.prepare({s["name"]: (normal(*s["shape"]) * 0.2).astype(np.float32)
                          for s in library.given_inputs("forward")[2:]})
for shape in [(0, 5), (2, 0), (0, 0)]:
    ids = np.zeros(shape, np.int32)
    logits = library["forward"](input_ids=ids, position_ids=ids, **params)
    assert logits.shape == shape + (40,), logits.shape
    print(f"PASS model on input_ids of shape {shape}: logits {logits.shape}")

suite.run()
