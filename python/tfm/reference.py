"""Float64 NumPy reference implementations of every tfm op.

These are the oracle of the end-to-end tests: written for clarity, not speed,
and computed in float64 whatever the inputs' type. Semantics follow the op
descriptions in docs/Dialect/Tfm.md.

Masks are given as `None` (no mask), `"causal"`, `("sliding_window", W)` or
`("band", L, R)`.
"""

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _f64(x):
    return None if x is None else np.asarray(x, dtype=np.float64)


def mask_band(mask):
    """(left, right) extents of a structured mask; None is unbounded."""
    if mask is None or mask == "none":
        return None, None
    if mask == "causal":
        return None, 0
    kind = mask[0]
    if kind == "sliding_window":
        return mask[1] - 1, 0
    if kind == "band":
        return mask[1], mask[2]
    raise ValueError(f"unknown mask {mask!r}")


def structured_visibility(mask, query_len, key_len):
    """[Sq, Skv] bool: key j visible from query i, bottom-right aligned."""
    left, right = mask_band(mask)
    position = np.arange(query_len)[:, None] + (key_len - query_len)
    key = np.arange(key_len)[None, :]
    visible = np.ones((query_len, key_len), dtype=bool)
    if left is not None:
        visible &= key >= position - left
    if right is not None:
        visible &= key <= position + right
    return visible


def causal_mask(query_len, key_len):
    return structured_visibility("causal", query_len, key_len)


def sliding_window_mask(window, query_len, key_len):
    return structured_visibility(("sliding_window", window), query_len, key_len)


def padding_mask(lengths, key_len):
    """[B, 1, 1, Skv] bool: key j of batch b is visible iff j < lengths[b]."""
    lengths = np.asarray(lengths)
    return (np.arange(key_len)[None, :] < lengths[:, None])[:, None, None, :]


def attention(query, key, value, *, mask=None, kv_lengths=None, dense_mask=None,
              bias=None, scale=None, softcap=None):
    """softmax(scale·QKᵀ + bias, masked)·V with GQA head grouping."""
    q, k, v = _f64(query), _f64(key), _f64(value)
    batch, q_heads, q_len, head_dim = q.shape
    kv_heads, kv_len = k.shape[1], k.shape[2]
    group = q_heads // kv_heads
    # Query head h reads key/value head h // group (repeat_interleave).
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    if scale is None:
        scale = 1.0 / math.sqrt(head_dim)
    scores = scale * (q @ np.swapaxes(k, -1, -2))
    if softcap is not None:
        scores = softcap * np.tanh(scores / softcap)
    if bias is not None:
        scores = scores + _f64(bias)
    visible = np.broadcast_to(structured_visibility(mask, q_len, kv_len),
                              scores.shape).copy()
    if kv_lengths is not None:
        visible &= padding_mask(kv_lengths, kv_len)
        # Positions past a batch's length are not part of its sequence: a
        # cache's unwritten rows may hold anything, NaN included.
        v = np.where(np.swapaxes(padding_mask(kv_lengths, kv_len), -1, -2),
                     v, 0.0)
    if dense_mask is not None:
        visible &= np.asarray(dense_mask, dtype=bool)
    scores = np.where(visible, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True, initial=-np.inf)  # Skv may be 0
    row_max = np.where(np.isneginf(row_max), 0.0, row_max)
    probs = np.exp(scores - row_max)
    row_sum = probs.sum(axis=-1, keepdims=True)
    out = probs @ v
    return np.where(row_sum == 0, 0.0, out / np.where(row_sum == 0, 1.0, row_sum))


def rms_norm(x, weight, eps):
    x = _f64(x)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * _f64(weight)


def layer_norm(x, weight, bias, eps):
    x = _f64(x)
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # biased
    y = (x - mean) / np.sqrt(variance + eps) * _f64(weight)
    return y if bias is None else y + _f64(bias)


def linear(x, weight, bias=None):
    y = _f64(x) @ _f64(weight).T
    return y if bias is None else y + _f64(bias)


def silu(x):
    return x / (1.0 + np.exp(-x))


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def relu(x):
    return np.maximum(x, 0.0)


_ACTIVATIONS = {"swiglu": silu, "silu": silu, "geglu": gelu, "gelu": gelu,
                "gelu_tanh": gelu_tanh, "relu": relu}
GATED_FFN_KINDS = ("swiglu", "geglu")


def ffn(kind, x, up, down, *, gate=None, up_bias=None, down_bias=None):
    act = _ACTIVATIONS[kind]
    if kind in GATED_FFN_KINDS:
        hidden = act(linear(x, gate)) * linear(x, up)
    else:
        hidden = act(linear(x, up, up_bias))
    return linear(hidden, down, down_bias)


def llama3_inverse_frequencies(inv_freq, scaling):
    """Llama 3's scaled RoPE frequencies (Hugging Face's `llama3`
    rope_scaling): long wavelengths divided by `factor`, short ones kept,
    a blend between."""
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    original = scaling["original_max_positions"]
    wavelength = 2 * np.pi / inv_freq
    smooth = (original / wavelength - low) / (high - low)
    blended = (1 - smooth) * inv_freq / factor + smooth * inv_freq
    return np.where(wavelength < original / high, inv_freq,
                    np.where(wavelength > original / low, inv_freq / factor, blended))


def rope(x, positions, theta, style, scaling=None):
    """Rotary embedding on [B, H, S, D]; positions [S] or [B, S]; scaling:
    Llama 3's frequency scaling (a dict as in model descriptions) or None."""
    x = _f64(x)
    head_dim = x.shape[-1]
    half = head_dim // 2
    inv_freq = theta ** (-2.0 * np.arange(half) / head_dim)
    if scaling is not None:
        inv_freq = llama3_inverse_frequencies(inv_freq, scaling)
    positions = np.asarray(positions, dtype=np.float64)
    angles = positions[..., None] * inv_freq  # [S, D/2] or [B, S, D/2]
    if angles.ndim == 3:
        angles = angles[:, None]  # [B, 1, S, D/2]
    cos, sin = np.cos(angles), np.sin(angles)
    if style == "half":
        first, second = x[..., :half], x[..., half:]
        return np.concatenate([first * cos - second * sin,
                               second * cos + first * sin], axis=-1)
    if style == "interleaved":
        even, odd = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = even * cos - odd * sin
        out[..., 1::2] = odd * cos + even * sin
        return out
    raise ValueError(f"unknown rope style {style!r}")


def split_heads(x, heads):
    batch, length, features = x.shape
    return _f64(x).reshape(batch, length, heads, features // heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    batch, heads, length, head_dim = x.shape
    return _f64(x).transpose(0, 2, 1, 3).reshape(batch, length, heads * head_dim)


def embedding(ids, table):
    return _f64(table)[np.asarray(ids)]


def self_attention(x, q_weight, k_weight, v_weight, o_weight, *, heads, kv_heads,
                   q_bias=None, k_bias=None, v_bias=None, o_bias=None,
                   positions=None, rope_config=None, mask=None, kv_lengths=None):
    """rope_config: (theta, style) or (theta, style, scaling), or None."""
    q = split_heads(linear(x, q_weight, q_bias), heads)
    k = split_heads(linear(x, k_weight, k_bias), kv_heads)
    v = split_heads(linear(x, v_weight, v_bias), kv_heads)
    if rope_config is not None:
        theta, style, *scaling = rope_config
        scaling = scaling[0] if scaling else None
        q, k = rope(q, positions, theta, style, scaling), rope(k, positions, theta, style, scaling)
    o = attention(q, k, v, mask=mask, kv_lengths=kv_lengths)
    return linear(merge_heads(o), o_weight, o_bias)


def decoder_block(x, params, *, placement, norm, eps, heads, kv_heads, ffn_kind,
                  positions=None, rope_config=None, mask=None, kv_lengths=None):
    """params: dict with attn_norm_weight/bias, q/k/v/o weights and biases,
    ffn_norm_weight/bias, gate/up/down weights, up/down biases (absent = None)."""
    p = {name: params.get(name) for name in (
        "attn_norm_weight", "attn_norm_bias", "q_weight", "q_bias", "k_weight",
        "k_bias", "v_weight", "v_bias", "o_weight", "o_bias", "ffn_norm_weight",
        "ffn_norm_bias", "gate_weight", "up_weight", "up_bias", "down_weight",
        "down_bias")}

    def normalize(h, which):
        weight, bias = p[which + "_weight"], p[which + "_bias"]
        if norm == "rms_norm":
            return rms_norm(h, weight, eps)
        return layer_norm(h, weight, bias, eps)

    def attend(h):
        return self_attention(
            h, p["q_weight"], p["k_weight"], p["v_weight"], p["o_weight"],
            heads=heads, kv_heads=kv_heads, q_bias=p["q_bias"], k_bias=p["k_bias"],
            v_bias=p["v_bias"], o_bias=p["o_bias"], positions=positions,
            rope_config=rope_config, mask=mask, kv_lengths=kv_lengths)

    def feed_forward(h):
        return ffn(ffn_kind, h, p["up_weight"], p["down_weight"], gate=p["gate_weight"],
                   up_bias=p["up_bias"], down_bias=p["down_bias"])

    x = _f64(x)
    if placement == "pre":
        h = x + attend(normalize(x, "attn_norm"))
        return h + feed_forward(normalize(h, "ffn_norm"))
    h = normalize(x + attend(x), "attn_norm")
    return normalize(h + feed_forward(h), "ffn_norm")


def gpt2_to_llama_names(config, params):
    """GPT-2 checkpoint parameters (fused c_attn, Conv1D [in, out] weights)
    under the LLaMA-style names and nn.Linear layouts."""
    d = config["d_model"]
    renamed = {"model.embed_tokens.weight": params["transformer.wte.weight"],
               "model.embed_positions.weight": params["transformer.wpe.weight"],
               "model.norm.weight": params["transformer.ln_f.weight"],
               "model.norm.bias": params["transformer.ln_f.bias"]}
    for layer in range(config["num_layers"]):
        g, l = f"transformer.h.{layer}.", f"model.layers.{layer}."
        qkv, qkv_bias = np.asarray(params[g + "attn.c_attn.weight"]).T, params[g + "attn.c_attn.bias"]
        for i, name in enumerate(["q", "k", "v"]):
            renamed[f"{l}self_attn.{name}_proj.weight"] = qkv[i * d:(i + 1) * d]
            renamed[f"{l}self_attn.{name}_proj.bias"] = qkv_bias[i * d:(i + 1) * d]
        renamed[l + "self_attn.o_proj.weight"] = np.asarray(params[g + "attn.c_proj.weight"]).T
        renamed[l + "self_attn.o_proj.bias"] = params[g + "attn.c_proj.bias"]
        renamed[l + "mlp.up_proj.weight"] = np.asarray(params[g + "mlp.c_fc.weight"]).T
        renamed[l + "mlp.up_proj.bias"] = params[g + "mlp.c_fc.bias"]
        renamed[l + "mlp.down_proj.weight"] = np.asarray(params[g + "mlp.c_proj.weight"]).T
        renamed[l + "mlp.down_proj.bias"] = params[g + "mlp.c_proj.bias"]
        for ours, theirs in [("input_layernorm", "ln_1"), ("post_attention_layernorm", "ln_2")]:
            renamed[f"{l}{ours}.weight"] = params[f"{g}{theirs}.weight"]
            renamed[f"{l}{ours}.bias"] = params[f"{g}{theirs}.bias"]
    return renamed


def language_model(config, params, input_ids, position_ids):
    """Logits of a model description (docs/ModelDescription.md) with
    parameters named as tfm-compile names them (Hugging Face LLaMA style, or
    GPT-2 style with "naming": "gpt2")."""
    if config.get("naming") == "gpt2":
        params = gpt2_to_llama_names(config, params)
    placement = config.get("norm_placement", "pre")
    norm = config.get("norm", "rms_norm")
    eps = config.get("norm_eps", 1e-5)
    positions = config.get("positions", {"kind": "rope"})
    rope_config = None
    if positions.get("kind", "rope") == "rope":
        rope_config = (positions.get("theta", 10000.0), positions.get("style", "half"),
                       positions.get("scaling"))
    mask = config.get("mask", "causal")
    if isinstance(mask, dict):
        mask = ("sliding_window", mask["sliding_window"])

    h = embedding(input_ids, params["model.embed_tokens.weight"])
    if rope_config is None:
        h = h + embedding(position_ids, params["model.embed_positions.weight"])
    for layer in range(config["num_layers"]):
        prefix = f"model.layers.{layer}."
        names = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
                 "q": "self_attn.q_proj", "k": "self_attn.k_proj",
                 "v": "self_attn.v_proj", "o": "self_attn.o_proj",
                 "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}
        block = {}
        for short, long in names.items():
            for kind in ("weight", "bias"):
                block[f"{short}_{kind}"] = params.get(f"{prefix}{long}.{kind}")
        h = decoder_block(h, block, placement=placement, norm=norm, eps=eps,
                          heads=config["num_heads"],
                          kv_heads=config.get("num_kv_heads", config["num_heads"]),
                          ffn_kind=config.get("ffn", "swiglu"), positions=position_ids,
                          rope_config=rope_config, mask=mask)
    if config.get("final_norm", placement == "pre"):
        if norm == "rms_norm":
            h = rms_norm(h, params["model.norm.weight"], eps)
        else:
            h = layer_norm(h, params["model.norm.weight"], params.get("model.norm.bias"), eps)
    head = params.get("lm_head.weight", params["model.embed_tokens.weight"])
    return linear(h, head)
