"""GPU benchmarks: tfm's CUDA kernels against PyTorch in the same run.

- attention: bf16 tfm.attention against scaled_dot_product_attention (flash
  backend) at the FlashAttention papers' settings: 16k tokens in all
  (batch = 16384 / S), model width 2048 (heads = 2048 / head dim), head dim
  64 and 128, causal and not. TFLOP/s counts 4·B·H·D per visible (query,
  key) pair.
- projections: bf16 tfm.linear (x [1, M, K] times an nn.Linear weight
  [N, K], bf16 result) against torch.matmul (cuBLAS) on the shapes of issue
  16's model (d_model 2048, 32/4 heads of 64, d_ff 5632, vocab 32000) at
  M = 2048 and 8192 tokens. TFLOP/s counts 2·M·N·K.
- decode: bf16 attention of one query a head against a KV cache (32 query
  heads; head dim 64 with 4 KV heads, 128 with 8), batch 1 and 8, caches
  of 1k to 64k positions, against scaled_dot_product_attention (enable_gqa,
  PyTorch's choice of backend); tfm's split-KV kernel (the default) and
  the one of a block per query head (--gpu-attention-split-kv=false), each
  also timed by its kernels alone. GB/s
  count the K and V bytes read once.
- step: one generated token of issue 16's model (decode, bf16) with KV
  caches holding 4096 positions, batch 1 and 8, against a PyTorch eager
  decode step on the same caches (the Hugging Face math with a static
  cache: the new k and v written at the position, SDPA with enable_gqa
  over the cache), for the model compiled as usual and with
  --gpu-attention-split-kv=false; tfm's kernels timed alone too.
- model: issue 16's whole-model prefill, bf16 (bench/model.py's FULL
  LLaMA-style description, 2 layers, d_model 2048, 32/4 heads, d_ff 5632,
  vocab 32000), B = 1, S = 2048, every position's logits, against the same
  forward in PyTorch eager on the GPU (bench/model.py's torch_logits: the
  Hugging Face LLaMA math), same random weights and tokens.

  gpu.py prepare DIR [--gpu-arch=SM] [--gpu-matmul-tile=R,C,K,S,WR,WC ...]
                     [--gpu-attention-warp-rows=N ...] [--gpu-few-rows=N ...]
                                  here (needs tfm-compile): the libraries,
                                  dynamic in batch and length, in DIR, for
                                  SM (default sm_90a: projections on
                                  warpgroup MMA; sm_90: on mma.sync);
                                  each tiling given also compiles the
                                  projections with it
                                  (projections-R,C,K,S,WR,WC.so; on
                                  sm_90a also projections-tma.so, the
                                  tiles loaded by TMA, and
                                  projections-ws.so, by a producer
                                  warpgroup, and
                                  projections-persistent.so, that in
                                  persistent blocks on the device's
                                  multiprocessors), each
                                  warp-rows the attention
                                  (attention-N.so; on sm_90a also
                                  attention-wgmma.so, its products as
                                  warpgroup MMA, and
                                  attention-wgmma-overlap.so, with the
                                  softmax overlapping P·V, and
                                  attention-tma.so, wgmma with K and V
                                  loaded by TMA, and
                                  attention-overlap-tma.so, both, and
                                  attention-ws.so, TMA loads by a
                                  producer warpgroup, and
                                  attention-overlap-ws.so, with the
                                  overlap, and attention-pingpong.so,
                                  also taking turns, and
                                  attention-overlap-keys128.so, with
                                  tiles of 128 keys, and
                                  attention-mma-sync.so, sm_80's
                                  kernel; the default, attention.so,
                                  is ping-pong with 128-key tiles), each
                                  few-rows the
                                  model (model-few-rows-N.so, timed by
                                  `step` beside model.so), the model
                                  with every kernel its own launch
                                  (model-separate-launches.so, timed by
                                  `step` and `model`), the model with
                                  the norms computed by the few-rows
                                  projections that read them
                                  (model-norm-prologues.so, timed by
                                  `step` and `model`); on sm_90a
                                  model-tma.so, model-ws.so,
                                  model-persistent.so,
                                  model-attention-ws.so,
                                  model-pingpong.so (64-key tiles) and
                                  model-mma-sync.so, timed by
                                  `model` beside model.so
  gpu.py run DIR [attention] [projections] [decode] [step] [model]
                                  on the GPU machine: both sides' figures,
                                  each tfm result checked against PyTorch's
                                  (the projections and attention of every
                                  library)

Times are medians of CUDA-event-timed calls on arrays already on the GPU
(tfm: device arrays wrapping PyTorch's tensors, bound once, so no copies
are timed).
"""

import json
import pathlib
import sys

SEQ_LENS = (512, 1024, 2048, 4096, 8192, 16384)
HEAD_DIMS = (64, 128)
TOKENS, WIDTH = 16384, 2048


def flops(batch, heads, seq, dim, causal):
    pairs = seq * (seq + 1) // 2 if causal else seq * seq
    return 4 * batch * heads * dim * pairs


def source(dim, causal):
    heads = WIDTH // dim
    t = f"tensor<?x{heads}x?x{dim}xbf16>"
    mask = " {mask = #tfm.mask<causal>}" if causal else ""
    name = f"attention_d{dim}_{'causal' if causal else 'full'}"
    return name, (f"func.func @{name}(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
                  f"  %o = tfm.attention %q, %k, %v{mask} : ({t}, {t}, {t}) -> {t}\n"
                  f"  return %o : {t}\n}}\n")


DECODE_HEADS = {64: (32, 4), 128: (32, 8)}  # head dim: (query heads, KV heads)
DECODE_BATCHES = (1, 8)
DECODE_LENGTHS = (1024, 4096, 16384, 65536)


def decode_source(dim):
    heads, kv_heads = DECODE_HEADS[dim]
    q, kv = f"tensor<?x{heads}x1x{dim}xbf16>", f"tensor<?x{kv_heads}x?x{dim}xbf16>"
    return (f"func.func @decode_d{dim}(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
            f"  %o = tfm.attention %q, %k, %v : ({q}, {kv}, {kv}) -> {q}\n"
            f"  return %o : {q}\n}}\n")


PROJECTIONS = {"qo": (2048, 2048), "kv": (2048, 256), "gate_up": (2048, 5632),
               "down": (5632, 2048), "lm_head": (2048, 32000)}  # (K, N)
TOKENS_PROJECTED = (2048, 8192)
# The persistent projections: blocks for the device's multiprocessors,
# counted at run time.
PERSISTENT = "--gpu-matmul-persistent"


def projection_source(name, k, n):
    x, w, y = (f"tensor<1x?x{k}xbf16>", f"tensor<{n}x{k}xbf16>",
               f"tensor<1x?x{n}xbf16>")
    return (f"func.func @{name}(%x: {x}, %w: {w}) -> {y} {{\n"
            f"  %y = tfm.linear %x, %w : ({x}, {w}) -> {y}\n"
            f"  return %y : {y}\n}}\n")


def prepare(directory, tilings, warp_rows, few_rows, arch="sm_90a"):
    from tfm import compiler
    directory.mkdir(parents=True, exist_ok=True)
    flags = ["--target=cuda", f"--gpu-arch={arch}"]
    text = ""
    for dim in HEAD_DIMS:
        for causal in (False, True):
            text += source(dim, causal)[1]
    compiler.compile_mlir(text, directory / "attention.so", flags=flags)
    for rows in warp_rows:
        compiler.compile_mlir(
            text, directory / f"attention-{rows}.so",
            flags=flags + [f"--gpu-attention-warp-rows={rows}"])
    if arch == "sm_90a":
        forms = {"wgmma": ["--gpu-attention-wgmma"],
                 "wgmma-overlap": ["--gpu-attention-wgmma-overlap"],
                 "tma": ["--gpu-attention-tma"],
                 "overlap-tma": ["--gpu-attention-wgmma-overlap",
                                 "--gpu-attention-tma"],
                 "ws": ["--gpu-attention-warp-specialized"],
                 "overlap-ws": ["--gpu-attention-wgmma-overlap",
                                "--gpu-attention-warp-specialized"],
                 "pingpong": ["--gpu-attention-pingpong"],
                 "overlap-keys128": ["--gpu-attention-wgmma-overlap",
                                     "--gpu-attention-keys=128"],
                 "mma-sync": ["--gpu-attention-mma-sync"]}
        for form, form_flags in forms.items():
            compiler.compile_mlir(text, directory / f"attention-{form}.so",
                                  flags=flags + form_flags)
    text = "".join(decode_source(dim) for dim in DECODE_HEADS)
    compiler.compile_mlir(text, directory / "decode.so", flags=flags)
    compiler.compile_mlir(text, directory / "decode-no-split-kv.so",
                          flags=flags + ["--gpu-attention-split-kv=false"])
    text = "".join(projection_source(name, k, n)
                   for name, (k, n) in PROJECTIONS.items())
    compiler.compile_mlir(text, directory / "projections.so", flags=flags)
    for tiling in tilings:
        compiler.compile_mlir(text, directory / f"projections-{tiling}.so",
                              flags=flags + [f"--gpu-matmul-tile={tiling}"])
    if arch == "sm_90a":
        compiler.compile_mlir(text, directory / "projections-tma.so",
                              flags=flags + ["--gpu-matmul-tma"])
        compiler.compile_mlir(text, directory / "projections-ws.so",
                              flags=flags + ["--gpu-matmul-warp-specialized"])
        compiler.compile_mlir(text, directory / "projections-persistent.so",
                              flags=flags + [PERSISTENT])
    from model import FULL
    compiler.compile_model(dict(FULL, dtype="bf16"), directory / "model.so",
                           flags=flags)
    if arch == "sm_90a":
        compiler.compile_model(dict(FULL, dtype="bf16"),
                               directory / "model-tma.so",
                               flags=flags + ["--gpu-matmul-tma"])
        compiler.compile_model(dict(FULL, dtype="bf16"),
                               directory / "model-ws.so",
                               flags=flags + ["--gpu-matmul-warp-specialized"])
        compiler.compile_model(dict(FULL, dtype="bf16"),
                               directory / "model-persistent.so",
                               flags=flags + [PERSISTENT])
        compiler.compile_model(
            dict(FULL, dtype="bf16"), directory / "model-attention-ws.so",
            flags=flags + ["--gpu-attention-warp-specialized"])
        compiler.compile_model(
            dict(FULL, dtype="bf16"), directory / "model-pingpong.so",
            flags=flags + ["--gpu-attention-pingpong"])
        compiler.compile_model(
            dict(FULL, dtype="bf16"), directory / "model-mma-sync.so",
            flags=flags + ["--gpu-attention-mma-sync"])
    compiler.compile_model(dict(FULL, dtype="bf16"),
                           directory / "model-no-split-kv.so",
                           flags=flags + ["--gpu-attention-split-kv=false"])
    for rows in few_rows:
        compiler.compile_model(dict(FULL, dtype="bf16"),
                               directory / f"model-few-rows-{rows}.so",
                               flags=flags + [f"--gpu-few-rows={rows}"])
    compiler.compile_model(dict(FULL, dtype="bf16"),
                           directory / "model-separate-launches.so",
                           flags=flags + ["--gpu-separate-launches"])
    compiler.compile_model(dict(FULL, dtype="bf16"),
                           directory / "model-norm-prologues.so",
                           flags=flags + ["--gpu-norm-prologues"])
    print(f"prepared {directory}")


def run_model(directory, library="model.so", length=2048):
    import torch
    from model import FULL, flops, torch_logits
    from tfm import runtime
    forward = runtime.Library(directory / library)["forward"]
    gen = torch.Generator(device="cuda").manual_seed(0)
    weights = {}
    for spec in forward.inputs[2:]:
        shape = spec["shape"]
        if len(shape) == 1:  # norm weights around 1
            weights[spec["name"]] = 1 + 0.1 * torch.randn(
                shape, device="cuda", generator=gen)
        else:
            weights[spec["name"]] = torch.randn(
                shape, device="cuda", generator=gen) / shape[-1] ** 0.5
    weights = {name: w.to(torch.bfloat16).contiguous() for name, w in weights.items()}
    ids = torch.randint(0, FULL["vocab_size"], (1, length), device="cuda",
                        dtype=torch.int32, generator=gen)
    positions = torch.arange(length, device="cuda", dtype=torch.int32)[None]
    logits = torch.empty(1, length, FULL["vocab_size"], device="cuda",
                         dtype=torch.bfloat16)
    wrap = runtime.DeviceArray.wrap
    call = forward.bind(
        input_ids=wrap(ids.data_ptr(), ids.shape, "i32", ids),
        position_ids=wrap(positions.data_ptr(), positions.shape, "i32", positions),
        **{name: wrap(w.data_ptr(), w.shape, "bf16", w) for name, w in weights.items()},
        out=[wrap(logits.data_ptr(), logits.shape, "bf16", logits)])
    ids_host, positions_host = ids.cpu().numpy(), positions.cpu().numpy()
    reference = torch_logits(FULL, weights, ids_host, positions_host)
    ms = median_ms(lambda: torch_logits(FULL, weights, ids_host, positions_host),
                   reps=10)
    tms = median_ms(call, reps=10)
    kms = median_kernel_ms(call)
    error = relative_error(logits, reference)
    work = flops(FULL, 1, length)
    print(f"{library} S={length}: torch {ms:.3f} ms ({work / ms / 1e9:.1f} TFLOP/s), "
          f"tfm {tms:.3f} ms ({work / tms / 1e9:.1f} TFLOP/s; kernels {kms:.3f} ms), "
          f"torch's time / tfm's {ms / tms:.2f}, error {error:.1e}")
    return {"library": library, "length": length, "torch_ms": ms, "tfm_ms": tms, "tfm_kernel_ms": kms,
            "error": error}


STEP_CACHED = 4096
STEP_BATCHES = (1, 8)


def torch_decode_step(config, w, ids, position, caches):
    """Logits of one decode step ([B, vocab]) in PyTorch eager: the Hugging
    Face LLaMA math for one new token a sequence at `position`, its k and v
    written into `caches` ([layer] -> (k, v) of [B, Hkv, capacity, D]),
    attention over positions 0..position."""
    import torch
    import torch.nn.functional as F
    heads, kv_heads = config["num_heads"], config["num_kv_heads"]
    head_dim = config["d_model"] // heads
    device, dtype = ids.device, w["model.embed_tokens.weight"].dtype
    batch = ids.shape[0]
    inverse = 1.0 / 10000.0 ** (torch.arange(0, head_dim, 2, device=device).double()
                                / head_dim)
    angles = position * inverse
    cos = torch.cat([angles.cos()] * 2).to(dtype)
    sin = torch.cat([angles.sin()] * 2).to(dtype)

    def norm(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * weight

    def rope(x):
        first, second = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-second, first), dim=-1) * sin

    with torch.no_grad():
        x = w["model.embed_tokens.weight"][ids]  # [B, d]
        for layer in range(config["num_layers"]):
            p = f"model.layers.{layer}."
            h = norm(x, w[p + "input_layernorm.weight"])
            q = rope((h @ w[p + "self_attn.q_proj.weight"].T).view(batch, heads, 1, head_dim))
            k = rope((h @ w[p + "self_attn.k_proj.weight"].T).view(batch, kv_heads, 1, head_dim))
            v = (h @ w[p + "self_attn.v_proj.weight"].T).view(batch, kv_heads, 1, head_dim)
            k_cache, v_cache = caches[layer]
            k_cache[:, :, position:position + 1] = k
            v_cache[:, :, position:position + 1] = v
            attention = F.scaled_dot_product_attention(
                q, k_cache[:, :, :position + 1], v_cache[:, :, :position + 1],
                enable_gqa=True).reshape(batch, -1)
            x = x + attention @ w[p + "self_attn.o_proj.weight"].T
            h = norm(x, w[p + "post_attention_layernorm.weight"])
            gate = F.silu(h @ w[p + "mlp.gate_proj.weight"].T)
            x = x + (gate * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
        return norm(x, w["model.norm.weight"]) @ head.T


def run_step(directory):
    """One decode step at STEP_CACHED cached positions, tfm against
    PyTorch eager, on the same weights and cache contents."""
    import torch
    from model import FULL
    from tfm import runtime
    config = dict(FULL, dtype="bf16")
    variants = libraries(directory, "model")
    gen = torch.Generator(device="cuda").manual_seed(1)
    decode = next(iter(variants.values()))["decode"]
    weights = {}
    for spec in decode.inputs:
        name, shape = spec["name"], spec["shape"]
        if name.startswith("model.") or name == "lm_head.weight":
            scale = 0.1 if len(shape) == 1 else shape[-1] ** -0.5
            weights[name] = (torch.randn(shape, device="cuda", generator=gen) * scale
                             + (len(shape) == 1)).to(torch.bfloat16)
    heads, kv_heads = config["num_heads"], config["num_kv_heads"]
    head_dim = config["d_model"] // heads
    wrap = runtime.DeviceArray.wrap
    print(f"{'B':>2} {'cached':>6} {'torch ms':>9}  tfm ms  kernels ms  x torch  error  form")
    results = []
    for batch in STEP_BATCHES:
        capacity = STEP_CACHED + 1
        start = [tuple(torch.randn(batch, kv_heads, capacity, head_dim, device="cuda",
                                   generator=gen).to(torch.bfloat16) for _ in range(2))
                 for _ in range(config["num_layers"])]
        ids = torch.randint(0, config["vocab_size"], (batch,), device="cuda",
                            generator=gen)
        torch_caches = [tuple(c.clone() for c in pair) for pair in start]
        reference = torch_decode_step(config, weights, ids, STEP_CACHED, torch_caches)
        ms = median_ms(lambda: torch_decode_step(config, weights, ids, STEP_CACHED,
                                                 torch_caches), reps=10)
        for form, library in variants.items():
            caches = [c.clone() for pair in start for c in pair]
            ids32 = ids.to(torch.int32)[:, None].contiguous()
            positions = torch.full((batch, 1), STEP_CACHED, device="cuda",
                                   dtype=torch.int32)
            lengths = torch.full((batch,), STEP_CACHED, device="cuda", dtype=torch.int32)
            logits = torch.empty(batch, 1, config["vocab_size"], device="cuda",
                                 dtype=torch.bfloat16)
            cache_names = [spec["name"] for spec in library["decode"].inputs
                           if spec["name"].startswith("cache.")]
            call = library["decode"].bind(
                input_ids=wrap(ids32.data_ptr(), ids32.shape, "i32", ids32),
                position_ids=wrap(positions.data_ptr(), positions.shape, "i32", positions),
                cache_lengths=wrap(lengths.data_ptr(), lengths.shape, "i32", lengths),
                **{name: wrap(c.data_ptr(), c.shape, "bf16", c)
                   for name, c in zip(cache_names, caches)},
                **{name: wrap(w.data_ptr(), w.shape, "bf16", w) for name, w in weights.items()},
                out=[wrap(logits.data_ptr(), logits.shape, "bf16", logits)])
            tms = median_ms(call, reps=10)
            kms = median_kernel_ms(call)
            error = relative_error(logits[:, 0], reference)
            print(f"{batch:>2} {STEP_CACHED:>6} {ms:>9.3f} {tms:>7.3f} {kms:>11.3f} "
                  f"{ms / tms:>8.2f} {error:>6.1e}  {form}", flush=True)
            results.append({"batch": batch, "cached": STEP_CACHED, "torch_ms": ms,
                            "tfm_ms": tms, "tfm_kernel_ms": kms, "error": error,
                            "form": form})
    return results


def median_ms(function, reps=20):
    import torch
    function()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        function()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def median_kernel_ms(call, reps=10):
    """The median GPU time of `call`'s kernels alone (what launches and
    host round trips add is the difference to its CUDA-event time)."""
    times = []
    for _ in range(reps):
        call()
        times.append(call.kernel_seconds * 1e3)
    return sorted(times)[reps // 2]


def time_call(function, inputs, ref):
    """tfm's `function` bound to device arrays over the bf16 tensors
    `inputs` and a new result like `ref`: (the bound call, its median ms,
    its result's error against `ref`)."""
    import torch
    out = torch.empty_like(ref)
    call = function.bind(*device_arrays(*inputs), out=device_arrays(out))
    ms = median_ms(call)
    return call, ms, relative_error(out, ref)


def relative_error(out, ref):
    """max |out - ref| / max |ref|, in f32."""
    return ((out.float() - ref.float()).abs().max() / ref.float().abs().max()).item()


def warm_up(seconds=1.0):
    """Keeps the GPU busy with bf16 matrix products for `seconds`, so that
    its clocks have risen before the first timed shape (which otherwise
    read up to 4x slow)."""
    import time
    import torch
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()


def device_arrays(*tensors):
    """tfm device arrays over PyTorch's CUDA tensors (bf16, contiguous)."""
    from tfm import runtime
    return [runtime.DeviceArray.wrap(t.data_ptr(), t.shape, "bf16", t)
            for t in tensors]


def libraries(directory, kind):
    """DIR/KIND.so as "default", then the variants prepared besides
    (DIR/KIND-VARIANT.so) by variant."""
    from tfm import runtime
    return {path.stem.partition("-")[2] or "default": runtime.Library(path)
            for path in sorted(directory.glob(f"{kind}*.so"),
                               key=lambda p: (p.stem != kind, p.stem))}


def run_projections(directory):
    import torch
    tilings = libraries(directory, "projections")
    print(f"{'name':>8} {'M':>5} {'K':>5} {'N':>6} {'torch ms':>9} {'TFLOP/s':>8}"
          f" {'tfm ms':>8} {'TFLOP/s':>8} {'of torch':>8} {'error':>8}  tiling")
    results = []
    for tokens in TOKENS_PROJECTED:
        for name, (k, n) in PROJECTIONS.items():
            gen = torch.Generator(device="cuda").manual_seed(k + n + tokens)
            x = torch.randn(1, tokens, k, device="cuda", dtype=torch.bfloat16,
                            generator=gen)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16,
                            generator=gen) / k ** 0.5
            ref = torch.matmul(x, w.T)
            ms = median_ms(lambda: torch.matmul(x, w.T))
            work = 2 * tokens * n * k
            for tiling, library in tilings.items():
                _, tms, error = time_call(library[name], (x, w), ref)
                row = {"name": name, "M": tokens, "K": k, "N": n,
                       "torch_ms": ms, "tfm_ms": tms, "error": error,
                       "tiling": tiling}
                print(f"{name:>8} {tokens:>5} {k:>5} {n:>6} {ms:>9.3f} "
                      f"{work / ms / 1e9:>8.1f} {tms:>8.3f} "
                      f"{work / tms / 1e9:>8.1f} {ms / tms:>8.2f} "
                      f"{error:>8.1e}  {tiling}", flush=True)
                results.append(row)
    return results


def run_attention(directory):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    variants = libraries(directory, "attention")
    print(f"{'D':>4} {'S':>6} {'causal':>6} {'torch ms':>9} {'TFLOP/s':>8}"
          f"  tfm ms  TFLOP/s  x torch  error  form")
    results = []
    for dim in HEAD_DIMS:
        heads = WIDTH // dim
        for causal in (False, True):
            for seq in SEQ_LENS:
                batch = TOKENS // seq
                gen = torch.Generator(device="cuda").manual_seed(seq + dim)
                q, k, v = (torch.randn(batch, heads, seq, dim, device="cuda",
                                       dtype=torch.bfloat16, generator=gen)
                           for _ in range(3))
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    ms = median_ms(lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal))
                work = flops(batch, heads, seq, dim, causal)
                name = source(dim, causal)[0]
                for form, library in variants.items():
                    _, tms, error = time_call(library[name], (q, k, v), ref)
                    row = {"dim": dim, "seq": seq, "causal": causal,
                           "torch_ms": ms, "torch_tflops": work / ms / 1e9,
                           "tfm_ms": tms, "tfm_tflops": work / tms / 1e9,
                           "error": error, "form": form}
                    print(f"{dim:>4} {seq:>6} {str(causal):>6} {ms:>9.3f} "
                          f"{row['torch_tflops']:>8.1f} {tms:>8.3f} "
                          f"{row['tfm_tflops']:>8.1f} {ms / tms:>8.2f} "
                          f"{error:>8.1e}  {form}", flush=True)
                    results.append(row)
    return results


def run_decode(directory):
    import torch
    import torch.nn.functional as F
    variants = libraries(directory, "decode")
    print(f"{'D':>4} {'B':>2} {'S':>6} {'torch ms':>9} {'GB/s':>7}  tfm ms  "
          f"kernels ms  GB/s  x torch  error  form")
    results = []
    for dim, (heads, kv_heads) in DECODE_HEADS.items():
        for batch in DECODE_BATCHES:
            for seq in DECODE_LENGTHS:
                gen = torch.Generator(device="cuda").manual_seed(seq + dim + batch)
                q = torch.randn(batch, heads, 1, dim, device="cuda",
                                dtype=torch.bfloat16, generator=gen)
                k, v = (torch.randn(batch, kv_heads, seq, dim, device="cuda",
                                    dtype=torch.bfloat16, generator=gen)
                        for _ in range(2))
                ref = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                ms = median_ms(lambda: F.scaled_dot_product_attention(
                    q, k, v, enable_gqa=True))
                gigabytes = 2 * k.numel() * k.element_size() / 1e9
                for form, library in variants.items():
                    call, tms, error = time_call(library[f"decode_d{dim}"],
                                                 (q, k, v), ref)
                    kms = median_kernel_ms(call)
                    row = {"dim": dim, "batch": batch, "seq": seq,
                           "torch_ms": ms, "tfm_ms": tms, "tfm_kernel_ms": kms,
                           "error": error, "form": form}
                    print(f"{dim:>4} {batch:>2} {seq:>6} {ms:>9.4f} "
                          f"{gigabytes / ms * 1e3:>7.0f} {tms:>7.4f} {kms:>10.4f} "
                          f"{gigabytes / kms * 1e3:>5.0f} {ms / tms:>8.2f} "
                          f"{error:>6.1e}  {form}", flush=True)
                    results.append(row)
    return results


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    where = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else None
    which = sys.argv[3:] or ["attention", "projections", "decode", "step", "model"]
    if mode == "prepare" and where:
        which = sys.argv[3:]
        tile, rows, arch, few = ("--gpu-matmul-tile=", "--gpu-attention-warp-rows=",
                                 "--gpu-arch=", "--gpu-few-rows=")
        if not all(arg.startswith((tile, rows, arch, few)) for arg in which):
            sys.exit(__doc__)

        def values(flag):
            return [arg[len(flag):] for arg in which if arg.startswith(flag)]
        prepare(where, values(tile), values(rows), values(few),
                *values(arch)[-1:])
    elif mode == "run" and where and set(which) <= {"attention", "projections",
                                                    "decode", "step", "model"}:
        import torch
        print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
        warm_up()
        results = {}
        if "projections" in which:
            results["projections"] = run_projections(where)
        if "attention" in which:
            results["attention"] = run_attention(where)
        if "decode" in which:
            results["decode"] = run_decode(where)
        if "step" in which:
            results["step"] = run_step(where)
        if "model" in which:
            results["model"] = [
                run_model(where, library)
                for library in ("model.so", "model-separate-launches.so",
                                "model-norm-prologues.so",
                                "model-tma.so", "model-ws.so",
                                "model-persistent.so", "model-attention-ws.so",
                                "model-pingpong.so", "model-mma-sync.so")
                if (where / library).exists()]
        print(json.dumps(results))
    else:
        sys.exit(__doc__)
