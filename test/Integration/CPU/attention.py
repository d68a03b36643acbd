# RUN: %python %s %t/tiled
# RUN: %python %s %t/small-tiles --tile-size-q=4 --tile-size-kv=3
# RUN: %python %s %t/reference --reference-attention
# RUN: %python %s %t/vector-tiles --tile-size-q=5 --tile-size-kv=16
# RUN: %python %s %t/avx2 --mcpu=x86-64-v3
# RUN: %python %s %t/split-keys --kv-splits=3 --tile-size-kv=3
# RUN: %python %s %t/split-vector-tiles --kv-splits=5 --tile-size-kv=16
#
# tfm.attention against the float64 oracle, through the tiled path (default
# tiles; 4x3 tiles that divide no size here, so every case crosses many
# tiles, skips fully masked ones and masks boundary ones; 5x16 tiles, which
# the CPU kernels vectorize (5 rows per head, one 16-lane vector of keys)
# with partial tiles everywhere; AVX2 code; every static query up to 64 rows
# split along the keys into 3 or 5 runs merged by log-sum-exp, including
# empty runs) and through the reference lowering:
# every mask kind, MHA / GQA (4:1) / MQA, Sq != Skv, odd sizes, fully masked
# rows, |scores| near 1e4, bias, softcap, dynamic shapes at two sizes, and
# f16/bf16 inputs.

import sys

import numpy as np

from attention_cases import add_attention as add_case
from harness import Suite

rng = np.random.default_rng(20261122)
suite = Suite(sys.argv[1])


def add_attention(name, *args, **kwargs):
    add_case(suite, rng, name, *args, **kwargs)


# Every mask kind with MHA, GQA 4:1 and MQA.
for heads, kv_heads, tag in [(4, 4, "mha"), (8, 2, "gqa_4_to_1"), (4, 1, "mqa")]:
    for mask, mask_tag in [(None, "none"), ("causal", "causal"),
                           (("sliding_window", 3), "window_3"),
                           (("band", 2, 1), "band_2_1")]:
        add_attention(f"{tag}_{mask_tag}", 2, heads, kv_heads, 7, 7, 16, mask=mask)

# Sq != Skv: bottom-right alignment (a KV cache), and decode (Sq = 1).
add_attention("causal_prefix_5_of_9", 1, 4, 2, 5, 9, 16, mask="causal")
add_attention("window_4_decode", 2, 8, 2, 1, 33, 16, mask=("sliding_window", 4))
add_attention("band_sq_gt_skv", 1, 2, 2, 9, 5, 8, mask=("band", 1, 1))

# Decode over long caches, where the default splits the keys (flash-decoding):
# MQA (16 splits), GQA with one empty cache and a window, a short prompt.
add_attention("mqa_decode_1000", 1, 8, 1, 1, 1000, 64, mask="causal")
add_attention("gqa_decode_kv_lengths", 3, 8, 2, 1, 300, 32, mask="causal",
              kv_lengths=[300, 0, 77])
add_attention("gqa_decode_window_70", 1, 4, 1, 1, 500, 16,
              mask=("sliding_window", 70))
add_attention("short_prompt_band", 1, 4, 1, 3, 260, 16, mask=("band", 40, 0))
# D = 128: P·V blocks of 2 query rows cover whole V rows (4 blocks for MQA).
add_attention("gqa_decode_d128", 2, 8, 2, 1, 333, 128, mask="causal")
add_attention("mqa_decode_d128_window", 1, 8, 1, 1, 257, 128,
              mask=("sliding_window", 100))

# Odd sizes: S = 1, 7, 100; D = 80; Dv != D.
add_attention("single_query_single_key", 1, 2, 1, 1, 1, 16)
add_attention("seq_100_d_80_causal", 1, 2, 1, 100, 100, 80, mask="causal")
add_attention("value_dim_24", 1, 4, 2, 7, 11, 16, value_dim=24, mask="causal")

# Fully masked rows: kv length 0 for one batch, and dense masks with empty rows.
add_attention("kv_lengths_with_empty_batch", 3, 4, 2, 7, 7, 16, mask="causal",
              kv_lengths=[7, 0, 3])
# A cache's rows past a batch's length never written: NaN keys, infinite
# and NaN values there change nothing (a prompt's chunk, and decode).
cache_k = rng.standard_normal((3, 2, 40, 16))
cache_v = rng.standard_normal((3, 2, 40, 16))
for batch, length in enumerate([40, 0, 13]):
    cache_k[batch, :, length:] = np.nan
    cache_v[batch, :, length:] = -np.inf
    cache_v[batch, :, length:length + 1] = np.nan
for queries in (9, 1):
    add_attention(f"unwritten_cache_{queries}", 3, 4, 2, queries, 40, 16,
                  mask="causal" if queries > 1 else None,
                  kv_lengths=[40, 0, 13], key=cache_k, value=cache_v)
dense = rng.random((2, 1, 7, 9)) < 0.6
dense[0, 0, 2, :] = False
dense[1, 0, 6, :] = False
add_attention("dense_mask_with_empty_rows", 2, 4, 2, 7, 9, 16, dense_mask=dense)
add_attention("window_without_visible_keys", 1, 2, 2, 4, 4, 8,
              mask=("sliding_window", 2), kv_lengths=[1])

# Large scores (|s| near 1e4). Inputs are small integers so every f32 product
# and sum is exact: the test isolates the max-subtracted softmax from f32
# rounding of the logits, which no implementation could avoid.
q_int = rng.integers(-8, 9, (1, 2, 7, 64)).astype(np.float64)
k_int = 64.0 * q_int + rng.integers(-8, 9, (1, 2, 7, 64))
scores = np.abs((q_int @ k_int.transpose(0, 1, 3, 2)) / 8.0).max()
assert scores > 5e3, scores
add_attention("large_scores_near_1e4", 1, 2, 2, 7, 7, 64, mask="causal",
              query=q_int, key=k_int)

# Bias (ALiBi-style per-head slopes broadcast over batch), scale, softcap.
slopes = 2.0 ** -np.arange(1, 5)
distance = np.arange(9)[None, :] - np.arange(9)[:, None]
alibi = (slopes[:, None, None] * np.minimum(distance, 0))  # [Hq, Sq, Skv]
add_attention("alibi_bias_causal", 2, 4, 2, 9, 9, 16, mask="causal", bias=alibi)
add_attention("explicit_scale", 1, 2, 1, 5, 6, 16, scale=0.3)
add_attention("softcap_2", 1, 4, 2, 7, 7, 16, mask="causal", softcap=2.0, scale=1.5)

# Dynamic batch and sequence lengths: one function, two sizes.
add_attention("dynamic_gqa_causal_small", 1, 8, 2, 5, 5, 16, mask="causal",
              dynamic=True, entry="dynamic_gqa_causal")
add_attention("dynamic_gqa_causal_large", 3, 8, 2, 19, 23, 16, mask="causal",
              dynamic=True, entry="dynamic_gqa_causal", define=False)

# f16 and bf16 inputs accumulate in f32.
add_attention("f16_gqa_causal", 2, 8, 2, 13, 13, 32, element="f16", mask="causal")
add_attention("bf16_mqa_window", 1, 4, 1, 17, 17, 32, element="bf16",
              mask=("sliding_window", 5))
# Decode steps read f16/bf16 key rows in place (lane-wise dot products); a
# head dim that is no multiple of 16 lanes packs Kᵀ instead.
add_attention("f16_gqa_decode_200", 2, 8, 2, 1, 200, 32, element="f16",
              mask="causal")
add_attention("bf16_mqa_decode_130", 1, 4, 1, 1, 130, 48, element="bf16",
              mask=("sliding_window", 100))
add_attention("decode_head_dim_24", 1, 4, 2, 1, 90, 24, mask="causal")

suite.run()
