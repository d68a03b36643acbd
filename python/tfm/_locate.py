"""Where the package finds its native parts (tfm-compile, libtfm_runtime.so):
one search order for both."""

import os
import pathlib
import shutil


def locate(variable, in_build, installed, usable, on_path=None):
    """(path, candidates): $`variable` when set (used as it is), else
    $TFM_BUILD_DIR/`in_build`, else the directory `cmake --install` recorded
    in `_installed` (attribute `installed`), else build/`in_build` of the
    source checkout this package is in, else `on_path` found on PATH; the
    first candidate `usable(path)` accepts. `path` is None when none is."""
    if os.environ.get(variable):
        return pathlib.Path(os.environ[variable]), []
    relative = pathlib.Path(in_build)
    if os.environ.get("TFM_BUILD_DIR"):
        return pathlib.Path(os.environ["TFM_BUILD_DIR"]) / relative, []
    candidates = []
    try:
        from . import _installed
        candidates.append(pathlib.Path(getattr(_installed, installed)) / relative.name)
    except (ImportError, AttributeError):  # not installed by cmake: a checkout or pip
        pass
    candidates.append(pathlib.Path(__file__).resolve().parents[2] / "build" / relative)
    if on_path and shutil.which(on_path):
        candidates.append(pathlib.Path(shutil.which(on_path)))
    for candidate in candidates:
        if usable(candidate):
            return candidate, candidates
    return None, candidates
