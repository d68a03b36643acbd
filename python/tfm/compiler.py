"""Compiles tfm MLIR or a model description into a shared library.

Everything goes through the `tfm-compile` driver: the pipeline lives in C++,
this module only runs the tool and reports the exact command that failed.
"""

import json
import os
import pathlib
import subprocess
import tempfile


def _tfm_compile():
    build = os.environ.get("TFM_BUILD_DIR")
    root = pathlib.Path(build) if build else pathlib.Path(__file__).resolve().parents[2] / "build"
    return root / "bin" / "tfm-compile"


class CompileError(RuntimeError):
    pass


def _run(command, stdin=None):
    result = subprocess.run(command, input=stdin, capture_output=True, text=True)
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
