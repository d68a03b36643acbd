"""Writes the inputs of tfm-run.test: ids/positions .npy files, parameters
as .safetensors (plus a corrupted copy), and the float64 reference logits."""

import json
import pathlib
import sys

import numpy as np

from tfm import reference, safetensors

config = json.loads(pathlib.Path(sys.argv[1]).read_text())
out = pathlib.Path(sys.argv[2])
rng = np.random.default_rng(5)
d, v, kv = config["d_model"], config["vocab_size"], config["num_kv_heads"]
head_dim = d // config["num_heads"]
shapes = {"model.embed_tokens.weight": (v, d), "model.norm.weight": (d,)}
for i in range(config["num_layers"]):
    p = f"model.layers.{i}."
    shapes.update({p + "input_layernorm.weight": (d,),
                   p + "self_attn.q_proj.weight": (d, d),
                   p + "self_attn.k_proj.weight": (kv * head_dim, d),
                   p + "self_attn.v_proj.weight": (kv * head_dim, d),
                   p + "self_attn.o_proj.weight": (d, d),
                   p + "post_attention_layernorm.weight": (d,),
                   p + "mlp.gate_proj.weight": (config["d_ff"], d),
                   p + "mlp.up_proj.weight": (config["d_ff"], d),
                   p + "mlp.down_proj.weight": (d, config["d_ff"])})
params = {name: (0.2 * rng.standard_normal(shape) + (len(shape) == 1)).astype(np.float32)
          for name, shape in shapes.items()}
safetensors.save(out / "params.safetensors", params)
bad = dict(params)
bad["model.norm.weight"] = bad["model.norm.weight"][:-1]
safetensors.save(out / "bad-shape.safetensors", bad)
assert all(np.array_equal(a, params[k]) for k, a in
           safetensors.load(out / "params.safetensors").items())

# The same checkpoint in two shards with a Hugging Face index, and shards
# that disagree with it.
names = sorted(params)
halves = {"model-00001-of-00002.safetensors": names[::2],
          "model-00002-of-00002.safetensors": names[1::2]}
for shard, members in halves.items():
    safetensors.save(out / shard, {n: params[n] for n in members})
weight_map = {n: shard for shard, members in halves.items() for n in members}
(out / "model.safetensors.index.json").write_text(
    json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}))
wrong_map = dict(weight_map, **{names[0]: "model-00002-of-00002.safetensors"})
(out / "wrong.safetensors.index.json").write_text(json.dumps({"weight_map": wrong_map}))
ghost_map = dict(weight_map, **{"ghost.weight": "model-00001-of-00002.safetensors"})
(out / "ghost.safetensors.index.json").write_text(json.dumps({"weight_map": ghost_map}))

ids = rng.integers(0, v, (2, 7)).astype(np.int32)
positions = np.tile(np.arange(7, dtype=np.int32), (2, 1))
np.save(out / "ids.npy", ids)
np.save(out / "ids64.npy", ids.astype(np.int64))
np.save(out / "ids64-huge.npy", np.where(ids == ids.max(), 2**40, ids).astype(np.int64))
np.save(out / "ids-float.npy", ids.astype(np.float32))
np.save(out / "ids-out-of-range.npy", np.where(ids == ids.max(), v, ids).astype(np.int32))
np.save(out / "pos-short.npy", positions[:, :-1])
np.save(out / "pos.npy", positions)
logits = reference.language_model(config, params, ids, positions)
np.save(out / "reference.npy", logits.astype(np.float32))
np.save(out / "wrong-reference.npy", (logits + 1.0).astype(np.float32))
