"""Compiles tfm MLIR or a model description into a shared library.

Everything goes through the `tfm-compile` driver: the pipeline lives in C++,
this module only runs the tool and reports the exact command that failed.
"""

import json
import os
import pathlib
import subprocess
import tempfile

from . import _locate


class CompileError(RuntimeError):
    pass


def _tfm_compile():
    """The tfm-compile to run: $TFM_COMPILE, else $TFM_BUILD_DIR/bin, else
    the one `cmake --install` put beside this package, else build/ of the
    source checkout this package is in, else the first on PATH."""
    tool, candidates = _locate.locate("TFM_COMPILE", "bin/tfm-compile", "BIN_DIR",
                                      lambda path: os.access(path, os.X_OK),
                                      on_path="tfm-compile")
    if tool is None:
        raise CompileError("cannot find tfm-compile: set TFM_COMPILE to its path "
                           "or TFM_BUILD_DIR to a build directory, or put it on "
                           "PATH (looked at: " + ", ".join(map(str, candidates)) + ")")
    return tool


def _run(command, stdin=None):
    try:
        result = subprocess.run(command, input=stdin, capture_output=True, text=True)
    except OSError as error:  # e.g. $TFM_COMPILE names no program
        raise CompileError(f"cannot run {command[0]}: {error}") from None
    if result.returncode != 0:
        raise CompileError(
            "command failed: " + " ".join(map(str, command)) + "\n" + result.stderr)
    return result.stdout


def _compile(source_path, output, header, cpu, features, flags):
    command = [str(_tfm_compile()), str(source_path), "-o", str(output), *flags]
    if header:
        command.append(f"--header={header}")
    if cpu:
        command.append(f"--mcpu={cpu}")
    if features:
        command.append(f"--mattr={features}")
    _run(command)
    return pathlib.Path(output)


def compile_mlir(source, output, *, header=None, cpu=None, features=None, flags=()):
    """Compiles tfm MLIR text `source` into the shared library `output`;
    `flags` are extra tfm-compile options (e.g. "--reference-attention")."""
    with tempfile.TemporaryDirectory() as workdir:
        path = pathlib.Path(workdir) / "input.mlir"
        path.write_text(source)
        return _compile(path, output, header, cpu, features, flags)


def compile_model(description, output, *, header=None, cpu=None, features=None,
                  flags=()):
    """Compiles a model description (a dict in the schema of
    docs/ModelDescription.md, or the path of its JSON file)."""
    if isinstance(description, (str, os.PathLike)):
        return _compile(description, output, header, cpu, features, flags)
    with tempfile.TemporaryDirectory() as workdir:
        path = pathlib.Path(workdir) / "model.json"
        path.write_text(json.dumps(description))
        return _compile(path, output, header, cpu, features, flags)
