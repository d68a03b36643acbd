"""Compiles tfm MLIR into a shared library with the project's tools.

The pipeline itself lives in C++ (`tfm-lower-to-llvm-pipeline`): this module
only runs the tools, in order, and reports the exact command that failed.
"""

import os
import pathlib
import subprocess

LLVM_BIN = pathlib.Path("/usr/lib/llvm-22/bin")


def _tfm_tools():
    build = os.environ.get("TFM_BUILD_DIR")
    if build:
        return pathlib.Path(build) / "bin"
    return pathlib.Path(__file__).resolve().parents[2] / "build" / "bin"


class CompileError(RuntimeError):
    pass


def _run(command, stdin=None):
    result = subprocess.run(command, input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(
            "command failed: " + " ".join(map(str, command)) + "\n" + result.stderr
        )
    return result.stdout


def compile_mlir(source, output, *, opt_level=2):
    """Lowers tfm MLIR text `source` and links it into shared library `output`."""
    output = pathlib.Path(output)
    llvm_dialect = _run(
        [str(_tfm_tools() / "tfm-opt"), "-", "--tfm-lower-to-llvm-pipeline"], stdin=source
    )
    llvm_ir = output.with_suffix(".ll")
    _run([str(LLVM_BIN / "mlir-translate"), "--mlir-to-llvmir", "-", "-o", str(llvm_ir)],
         stdin=llvm_dialect)
    _run([str(LLVM_BIN / "clang"), f"-O{opt_level}", "-shared", "-fPIC",
          "-Wno-override-module", str(llvm_ir), "-o", str(output), "-lm"])
    return output
