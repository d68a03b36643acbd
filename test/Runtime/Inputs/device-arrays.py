"""Device arrays where there is no GPU: allocating one fails with the
runtime's message, and a cpu library (compiled to argv[1]) refuses one (a
DeviceArray wrapping an address it must never read). Kernel times: none
for a cpu library's calls, none before a cuda library's (compiled to
argv[2]) first call."""

import os
import subprocess
import sys

import numpy as np

from tfm import runtime

try:
    runtime.DeviceArray((2, 3), "f32")
except RuntimeError as error:
    print(f"RuntimeError: {error}")

cpu_library, cuda_library = sys.argv[1:3]
source = os.path.join(os.path.dirname(__file__), "..", "..", "Tools", "Inputs",
                      "multiply-add.mlir")
subprocess.run(["tfm-compile", source, "-o", cpu_library], check=True)
subprocess.run(["tfm-compile", source, "--target=cuda", "-o", cuda_library],
               check=True)
entry = runtime.Library(cpu_library)["multiply_add"]
a = runtime.DeviceArray.wrap(0x1000, (64,), "f32", owner=None)
host = np.ones(64, np.float32)
try:
    entry(a, host, host)
except RuntimeError as error:
    print(f"RuntimeError: {error}")

# A cpu library's calls have no kernel time apart.
bound = entry.bind(host, host, host)
bound()
try:
    bound.kernel_seconds
except RuntimeError as error:
    print(f"RuntimeError: {error}")

bound = runtime.Library(cuda_library)["multiply_add"].bind(host, host, host)
try:
    bound.kernel_seconds
except RuntimeError as error:
    print(f"RuntimeError: {error}")
