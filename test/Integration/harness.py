"""End-to-end test harness: compiles tfm functions, runs them on random
inputs and compares with the float64 reference.

A test script adds cases to a `Suite`; `Suite.run()` compiles every case's
function into one shared library (tfm-compile with the script's flags),
calls each, prints one line per case with its error, and exits non-zero if
any case exceeds its tolerance. Error is max-norm relative:
max|out - ref| / max|ref|.

TFM_HARNESS=prepare stops after compiling and saves, beside the library, a
fingerprint of each case's inputs; TFM_HARNESS=check runs such a prepared
work directory without compiling, on a machine that has no compiler
(scripts/gpu-tests.sh: built here, run on a GPU machine). The inputs and
references come from the script's fixed seeds on both machines, so only the
library travels; the fingerprints make sure both machines drew the same
inputs.
"""

import json
import os
import pathlib
import sys

import numpy as np

from tfm import compiler, runtime

# Stated tolerances (max-norm relative error against float64).
TOLERANCE = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2, "i1": 0.0}

_NUMPY = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64,
          "i1": np.bool_}


def expect(error_type, fragment, function):
    """Calls `function` and checks that it raises `error_type` with a
    message containing `fragment` (tests of error paths)."""
    try:
        function()
    except error_type as error:
        assert fragment in str(error), (fragment, str(error))
        print(f"PASS {error_type.__name__}: {error}".splitlines()[0])
        return
    raise AssertionError(f"no {error_type.__name__} ({fragment})")


def tensor(shape, element):
    """MLIR tensor type text; `None` in `shape` is a dynamic dim."""
    dims = "".join(("?" if d is None else str(d)) + "x" for d in shape)
    return f"tensor<{dims}{element}>"


def to_device(array, element):
    """A NumPy array in the layout an entry point expects for `element`."""
    if element == "bf16":
        return runtime.to_bf16(array)
    return np.ascontiguousarray(np.asarray(array).astype(_NUMPY[element]))


def from_device(array, element):
    if element == "bf16":
        return runtime.from_bf16(array).astype(np.float64)
    return np.asarray(array, dtype=np.float64)


def rounded(array, element):
    """What the compiled code actually receives, as float64 (inputs rounded
    to `element` before the reference sees them)."""
    return from_device(to_device(array, element), element)


class Suite:
    """`flags`: extra tfm-compile options, from the command line after the
    work directory (e.g. --reference-attention, --tile-size-q=4); checking a
    prepared work directory, those it was prepared with (references may
    depend on them)."""

    def __init__(self, workdir, flags=None):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        if flags is None and os.environ.get("TFM_HARNESS") == "check":
            flags = self._prepared()["flags"]
        self.flags = list(sys.argv[2:] if flags is None else flags)
        self.cases = []

    def add(self, name, function, inputs, expected, element, *, entry=None,
            tolerance=None):
        """Calls entry point `entry` (default `name`) on `inputs`, a list of
        (array, element type) in argument order, and compares with the
        float64 `expected`; `element` is the result's element type.
        `function` is the MLIR text defining the entry point, or None when an
        earlier case defined it (dynamic shapes called at several sizes)."""
        self.cases.append((name, entry or name, function or "", inputs,
                           np.asarray(expected), element,
                           tolerance or TOLERANCE[element]))

    def add_op(self, name, op, inputs, result_shape, element, expected, *,
               tolerance=None, types=None, functional=True):
        """A one-op case: `op` is the op's text up to its type, naming the
        arguments %a0, %a1, ...; `inputs` are (array, element type) pairs;
        `types` overrides argument types (for dynamic dims); `functional` is
        False for ops printed `operand-type -> result-type`."""
        types = types or [tensor(np.shape(a), e) for a, e in inputs]
        result = tensor(result_shape, element)
        args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
        if functional:
            signature = f"({', '.join(types)}) -> {result}"
        else:  # `operand-type -> result-type`, or just the result type
            signature = " -> ".join(types + [result])
        function = (f"func.func @{name}({args}) -> {result} {{\n"
                    f"  %r = {op} : {signature}\n"
                    f"  return %r : {result}\n}}")
        self.add(name, function, inputs, expected, element, tolerance=tolerance)

    def run(self):
        mode = os.environ.get("TFM_HARNESS", "run")
        if mode not in ("run", "prepare", "check"):
            sys.exit(f"TFM_HARNESS must be run, prepare or check, not {mode}")
        library_path = self.workdir / "suite.so"
        cases = [(name, entry, [to_device(a, e) for a, e in inputs],
                  expected, element, tolerance)
                 for name, entry, _, inputs, expected, element, tolerance
                 in self.cases]
        if mode == "check":
            self._check_prepared(cases)
        else:
            source = "\n".join(case[2] for case in self.cases)
            compiler.compile_mlir(source, library_path, flags=self.flags)
            if os.environ.get("TFM_EMULATE_GPU") and "--target=cuda" in self.flags:
                kernels = self.workdir / "suite.kernels.so"
                compiler.compile_mlir(source, kernels, flags=[
                    *self.flags, "--emit=emulated-kernels"])
                os.environ["FAKE_CUDA_KERNELS"] = str(kernels)
        if mode == "prepare":
            (self.workdir / "cases.json").write_text(json.dumps({
                "flags": self.flags,
                "cases": [{"name": name,
                           "fingerprints": [_fingerprint(a) for a in arguments]}
                          for name, _, arguments, *_ in cases]}))
            print(f"prepared {len(cases)} cases in {self.workdir}")
            return
        library = runtime.Library(library_path)
        failures = 0
        for name, entry, arguments, expected, element, tolerance in cases:
            output = to_device(np.zeros(expected.shape), element)
            status = library.call(entry, arguments, [output])
            assert status == 0, f"{name}: runtime check {status} failed"
            actual = from_device(output, element)
            scale = max(np.abs(expected).max(initial=0.0), 1e-30)
            error = np.abs(actual - expected).max(initial=0.0) / scale
            ok = np.isfinite(actual).all() and error <= tolerance
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} {name}: error {error:.2e} "
                  f"(tolerance {tolerance:.0e})")
        print(f"{len(cases) - failures} of {len(cases)} cases passed "
              f"(tfm-compile {' '.join(self.flags) or 'defaults'})")
        sys.exit(1 if failures else 0)

    def _check_prepared(self, cases):
        """Exits unless `cases` are those the work directory was prepared
        with: the same names and, within rounding, the same inputs."""
        prepared = self._prepared()["cases"]
        if [case["name"] for case in prepared] != [case[0] for case in cases]:
            sys.exit(f"{self.workdir}: prepared for other cases; prepare it "
                     "again from this checkout")
        for case, (name, _, arguments, *_) in zip(prepared, cases):
            for saved, argument in zip(case["fingerprints"], arguments):
                now = _fingerprint(argument)
                if (saved[:2] != now[:2] or
                        not np.allclose(saved[2:], now[2:], rtol=1e-6, atol=1e-12,
                                    equal_nan=True)):
                    sys.exit(f"{name}: inputs differ from the prepared ones "
                             f"({saved} there, {now} here): NumPy draws other "
                             "random numbers on this machine")


    def _prepared(self):
        """What TFM_HARNESS=prepare saved in the work directory."""
        path = self.workdir / "cases.json"
        if not path.exists():
            sys.exit(f"{self.workdir}: not prepared (no cases.json); run the "
                     "script with TFM_HARNESS=prepare first")
        prepared = json.loads(path.read_text())
        if not isinstance(prepared, dict):
            sys.exit(f"{self.workdir}: prepared by an older checkout; prepare "
                     "it again from this checkout")
        return prepared


def _fingerprint(array):
    """Shape, dtype and the float64 sums of the values and of their
    magnitudes (bf16 arrays are their bits): equal inputs give equal
    fingerprints up to rounding."""
    values = np.asarray(array).astype(np.float64)
    return [list(np.shape(array)), str(np.asarray(array).dtype),
            float(values.sum()), float(np.abs(values).sum())]
