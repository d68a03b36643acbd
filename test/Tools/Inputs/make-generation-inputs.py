"""Writes, for tfm-run-generate.test: params.safetensors (random weights of
the model description argv[1]), prompts.npy (two int64 prompts of 6 tokens)
and expected.check, the greedy tokens of the float64 reference recomputing
each prefix, as FileCheck lines of tfm-run's output."""

import json
import pathlib
import sys

import numpy as np

from tfm import reference, safetensors

config = json.loads(pathlib.Path(sys.argv[1]).read_text())
out = pathlib.Path(sys.argv[2])
steps = int(sys.argv[3])
rng = np.random.default_rng(17)
d, heads = config["d_model"], config["num_heads"]
kv_rows = config.get("num_kv_heads", heads) * d // heads
shapes = {"model.embed_tokens.weight": (config["vocab_size"], d), "model.norm.weight": (d,)}
for layer in range(config["num_layers"]):
    p = f"model.layers.{layer}."
    shapes.update({p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                   p + "self_attn.q_proj.weight": (d, d), p + "self_attn.k_proj.weight": (kv_rows, d),
                   p + "self_attn.v_proj.weight": (kv_rows, d), p + "self_attn.o_proj.weight": (d, d),
                   p + "mlp.gate_proj.weight": (config["d_ff"], d),
                   p + "mlp.up_proj.weight": (config["d_ff"], d),
                   p + "mlp.down_proj.weight": (d, config["d_ff"])})
params = {name: ((1.0 if len(shape) == 1 else 0.0)
                 + rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)
          for name, shape in shapes.items()}
safetensors.save(out / "params.safetensors", params)
prompts = rng.integers(0, config["vocab_size"], (2, 6)).astype(np.int64)
np.save(out / "prompts.npy", prompts)
exact = {name: array.astype(np.float64) for name, array in params.items()}
lines = []
for b, prompt in enumerate(prompts):
    sequence = list(prompt)
    for _ in range(steps):
        ids = np.array([sequence], np.int32)
        positions = np.arange(len(sequence), dtype=np.int32)[None]
        sequence.append(int(reference.language_model(config, exact, ids, positions)[0, -1].argmax()))
    lines.append(f"# CHECK: prompt {b} (6 tokens): {' '.join(map(str, sequence[6:]))}")
(out / "expected.check").write_text("\n".join(lines) + "\n")
