"""Calls two projections compiled in persistent blocks
(--gpu-matmul-persistent; argv[1]: a work directory) on the fake driver
(fake-cuda-driver.c, with FAKE_CUDA_PRINT_LAUNCHES set), which prints each
launch's grid and each stream synchronization: a wide one,
[1000, 192] x [1024, 192]ᵀ, and a narrow one, [1000, 192] x [256, 192]ᵀ,
each called twice, then the two in a row."""

import os
import subprocess
import sys

import numpy as np

from tfm import runtime

work = sys.argv[1]
source = os.path.join(work, "persistent.mlir")
with open(source, "w") as f:
    f.write("""
func.func @wide(%x: tensor<1x1000x192xbf16>, %w: tensor<1024x192xbf16>)
    -> tensor<1x1000x1024xbf16> {
  %y = tfm.linear %x, %w
      : (tensor<1x1000x192xbf16>, tensor<1024x192xbf16>) -> tensor<1x1000x1024xbf16>
  return %y : tensor<1x1000x1024xbf16>
}
func.func @narrow(%x: tensor<1x1000x192xbf16>, %w: tensor<256x192xbf16>)
    -> tensor<1x1000x256xbf16> {
  %y = tfm.linear %x, %w
      : (tensor<1x1000x192xbf16>, tensor<256x192xbf16>) -> tensor<1x1000x256xbf16>
  return %y : tensor<1x1000x256xbf16>
}
func.func @chain(%x: tensor<1x1000x192xbf16>, %w: tensor<1024x192xbf16>,
                 %v: tensor<256x1024xbf16>) -> tensor<1x1000x256xbf16> {
  %y = tfm.linear %x, %w
      : (tensor<1x1000x192xbf16>, tensor<1024x192xbf16>) -> tensor<1x1000x1024xbf16>
  %z = tfm.linear %y, %v
      : (tensor<1x1000x1024xbf16>, tensor<256x1024xbf16>) -> tensor<1x1000x256xbf16>
  return %z : tensor<1x1000x256xbf16>
}
""")
library = os.path.join(work, "persistent.so")
if not os.path.exists(library):
    subprocess.run(["tfm-compile", source, "--target=cuda", "--gpu-arch=sm_90a",
                    "--gpu-matmul-persistent", "-o", library], check=True)
functions = runtime.Library(library)

rng = np.random.default_rng(0)


def bf16(*shape):
    return runtime.to_bf16(rng.standard_normal(shape).astype(np.float32))


x = bf16(1, 1000, 192)
weights = {"wide": bf16(1024, 192), "narrow": bf16(256, 192)}
for name, w in weights.items():
    for call in (1, 2):
        print(f"{name}: call {call}", file=sys.stderr, flush=True)
        functions[name](x, w)
print("chain", file=sys.stderr, flush=True)
functions["chain"](x, weights["wide"], bf16(256, 1024))
