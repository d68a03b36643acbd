"""Calls a chain compiled for --target=cuda (argv[1]: a work directory) on
the fake driver (fake-cuda-driver.c, with FAKE_CUDA_PRINT_LAUNCHES and
FAKE_CUDA_PRINT_MEMORY set): an embedding of 64 ids, whose range the call
checks on the device, and three [256, 256] projections in a row, f32;
called twice on device arrays; a failure on the device is printed. With
argv[2] "big-array", then a call on the host arrays (copied into device
memory around the call) and a 4 MiB device array. With "threads", then a call on each of two
threads in turn."""

import os
import subprocess
import sys
import threading
import time

import numpy as np

from tfm import runtime

work = sys.argv[1]
source = os.path.join(work, "chain.mlir")
with open(source, "w") as f:
    f.write("""
func.func @chain(%ids: tensor<1x64xi32>, %table: tensor<1000x256xf32>,
                 %w1: tensor<256x256xf32>, %w2: tensor<256x256xf32>,
                 %w3: tensor<256x256xf32>) -> tensor<1x64x256xf32> {
  %x = tfm.embedding %ids, %table
      : (tensor<1x64xi32>, tensor<1000x256xf32>) -> tensor<1x64x256xf32>
  %y1 = tfm.linear %x, %w1
      : (tensor<1x64x256xf32>, tensor<256x256xf32>) -> tensor<1x64x256xf32>
  %y2 = tfm.linear %y1, %w2
      : (tensor<1x64x256xf32>, tensor<256x256xf32>) -> tensor<1x64x256xf32>
  %y3 = tfm.linear %y2, %w3
      : (tensor<1x64x256xf32>, tensor<256x256xf32>) -> tensor<1x64x256xf32>
  return %y3 : tensor<1x64x256xf32>
}
""")
library = os.path.join(work, "chain.so")
if not os.path.exists(library):
    subprocess.run(["tfm-compile", source, "--target=cuda", "-o", library],
                   check=True)
functions = runtime.Library(library)

rng = np.random.default_rng(0)
arguments = [rng.integers(0, 1000, (1, 64), dtype=np.int32),
             rng.standard_normal((1000, 256), dtype=np.float32)]
arguments += [rng.standard_normal((256, 256), dtype=np.float32)
              for _ in range(3)]
# Uploaded once, so that the call's own allocations stand apart.
device = [runtime.DeviceArray.from_numpy(a) for a in arguments]
for call in (1, 2):
    print(f"call {call}", file=sys.stderr, flush=True)
    try:
        functions["chain"](*device)
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
if len(sys.argv) > 2 and sys.argv[2] == "threads":
    for thread in (1, 2):
        print(f"thread {thread}", file=sys.stderr, flush=True)
        worker = threading.Thread(target=functions["chain"], args=device)
        worker.start()
        worker.join()
        # join returns before the system thread has ended (and run its
        # thread-local destructors): wait until it is gone.
        while os.path.exists(f"/proc/self/task/{worker.native_id}"):
            time.sleep(0.01)
if len(sys.argv) > 2 and sys.argv[2] == "big-array":
    print("host arrays", file=sys.stderr, flush=True)
    try:
        functions["chain"](*arguments)
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
    print("device array", file=sys.stderr, flush=True)
    try:
        runtime.DeviceArray((1 << 20,), "f32")
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
print("done", file=sys.stderr, flush=True)
