# The tensor-core attention kernel (tfm-gpu-flash-attention) against the
# float64 oracle: bf16 and f16, head dims 64 and 128, every mask kind with
# MHA / GQA (3:1) / MQA, lengths that divide no 64-row or 64-key tile,
# Sq != Skv (a KV cache's bottom-right alignment, decode, decode split
# into key ranges under split-kv), kv_lengths with
# an empty and a partial batch and NaN past the lengths, rows that see no key, |scores| in the
# thousands, scale and softcap, dynamic shapes at two sizes.
# Run by test/Integration/GPU/ops.test (and scripts/gpu-tests.sh) with
# --target=cuda.

import sys

import numpy as np

from attention_cases import add_attention as add_case
from harness import Suite

rng = np.random.default_rng(20261126)
suite = Suite(sys.argv[1])


def add_attention(name, *args, **kwargs):
    add_case(suite, rng, name, *args, **kwargs)


for element in ("bf16", "f16"):
    for dim in (64, 128):
        tag = f"{element}_d{dim}"
        for heads, kv_heads, group in [(2, 2, "mha"), (6, 2, "gqa"), (3, 1, "mqa")]:
            for mask, mask_tag in [(None, "none"), ("causal", "causal"),
                                   (("sliding_window", 70), "window_70"),
                                   (("band", 40, 17), "band_40_17")]:
                add_attention(f"{tag}_{group}_{mask_tag}", 1, heads, kv_heads,
                              100, 100, dim, element=element, mask=mask)
        # Sq != Skv: a prompt's chunk after a cache, decode, Sq > Skv.
        add_attention(f"{tag}_causal_37_of_200", 1, 8, 2, 37, 200, dim,
                      element=element, mask="causal")
        add_attention(f"{tag}_decode_1000", 1, 8, 1, 1, 1000, dim,
                      element=element, mask="causal")
        # Decode shapes that split-kv packs (a KV head's queries in at most
        # 16 rows) and splits into several key ranges: lengths with an
        # empty batch, a window that leaves most ranges without keys, 2
        # queries of 8 heads (16 rows), a group of 16 at 4100 keys.
        add_attention(f"{tag}_decode_gqa_kv_lengths", 3, 8, 2, 1, 700, dim,
                      element=element, mask="causal",
                      kv_lengths=[700, 0, 333])
        add_attention(f"{tag}_decode_window_300", 1, 4, 1, 1, 1500, dim,
                      element=element, mask=("sliding_window", 300))
        add_attention(f"{tag}_decode_two_queries", 2, 16, 2, 2, 517, dim,
                      element=element, mask="causal")
        add_attention(f"{tag}_decode_group_16_softcap", 1, 16, 1, 1, 4100,
                      dim, element=element, mask="causal", softcap=20.0)
        add_attention(f"{tag}_band_sq_gt_skv", 1, 4, 2, 100, 65, dim,
                      element=element, mask=("band", 3, 2))
        # Padding: one empty batch (its rows see nothing), one partial.
        add_attention(f"{tag}_kv_lengths", 3, 2, 1, 70, 200, dim,
                      element=element, mask="causal", kv_lengths=[200, 0, 77])
        # A cache's rows past a batch's length never written: NaN keys,
        # infinite and NaN values there change nothing (a prompt's chunk,
        # and decode, which split-kv packs).
        cache_k = rng.standard_normal((3, 2, 200, dim))
        cache_v = rng.standard_normal((3, 2, 200, dim))
        for batch, length in enumerate([200, 0, 77]):
            cache_k[batch, :, length:] = np.nan
            cache_v[batch, :, length:] = -np.inf
            cache_v[batch, :, length:length + 1] = np.nan
        for queries in (70, 1):
            add_attention(f"{tag}_unwritten_cache_{queries}", 3, 4, 2,
                          queries, 200, dim, element=element,
                          mask="causal" if queries > 1 else None,
                          kv_lengths=[200, 0, 77], key=cache_k,
                          value=cache_v)
        add_attention(f"{tag}_window_without_keys", 1, 4, 4, 90, 90, dim,
                      element=element, mask=("sliding_window", 2),
                      kv_lengths=[30])
        add_attention(f"{tag}_scale_softcap", 1, 4, 2, 66, 66, dim,
                      element=element, mask="causal", scale=0.3, softcap=5.0)
        add_attention(f"{tag}_one_query_one_key", 1, 2, 1, 1, 1, dim,
                      element=element)

# Large scores: small integers, exact in bf16 and in f32 products and sums,
# so the check isolates the softmax's max subtraction.
q_int = rng.integers(-8, 9, (1, 4, 150, 64)).astype(np.float64)
k_int = 8.0 * q_int + rng.integers(-8, 9, (1, 4, 150, 64))
scores = np.abs((q_int @ k_int.transpose(0, 1, 3, 2)) / 8.0).max()
assert scores > 1e3, scores
add_attention("bf16_large_scores", 1, 4, 4, 150, 150, 64, element="bf16",
              mask="causal", query=q_int, key=k_int)

# Dynamic batch and lengths: one function, two sizes.
add_attention("bf16_dynamic_small", 1, 8, 2, 5, 5, 128, element="bf16",
              mask="causal", dynamic=True, entry="bf16_dynamic")
add_attention("bf16_dynamic_large", 2, 8, 2, 150, 190, 128, element="bf16",
              mask="causal", dynamic=True, entry="bf16_dynamic", define=False)

suite.run()
