"""Attention cases for the harness: `add_attention(suite, rng, name, ...)`
adds one tfm.attention entry point and its float64 reference (shared by the
CPU suite test/Integration/CPU/attention.py and the GPU kernel's suite
test/Integration/GPU/flash_attention.py)."""

import numpy as np

from harness import rounded, tensor
from tfm import reference


def mask_attr(mask):
    if mask is None:
        return None
    if mask == "causal":
        return "#tfm.mask<causal>"
    if mask[0] == "sliding_window":
        return f"#tfm.mask<sliding_window<{mask[1]}>>"
    return f"#tfm.mask<band<{mask[1]}, {mask[2]}>>"


def add_attention(suite, rng, name, batch, q_heads, kv_heads, q_len, kv_len, head_dim,
                  value_dim=None, element="f32", mask=None, kv_lengths=None,
                  dense_mask=None, bias=None, scale=None, softcap=None,
                  dynamic=False, query=None, key=None, value=None, entry=None,
                  define=True):
    value_dim = value_dim or head_dim
    query = rng.standard_normal((batch, q_heads, q_len, head_dim)) if query is None else query
    key = rng.standard_normal((batch, kv_heads, kv_len, head_dim)) if key is None else key
    value = rng.standard_normal((batch, kv_heads, kv_len, value_dim)) if value is None else value
    inputs = [(query, element), (key, element), (value, element)]
    b, sq, skv = (None, None, None) if dynamic else (batch, q_len, kv_len)
    types = [tensor((b, q_heads, sq, head_dim), element),
             tensor((b, kv_heads, skv, head_dim), element),
             tensor((b, kv_heads, skv, value_dim), element)]
    clauses = []
    if kv_lengths is not None:
        inputs.append((np.asarray(kv_lengths), "i32"))
        types.append(tensor((b,), "i32"))
        clauses.append("kv_lengths(%a3)")
    if dense_mask is not None:
        inputs.append((dense_mask, "i1"))
        types.append(tensor(dense_mask.shape, "i1"))
        clauses.append(f"dense_mask(%a{len(types) - 1})")
    if bias is not None:
        inputs.append((bias, element))
        types.append(tensor(bias.shape, element))
        clauses.append(f"bias(%a{len(types) - 1})")
    attrs = []
    if mask_attr(mask):
        attrs.append(f"mask = {mask_attr(mask)}")
    if scale is not None:
        attrs.append(f"scale = {scale!r} : f32")
    if softcap is not None:
        attrs.append(f"softcap = {softcap!r} : f32")
    result = tensor((b, q_heads, sq, value_dim), element)
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(3))
    attr_dict = " {" + ", ".join(attrs) + "}" if attrs else ""
    function = f"""
func.func @{entry or name}({args}) -> {result} {{
  %o = tfm.attention {operands} {' '.join(clauses)}{attr_dict}
      : ({', '.join(types)}) -> {result}
  return %o : {result}
}}""" if define else None
    expected = reference.attention(
        rounded(query, element), rounded(key, element), rounded(value, element),
        mask=mask, kv_lengths=kv_lengths, dense_mask=dense_mask,
        bias=None if bias is None else rounded(bias, element), scale=scale,
        softcap=softcap)
    suite.add(name, function, inputs, expected, element, entry=entry)
