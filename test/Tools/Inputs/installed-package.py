"""Checks the Python package that `cmake --install` put under the prefix
argv[1]: it is the one imported, its version is the tools', it compiles and
runs a model with the installed tfm-compile and runtime library on its own, and raises its own
CompileError when it cannot find one."""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import tfm
from tfm import compiler, runtime

prefix = pathlib.Path(sys.argv[1]).resolve()
assert pathlib.Path(tfm.__file__).resolve().is_relative_to(prefix), tfm.__file__
assert "TFM_BUILD_DIR" not in os.environ and "TFM_COMPILE" not in os.environ
tool = compiler._tfm_compile()
assert tool == prefix / "bin" / "tfm-compile", tool
assert runtime._runtime_path() == prefix / "lib" / "libtfm_runtime.so", runtime._runtime_path()
version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
assert f"(tfm {tfm.__version__}, LLVM " in version, (version, tfm.__version__)
print(f"version {tfm.__version__}")

with tempfile.TemporaryDirectory() as work:
    config = {"vocab_size": 30, "d_model": 16, "num_layers": 1, "num_heads": 2,
              "d_ff": 24}
    library = runtime.Library(compiler.compile_model(
        config, pathlib.Path(work) / "model.so"))
    params = library.prepare({s["name"]: np.full(s["shape"], 0.1, np.float32)
                              for s in library.given_inputs("forward")[2:]})
    ids = np.array([[1, 2, 3]], np.int32)
    assert library["forward"](input_ids=ids, position_ids=ids, **params).shape == (1, 3, 30)
    print("compiled and ran a model with the installed tfm-compile")

    # Without the install record and with nothing on PATH: CompileError.
    bare = pathlib.Path(work) / "bare"
    shutil.copytree(pathlib.Path(tfm.__file__).parent, bare / "tfm")
    (bare / "tfm" / "_installed.py").unlink()
    script = ("from tfm import compiler\n"
              "try:\n    compiler.compile_model({}, 'x.so')\n"
              "except compiler.CompileError as error:\n    print('CompileError:', error)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={"PYTHONPATH": str(bare), "PATH": "/nonexistent"})
    print(result.stdout.strip(), result.stderr.strip())
