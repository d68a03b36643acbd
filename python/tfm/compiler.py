"""Compiles tfm MLIR or a model description into a shared library.

Everything goes through the `tfm-compile` driver: the pipeline lives in C++,
this module only runs the tool and reports the exact command that failed.
"""

import json
import os
import pathlib
import shutil
import subprocess
import tempfile


class CompileError(RuntimeError):
    pass


def _tfm_compile():
    """The tfm-compile to run: $TFM_COMPILE, else $TFM_BUILD_DIR/bin, else
    the one `cmake --install` put beside this package, else build/ of the
    source checkout this package is in, else the first on PATH."""
    if os.environ.get("TFM_COMPILE"):
        return pathlib.Path(os.environ["TFM_COMPILE"])
    if os.environ.get("TFM_BUILD_DIR"):
        return pathlib.Path(os.environ["TFM_BUILD_DIR"]) / "bin" / "tfm-compile"
    candidates = []
    try:
        from ._installed import BIN_DIR
        candidates.append(pathlib.Path(BIN_DIR) / "tfm-compile")
    except ImportError:  # not installed by cmake: a checkout or pip
        pass
    candidates.append(pathlib.Path(__file__).resolve().parents[2] / "build" / "bin" / "tfm-compile")
    on_path = shutil.which("tfm-compile")
    if on_path:
        candidates.append(pathlib.Path(on_path))
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return candidate
    raise CompileError("cannot find tfm-compile: set TFM_COMPILE to its path "
                       "or TFM_BUILD_DIR to a build directory, or put it on "
                       "PATH (looked at: " + ", ".join(map(str, candidates)) + ")")


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
