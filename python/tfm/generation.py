"""Text generation with a compiled model description's `prefill` and `decode`
entry points (docs/ModelDescription.md): the weights are bound once, each
layer's keys and values stay in caches the model updates in place, and each
new token costs one decode step.

    model = generation.Model("model.so", params)  # or a checkpoint path
    for tokens in model.generate([[1, 5, 7], [2, 3]], max_new_tokens=32):
        print(tokens)                             # one new id per prompt

Sampling is greedy by default; `temperature`, `top_k`, `top_p` and `seed`
follow Hugging Face's `generate`: the logits are divided by the
temperature, then only the `top_k` most likely tokens and the smallest set
whose probabilities reach `top_p` are kept, and one is drawn.
"""

import os

import numpy as np

from . import runtime, safetensors


def sample(logits, rng, *, temperature=0.0, top_k=None, top_p=None):
    """One token id per row of `logits` [B, vocab] (float64): the argmax for
    temperature 0, else a draw from the tempered, top-k and top-p filtered
    distribution."""
    logits = np.asarray(logits, np.float64)
    if temperature < 0 or (top_k is not None and top_k < 1) or \
            (top_p is not None and not 0 < top_p <= 1):
        raise ValueError("need temperature >= 0, top_k >= 1 and 0 < top_p <= 1")
    if temperature == 0:
        return logits.argmax(-1)
    scores = logits / temperature
    if top_k is not None and top_k < scores.shape[-1]:
        kth = np.partition(scores, -top_k, -1)[:, -top_k][:, None]  # linear time
        scores = np.where(scores < kth, -np.inf, scores)
    probabilities = np.exp(scores - scores.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    if top_p is not None and top_p < 1:
        order = np.argsort(-probabilities, -1)
        sorted_p = np.take_along_axis(probabilities, order, -1)
        # Keep a token while the mass before it is below top_p.
        keep_sorted = np.cumsum(sorted_p, -1) - sorted_p < top_p
        keep = np.zeros_like(keep_sorted)
        np.put_along_axis(keep, order, keep_sorted, -1)
        probabilities = np.where(keep, probabilities, 0.0)
        probabilities /= probabilities.sum(-1, keepdims=True)
    return np.array([rng.choice(len(p), p=p) for p in probabilities])


def _float64(array, dtype):
    """Logits of the model's dtype as float64 (bf16 travels as uint16)."""
    return (runtime.from_bf16(array) if dtype == "bf16" else array).astype(np.float64)


class Model:
    """A compiled model description with its weights bound: `library` is a
    path or a `runtime.Library`, `params` a dict of arrays by parameter name
    or the path of a checkpoint (`.safetensors`, or a sharded checkpoint's
    `model.safetensors.index.json`)."""

    def __init__(self, library, params):
        if not isinstance(library, runtime.Library):
            library = runtime.Library(library)
        if "prefill" not in library.entry_points:
            raise ValueError(f"{library.path} has no prefill and decode entry points "
                             "(compiled with \"generation\": false?)")
        self.prefill = library["prefill"]
        self.decode = library["decode"]
        if isinstance(params, (str, os.PathLike)):
            params = safetensors.load_checkpoint(params)
        # Weights packed once, if the library reads them so.
        params = library.prepare(params)
        inputs = self.prefill.inputs
        self.caches = [spec for spec in inputs if spec.get("updated")]
        first = 3 + len(self.caches)
        missing = [s["name"] for s in inputs[first:] if s["name"] not in params]
        if missing:
            raise KeyError(f"parameters missing: {missing}")
        self.dtype = self.prefill.outputs[0]["dtype"]
        self.params = [np.ascontiguousarray(params[s["name"]],
                                            runtime.NUMPY_DTYPES[s["dtype"]])
                       for s in inputs[first:]]
        # A cuda library's weights and caches stay on the GPU across calls.
        self.on_device = library.device == "cuda"
        if self.on_device:
            self.params = [runtime.DeviceArray.from_numpy(p) for p in self.params]

    def new_caches(self, batch, capacity):
        """Zeroed caches for `batch` rows of `capacity` positions (a
        sliding-window model's hold its window, whatever `capacity` is)."""
        caches = []
        for spec in self.caches:
            shape = list(spec["shape"])
            shape[0] = batch
            if shape[2] < 0:
                shape[2] = capacity
            cache = np.zeros(shape, runtime.NUMPY_DTYPES[spec["dtype"]])
            caches.append(runtime.DeviceArray.from_numpy(cache)
                          if self.on_device else cache)
        return caches

    def generate(self, prompts, max_new_tokens, *, temperature=0.0, top_k=None,
                 top_p=None, seed=None, eos_token_id=None, logits=None):
        """Yields the next token id of each prompt ([B] int64), up to
        `max_new_tokens` times, stopping early once every row has produced
        `eos_token_id`. `prompts`: token id sequences of any lengths (they
        are right-padded and run as one batch). With `logits` a list, each
        step's logits ([B, vocab], float64) are appended to it."""
        rows = [np.asarray(p, np.int64).reshape(-1) for p in prompts]
        if not rows or any(len(r) == 0 for r in rows):
            raise ValueError("every prompt needs at least one token")
        batch, length = len(rows), max(len(r) for r in rows)
        ids = np.zeros((batch, length), np.int32)
        for b, row in enumerate(rows):
            ids[b, :len(row)] = row
        lengths = np.array([len(r) for r in rows], np.int32)
        positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
        caches = self.new_caches(batch, length + max_new_tokens)
        rng = np.random.default_rng(seed)

        def pick(step_logits):
            if isinstance(step_logits, runtime.DeviceArray):
                step_logits = step_logits.numpy()
            values = _float64(step_logits[:, 0], self.dtype)
            if logits is not None:
                logits.append(values)
            return sample(values, rng, temperature=temperature, top_k=top_k,
                          top_p=top_p)

        if max_new_tokens <= 0:
            return
        tokens = pick(self.prefill(ids, positions, lengths, *caches, *self.params))
        # One decode call bound once: each step updates its small inputs in
        # place.
        new_ids = tokens.astype(np.int32)[:, None]
        new_positions = lengths[:, None].copy()
        cache_lengths = lengths.copy()
        step = self.decode.bind(new_ids, new_positions, cache_lengths, *caches,
                                *self.params)
        done = np.zeros(batch, bool)
        for count in range(max_new_tokens):
            yield tokens
            if eos_token_id is not None:
                done |= tokens == eos_token_id
                if done.all():
                    return
            if count + 1 == max_new_tokens:
                return
            new_ids[:, 0] = tokens
            tokens = pick(step())
            cache_lengths += 1
            new_positions[:, 0] = cache_lengths
