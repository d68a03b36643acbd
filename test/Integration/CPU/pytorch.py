# RUN: %python %s %t
#
# Cross-check against PyTorch (Debian's python3-torch): the usual reference
# modules (GQA attention via repeat_interleave, RMSNorm, SwiGLU FFN, a
# pre-norm LLaMA block with rotate-half RoPE) run in float32 with the same
# random weights as the compiled tfm code; outputs agree within 1e-5
# (max-norm relative).

import math
import sys

import numpy as np
import torch
from torch import nn

from harness import Suite, tensor

torch.manual_seed(0)
rng = np.random.default_rng(1234)
suite = Suite(sys.argv[1])
B, S, D_MODEL, HEADS, KV_HEADS, D_FF = 2, 11, 64, 8, 2, 96
HEAD_DIM = D_MODEL // HEADS
EPS, THETA = 1e-5, 10000.0


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


def rotate_half(x):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def rope(x, positions):
    inv_freq = 1.0 / THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM)
    angles = positions[:, None].double() * inv_freq[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    return x * emb.cos().float() + rotate_half(x) * emb.sin().float()


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D_MODEL, HEADS * HEAD_DIM, bias=False)
        self.k_proj = nn.Linear(D_MODEL, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = nn.Linear(D_MODEL, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, D_MODEL, bias=False)

    def forward(self, x, positions):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(x).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v_proj(x).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q, k = rope(q, positions), rope(k, positions)
        k = k.repeat_interleave(HEADS // KV_HEADS, dim=1)
        v = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(HEAD_DIM)
        causal = torch.ones(s, s, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(b, s, -1))


class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(D_MODEL, D_FF, bias=False)
        self.up_proj = nn.Linear(D_MODEL, D_FF, bias=False)
        self.down_proj = nn.Linear(D_FF, D_MODEL, bias=False)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm(D_MODEL)
        self.self_attn = Attention()
        self.post_attention_layernorm = RMSNorm(D_MODEL)
        self.mlp = SwiGLU()

    def forward(self, x, positions):
        h = x + self.self_attn(self.input_layernorm(x), positions)
        return h + self.mlp(self.post_attention_layernorm(h))


block = Block().eval()
x = torch.randn(B, S, D_MODEL)
positions = torch.arange(S)
weights = {name: p.detach().numpy() for name, p in block.named_parameters()}
x_np = x.numpy()


def f32(shape):
    return tensor(shape, "f32")


with torch.no_grad():
    # RMSNorm.
    suite.add_op("torch_rms_norm", "tfm.rms_norm %a0, %a1 eps(1.0e-05)",
                 [(x_np, "f32"), (weights["input_layernorm.weight"], "f32")],
                 x_np.shape, "f32", block.input_layernorm(x).double().numpy())
    # SwiGLU FFN.
    suite.add_op("torch_swiglu", "tfm.ffn swiglu %a0 gate(%a1) up(%a2) down(%a3)",
                 [(x_np, "f32"), (weights["mlp.gate_proj.weight"], "f32"),
                  (weights["mlp.up_proj.weight"], "f32"),
                  (weights["mlp.down_proj.weight"], "f32")],
                 x_np.shape, "f32", block.mlp(x).double().numpy())
    # GQA attention on projected heads (repeat_interleave in PyTorch).
    q = torch.randn(B, HEADS, S, HEAD_DIM)
    k = torch.randn(B, KV_HEADS, S, HEAD_DIM)
    v = torch.randn(B, KV_HEADS, S, HEAD_DIM)
    kk = k.repeat_interleave(HEADS // KV_HEADS, dim=1)
    vv = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    expected = torch.softmax((q @ kk.transpose(-1, -2) / math.sqrt(HEAD_DIM))
                             .masked_fill(~causal, float("-inf")), dim=-1) @ vv
    suite.add_op("torch_gqa_attention", "tfm.attention %a0, %a1, %a2 {mask = #tfm.mask<causal>}",
                 [(q.numpy(), "f32"), (k.numpy(), "f32"), (v.numpy(), "f32")],
                 (B, HEADS, S, HEAD_DIM), "f32", expected.double().numpy())
    # The whole pre-norm block, with RoPE.
    order = ["input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
             "self_attn.v_proj.weight", "self_attn.o_proj.weight",
             "post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
             "mlp.down_proj.weight"]
    inputs = [(x_np, "f32")] + [(weights[n], "f32") for n in order] + [(positions.numpy(), "i64")]
    suite.add_op(
        "torch_llama_block",
        f"tfm.decoder_block pre rms_norm %a0 heads({HEADS}, {KV_HEADS}) eps(1.0e-05) "
        "attn_norm(%a1) q(%a2) k(%a3) v(%a4) o(%a5) ffn_norm(%a6) "
        "swiglu gate(%a7) up(%a8) down(%a9) positions(%a10) "
        "{mask = #tfm.mask<causal>, rope = #tfm.rope<theta = 1.0e+04, style = half>}",
        inputs, x_np.shape, "f32", block(x, positions).double().numpy())

suite.run()
