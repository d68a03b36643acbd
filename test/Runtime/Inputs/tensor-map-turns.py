"""Calls a projection whose tiles are loaded by TMA with 9000 query lengths
(argv[1]: a work directory), on the fake driver (fake-cuda-driver.c, with
FAKE_CUDA_COUNT_MAPS set): each length is a new tensor map of the
activations, so the runtime's map cache (at most 4096 maps) turns twice.
A turn retires the maps it holds, to be freed at the next turn, so one
handed out just before a turn is still valid when its kernel launches."""

import os
import subprocess
import sys

import numpy as np

from tfm import runtime

work = sys.argv[1]
projection = os.path.join(work, "turns.mlir")
with open(projection, "w") as f:
    f.write("""
func.func @projection(%x: tensor<1x?x64xbf16>, %w: tensor<128x64xbf16>)
    -> tensor<1x?x128xbf16> {
  %y = tfm.linear %x, %w
      : (tensor<1x?x64xbf16>, tensor<128x64xbf16>) -> tensor<1x?x128xbf16>
  return %y : tensor<1x?x128xbf16>
}
""")
library = os.path.join(work, "turns.so")
subprocess.run(["tfm-compile", projection, "--target=cuda", "--gpu-arch=sm_90a",
                "--gpu-matmul-tma", "--gpu-few-rows=0", "-o", library],
               check=True)
entry = runtime.Library(library)["projection"]

rng = np.random.default_rng(0)
lengths = range(1, 9001)
x = runtime.DeviceArray.from_numpy(
    runtime.to_bf16(rng.standard_normal((1, lengths[-1], 64))))
w = runtime.DeviceArray.from_numpy(runtime.to_bf16(rng.standard_normal((128, 64))))
for length in lengths:
    # The first `length` rows of x: the same address, a new shape.
    entry(runtime.DeviceArray.wrap(x.pointer, (1, length, 64), "bf16", x), w)
print(f"{len(lengths)} calls", file=sys.stderr, flush=True)
