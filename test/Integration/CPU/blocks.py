# RUN: %python %s %t/tiled
# RUN: %python %s %t/small-tiles --tile-size-q=3 --tile-size-kv=5
#
# tfm.self_attention and tfm.decoder_block (decomposed, then lowered) against
# the float64 oracle: MHA/GQA/MQA, RoPE styles, biases, pre- and post-norm
# with each norm and FFN kind, padding, and dynamic batch/sequence sizes.

import sys

import numpy as np

from harness import Suite, tensor
from tfm import reference

rng = np.random.default_rng(99)
suite = Suite(sys.argv[1])


def weight(out_features, in_features):
    return rng.standard_normal((out_features, in_features)) / np.sqrt(in_features)


def mask_attr(mask):
    if mask == "causal":
        return "#tfm.mask<causal>"
    return f"#tfm.mask<sliding_window<{mask[1]}>>"


def block_case(name, *, batch, length, d_model, heads, kv_heads, d_ff, placement,
               norm, ffn, mask="causal", rope=None, biases=False, lengths=None,
               dynamic=False, entry=None, define=True, params=None):
    """One decoder block; `rope` is (theta, style) or None."""
    head_dim = d_model // heads
    kv_rows = kv_heads * head_dim
    gated = ffn in ("swiglu", "geglu")
    layer_norm = norm == "layer_norm"
    if params is None:
        params = {"attn_norm_weight": 1 + 0.1 * rng.standard_normal(d_model),
                  "q_weight": weight(d_model, d_model), "k_weight": weight(kv_rows, d_model),
                  "v_weight": weight(kv_rows, d_model), "o_weight": weight(d_model, d_model),
                  "ffn_norm_weight": 1 + 0.1 * rng.standard_normal(d_model),
                  "up_weight": weight(d_ff, d_model), "down_weight": weight(d_model, d_ff)}
        if layer_norm:
            params["attn_norm_bias"] = 0.1 * rng.standard_normal(d_model)
            params["ffn_norm_bias"] = 0.1 * rng.standard_normal(d_model)
        if biases:
            for name_, size in [("q_bias", d_model), ("k_bias", kv_rows),
                                ("v_bias", kv_rows), ("o_bias", d_model)]:
                params[name_] = 0.1 * rng.standard_normal(size)
            if not gated:
                params["up_bias"] = 0.1 * rng.standard_normal(d_ff)
                params["down_bias"] = 0.1 * rng.standard_normal(d_model)
        if gated:
            params["gate_weight"] = weight(d_ff, d_model)
    x = rng.standard_normal((batch, length, d_model))
    positions = np.arange(length) + 3

    b, s = (None, None) if dynamic else (batch, length)
    operands = [("x", x, tensor((b, s, d_model), "f32"))]

    def operand(key):
        if key in params:
            operands.append((key, params[key], tensor(params[key].shape, "f32")))
            return f"%{key}"
        return None

    def clause(keyword, *keys):
        names = [n for n in (operand(k) for k in keys) if n]
        return f"{keyword}({', '.join(names)})"

    text = [f"{placement} {norm} %x heads({heads}, {kv_heads}) eps(1.0e-05)",
            clause("attn_norm", "attn_norm_weight", "attn_norm_bias"),
            clause("q", "q_weight", "q_bias"), clause("k", "k_weight", "k_bias"),
            clause("v", "v_weight", "v_bias"), clause("o", "o_weight", "o_bias"),
            clause("ffn_norm", "ffn_norm_weight", "ffn_norm_bias"), ffn]
    if gated:
        text.append(clause("gate", "gate_weight"))
    text += [clause("up", "up_weight", "up_bias"), clause("down", "down_weight", "down_bias")]
    attrs = [f"mask = {mask_attr(mask)}"]
    if rope:
        operands.append(("positions", positions, tensor((s,), "i32")))
        text.append("positions(%positions)")
        attrs.append(f"rope = #tfm.rope<theta = {rope[0]!r}, style = {rope[1]}>")
    if lengths is not None:
        operands.append(("lengths", np.asarray(lengths), tensor((b,), "i32")))
        text.append("kv_lengths(%lengths)")
    result = tensor((b, s, d_model), "f32")
    args = ", ".join(f"%{n}: {t}" for n, _, t in operands)
    function = f"""func.func @{entry or name}({args}) -> {result} {{
  %y = tfm.decoder_block {' '.join(text)} {{{', '.join(attrs)}}}
      : ({', '.join(t for _, _, t in operands)}) -> {result}
  return %y : {result}
}}""" if define else None
    expected = reference.decoder_block(
        x, params, placement=placement, norm=norm, eps=1e-5, heads=heads,
        kv_heads=kv_heads, ffn_kind=ffn, positions=positions if rope else None,
        rope_config=rope, mask=mask, kv_lengths=lengths)
    inputs = [(a, "i32" if n in ("positions", "lengths") else "f32") for n, a, _ in operands]
    suite.add(name, function, inputs, expected, "f32", entry=entry)
    return params


# LLaMA/Mistral style: pre-norm RMSNorm, GQA 4:1, RoPE, SwiGLU.
block_case("llama_pre_rms_swiglu_gqa", batch=2, length=7, d_model=64, heads=8,
           kv_heads=2, d_ff=96, placement="pre", norm="rms_norm", ffn="swiglu",
           rope=(10000.0, "half"))
block_case("mistral_window_mqa_interleaved", batch=1, length=9, d_model=48, heads=4,
           kv_heads=1, d_ff=80, placement="pre", norm="rms_norm", ffn="swiglu",
           mask=("sliding_window", 4), rope=(500000.0, "interleaved"))
# GPT-2 style: pre-norm LayerNorm with biases everywhere, gelu_tanh, MHA.
block_case("gpt2_pre_layer_norm_gelu_tanh", batch=2, length=5, d_model=36, heads=3,
           kv_heads=3, d_ff=72, placement="pre", norm="layer_norm", ffn="gelu_tanh",
           biases=True)
# Original Transformer: post-norm LayerNorm, relu, with padding.
block_case("post_layer_norm_relu_padded", batch=3, length=6, d_model=32, heads=4,
           kv_heads=2, d_ff=64, placement="post", norm="layer_norm", ffn="relu",
           biases=True, lengths=[6, 3, 1])
block_case("post_rms_geglu", batch=1, length=7, d_model=40, heads=5, kv_heads=5,
           d_ff=56, placement="post", norm="rms_norm", ffn="geglu")
block_case("pre_layer_norm_silu_gelu", batch=1, length=4, d_model=24, heads=2,
           kv_heads=1, d_ff=40, placement="pre", norm="layer_norm", ffn="silu")
block_case("pre_rms_gelu_odd_width_mqa", batch=2, length=3, d_model=100, heads=5,
           kv_heads=1, d_ff=60, placement="pre", norm="rms_norm", ffn="gelu",
           rope=(10000.0, "half"))
# One library, two batch/sequence sizes.
shared = block_case("dynamic_block_small", batch=1, length=3, d_model=32, heads=4,
                    kv_heads=2, d_ff=48, placement="pre", norm="rms_norm", ffn="swiglu",
                    rope=(10000.0, "half"), dynamic=True, entry="dynamic_block")
block_case("dynamic_block_large", batch=3, length=11, d_model=32, heads=4, kv_heads=2,
           d_ff=48, placement="pre", norm="rms_norm", ffn="swiglu",
           rope=(10000.0, "half"), dynamic=True, entry="dynamic_block", define=False,
           params=shared)

suite.run()
