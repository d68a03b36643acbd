"""tfm: describe transformer layers, compile them with the tfm compiler and
call the result with NumPy arrays.

- `tfm.reference`: float64 NumPy implementations of every tfm op, the oracle
  of the end-to-end tests.
- `tfm.compiler`: compile tfm MLIR or a model description (a dict in the
  schema of docs/ModelDescription.md) into a shared library with
  `tfm-compile`.
- `tfm.runtime`: load a compiled library and call its entry points with
  NumPy arrays through the MLIR C interface (ctypes).
- `tfm.safetensors`: read and write .safetensors checkpoints.
- `tfm.generation`: generate tokens with a compiled model's prefill and
  decode entry points (KV caches updated in place), greedy or sampled.
"""

# The one definition of tfm's version: CMakeLists.txt reads it for the tools
# (--version) and pyproject.toml for the package.
__version__ = "0.1.0"

from . import compiler, generation, reference, runtime, safetensors

__all__ = ["compiler", "generation", "reference", "runtime", "safetensors",
           "__version__"]
