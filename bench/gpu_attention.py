"""GPU attention benchmark: tfm's CUDA attention against PyTorch's
scaled_dot_product_attention (flash backend) in the same run, at the
FlashAttention papers' settings: bf16, 16k tokens in all (batch = 16384 / S),
model width 2048 (heads = 2048 / head dim), head dim 64 and 128, causal and
not.

  gpu_attention.py prepare DIR   here (needs tfm-compile): one library per
                                 (head dim, causal) with a dynamic batch and
                                 sequence length, in DIR
  gpu_attention.py run [DIR]     on the GPU machine: PyTorch's figures, and
                                 tfm's where DIR holds the libraries; each
                                 tfm result is checked against PyTorch's

Times are medians of CUDA-event-timed calls on arrays already on the GPU
(tfm: device arrays bound once, so no copies are timed). TFLOP/s counts
4·B·H·D per visible (query, key) pair.
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


def prepare(directory):
    from tfm import compiler
    directory.mkdir(parents=True, exist_ok=True)
    text = ""
    for dim in HEAD_DIMS:
        for causal in (False, True):
            text += source(dim, causal)[1]
    compiler.compile_mlir(text, directory / "attention.so",
                          flags=["--target=cuda", "--gpu-arch=sm_90"])
    print(f"prepared {directory / 'attention.so'}")


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


def run(directory):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    library = None
    if directory and (directory / "attention.so").exists():
        from tfm import runtime
        library = runtime.Library(directory / "attention.so")
    print(f"{'D':>4} {'S':>6} {'causal':>6} {'torch ms':>9} {'TFLOP/s':>8}"
          f"{'  tfm ms  TFLOP/s  x torch  error' if library else ''}")
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
                row = {"dim": dim, "seq": seq, "causal": causal,
                       "torch_ms": ms, "torch_tflops": work / ms / 1e9}
                line = (f"{dim:>4} {seq:>6} {str(causal):>6} {ms:>9.3f} "
                        f"{row['torch_tflops']:>8.1f}")
                if library:
                    name = source(dim, causal)[0]
                    out = torch.empty_like(q)
                    call = library[name].bind_device(q, k, v, out=[out])
                    tms = median_ms(call)
                    error = ((out.float() - ref.float()).abs().max()
                             / ref.float().abs().max()).item()
                    row.update(tfm_ms=tms, tfm_tflops=work / tms / 1e9,
                               error=error)
                    line += (f" {tms:>8.3f} {row['tfm_tflops']:>8.1f} "
                             f"{ms / tms:>8.2f} {error:>8.1e}")
                print(line, flush=True)
                results.append(row)
    return results


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    where = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else None
    if mode == "prepare" and where:
        prepare(where)
    elif mode == "run":
        print(json.dumps(run(where)))
    else:
        sys.exit(__doc__)
