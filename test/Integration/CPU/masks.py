# RUN: %python %s %t/tiled
# RUN: %python %s %t/small-tiles --tile-size-q=3 --tile-size-kv=5
#
# The mask ops materialized as i1 tensors, and masks-as-data feeding
# tfm.attention (folded into structure by the pipeline's canonicalization)
# against the float64 oracle.

import sys

import numpy as np

from harness import Suite
from tfm import reference

rng = np.random.default_rng(11)
suite = Suite(sys.argv[1])

for q_len, kv_len in [(6, 6), (3, 8), (8, 3)]:
    suite.add_op(f"causal_mask_{q_len}x{kv_len}", "tfm.causal_mask", [],
                 (q_len, kv_len), "i1", reference.causal_mask(q_len, kv_len),
                 functional=False)
    suite.add_op(f"sliding_window_mask_3_{q_len}x{kv_len}",
                 "tfm.sliding_window_mask window(3)", [], (q_len, kv_len), "i1",
                 reference.sliding_window_mask(3, q_len, kv_len), functional=False)
lengths = np.array([0, 4, 9])
suite.add(
    "padding_mask",
    """func.func @padding_mask(%lengths: tensor<3xi32>) -> tensor<3x1x1x9xi1> {
  %m = tfm.padding_mask %lengths : tensor<3xi32> -> tensor<3x1x1x9xi1>
  return %m : tensor<3x1x1x9xi1>
}""", [(lengths, "i32")], reference.padding_mask(lengths, 9), "i1")

# Masks built as data by a frontend: causal and padding masks folded into the
# attention's structure, combined with a structured sliding window.
q, k, v = (rng.standard_normal((3, 4, 7, 16)) for _ in range(3))
k, v = k[:, :2], v[:, :2]
lengths = np.array([7, 2, 0])
suite.add(
    "attention_with_mask_ops",
    """func.func @attention_with_mask_ops(%q: tensor<3x4x7x16xf32>,
    %k: tensor<3x2x7x16xf32>, %v: tensor<3x2x7x16xf32>, %lengths: tensor<3xi32>)
    -> tensor<3x4x7x16xf32> {
  %causal = tfm.causal_mask : tensor<7x7xi1>
  %a = tfm.attention %q, %k, %v dense_mask(%causal) {mask = #tfm.mask<sliding_window<3>>}
      : (tensor<3x4x7x16xf32>, tensor<3x2x7x16xf32>, tensor<3x2x7x16xf32>, tensor<7x7xi1>)
      -> tensor<3x4x7x16xf32>
  %padding = tfm.padding_mask %lengths : tensor<3xi32> -> tensor<3x1x1x7xi1>
  %b = tfm.attention %q, %k, %v dense_mask(%padding)
      : (tensor<3x4x7x16xf32>, tensor<3x2x7x16xf32>, tensor<3x2x7x16xf32>, tensor<3x1x1x7xi1>)
      -> tensor<3x4x7x16xf32>
  %sum = arith.addf %a, %b : tensor<3x4x7x16xf32>
  return %sum : tensor<3x4x7x16xf32>
}""",
    [(q, "f32"), (k, "f32"), (v, "f32"), (lengths, "i32")],
    reference.attention(q, k, v, mask=("sliding_window", 3))
    + reference.attention(q, k, v, kv_lengths=lengths), "f32")

suite.run()
