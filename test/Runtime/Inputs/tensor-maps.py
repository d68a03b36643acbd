"""Calls a projection and an attention compiled with their tiles loaded by
TMA (argv[1]: a work directory) twice each, on the fake driver
(fake-cuda-driver.c), which prints the tensor maps the runtime encodes:
those of the first call, none of the second (the runtime keeps them);
then the projection on rows 2 bytes past a 16-byte boundary, which the
runtime refuses with a clear error."""

import os
import subprocess
import sys

import numpy as np

from tfm import runtime

work = sys.argv[1]
inputs = os.path.join(os.path.dirname(__file__), "..", "..", "Tools", "Inputs")
projection = os.path.join(work, "projection.mlir")
with open(projection, "w") as f:
    f.write("""
func.func @projection(%x: tensor<1x300x192xbf16>, %w: tensor<320x192xbf16>)
    -> tensor<1x300x320xbf16> {
  %y = tfm.linear %x, %w
      : (tensor<1x300x192xbf16>, tensor<320x192xbf16>) -> tensor<1x300x320xbf16>
  return %y : tensor<1x300x320xbf16>
}
""")
rng = np.random.default_rng(0)


def bf16(*shape):
    return runtime.to_bf16(rng.standard_normal(shape).astype(np.float32))


cases = [
    (projection, "--gpu-matmul-tma", "projection",
     [bf16(1, 300, 192), bf16(320, 192)]),
    (os.path.join(inputs, "bf16-attention.mlir"), "--gpu-attention-tma",
     "attention", [bf16(1, 8, 100, 128), bf16(1, 2, 100, 128),
                   bf16(1, 2, 100, 128)]),
]
for source, flag, name, arrays in cases:
    library = os.path.join(work, name + ".so")
    subprocess.run(["tfm-compile", source, "--target=cuda",
                    "--gpu-arch=sm_90a", flag, "-o", library], check=True)
    entry = runtime.Library(library)[name]
    for call in (1, 2):
        print(f"{name}: call {call}", file=sys.stderr, flush=True)
        entry(*arrays)

# The projection's rows 2 bytes past a 16-byte boundary: no tensor map
# (the driver would refuse it), and a clear error.
library = runtime.Library(os.path.join(work, "projection.so"))
raw = runtime.DeviceArray((300 * 192 + 8,), "bf16")
shifted = runtime.DeviceArray.wrap(raw.pointer + 2, (1, 300, 192), "bf16", raw)
try:
    library["projection"](shifted, runtime.DeviceArray.from_numpy(bf16(320, 192)))
    print("projection: unaligned call ran", file=sys.stderr)
except RuntimeError as error:
    print(f"projection: unaligned call: {error}", file=sys.stderr)
