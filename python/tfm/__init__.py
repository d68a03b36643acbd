"""tfm: describe transformer layers, compile them with the tfm compiler and
call the result with NumPy arrays.

- `tfm.reference`: float64 NumPy implementations of every tfm op, the oracle
  of the end-to-end tests.
- `tfm.compiler`: compile tfm MLIR into a shared library with the project's
  tools.
- `tfm.runtime`: load a compiled library and call its entry points with
  NumPy arrays through the MLIR C interface (ctypes).
"""

from . import compiler, reference, runtime

__all__ = ["compiler", "reference", "runtime"]
