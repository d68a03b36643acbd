"""Greedy generation on the GPU with a bf16 model whose attention runs on
the tensor-core kernels (head dim 64, 2 query heads a KV head): prompts of
300 and 77 tokens in one batch (prefill), then 12 decode steps over caches
of 312 positions (the second row's cache mostly empty; split-KV, the
default, in 3 key ranges a KV head). Each step's logits
against the float64 reference language model recomputing the whole prefix
fed the same tokens, within 3e-2 of its largest logit (bf16 results in
every layer: the CPU target's build of this model is at 1.5e-2), and
against the library's own forward pass over that prefix (the same bf16
roundings, other attention kernels), within 2^-6 of it: two bf16 ulps of
the largest logit, as far as the kernels' other summation orders can move
it through the layers after (split-KV decode reached 1.07e-2 on an H200).

  check-generation.py LIBRARY CONFIG

LIBRARY: CONFIG (a model description) compiled for --target=cuda. Needs
only NumPy and libtfm_runtime.so: it runs on a GPU machine without a
compiler (scripts/gpu-tests.sh check)."""

import json
import pathlib
import sys

import numpy as np

from tfm import generation, reference, runtime

library = runtime.Library(sys.argv[1])
config = json.loads(pathlib.Path(sys.argv[2]).read_text())
rng = np.random.default_rng(2028)

# Fan-in scaled weights, norm weights around 1: the bf16 values compiled
# and the float64 values they round to.
device, exact = {}, {}
for spec in library.given_inputs("forward"):
    name, shape = spec["name"], spec["shape"]
    if name in ("input_ids", "position_ids"):
        continue
    value = rng.standard_normal(shape) / np.sqrt(shape[-1])
    if len(shape) == 1:
        value = 1.0 + 0.1 * rng.standard_normal(shape)
    device[name] = runtime.to_bf16(value)
    exact[name] = runtime.from_bf16(device[name]).astype(np.float64)

vocab = config["vocab_size"]
prompts = [rng.integers(0, vocab, 300).tolist(), rng.integers(0, vocab, 77).tolist()]
steps = 12
steps_logits = []
generated = list(generation.Model(library, device).generate(
    prompts, steps, logits=steps_logits))
forward = library["forward"]
sequences = [list(p) for p in prompts]
worst = own = 0.0
for tokens, logits in zip(generated, steps_logits):
    for b, sequence in enumerate(sequences):
        ids = np.array([sequence], np.int32)
        positions = np.arange(len(sequence), dtype=np.int32)[None]
        expected = reference.language_model(config, exact, ids, positions)[0, -1]
        scale = np.abs(expected).max()
        worst = max(worst, np.abs(logits[b] - expected).max() / scale)
        full = runtime.from_bf16(forward(input_ids=ids, position_ids=positions,
                                         **device)[0, -1])
        own = max(own, np.abs(logits[b] - full).max() / scale)
        sequence.append(int(tokens[b]))
ok = len(generated) == steps and worst <= 3e-2 and own <= 2.0 ** -6
print(f"{'PASS' if ok else 'FAIL'} bf16 generation: {len(generated)} steps of "
      f"{len(prompts)} prompts, logits within {worst:.2e} of the reference "
      f"(tolerance 3e-2) and {own:.2e} of the library's own forward pass "
      f"(tolerance 1.6e-2)")
sys.exit(0 if ok else 1)
