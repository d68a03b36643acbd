"""Attention benchmark: tfm's tiled and reference lowerings of tfm.attention
against a naive OpenBLAS attention (bench/baselines.c), next to the machine's
sgemm rate and STREAM triad bandwidth. Run through bench/run.sh
(bench/README.md describes the flags and columns).

Every measurement runs in its own subprocess so that its peak RSS is its own:
`attention.py worker IMPL DIR CASE MIN_REPS MIN_TIME SLOW` times one compiled
library, like `baselines attention` times the naive one.
"""

import argparse
import dataclasses
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np

from tfm import compiler, runtime

BENCH = pathlib.Path(__file__).resolve().parent
IMPLS = ("naive", "tiled", "reference")
# --compare-with: the tiled lowering of another tfm-compile (an earlier build).
BEFORE = "before"
TOLERANCE = 1e-4  # max-norm relative error of tfm against the naive output


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    batch: int
    q_heads: int
    kv_heads: int
    q_len: int
    kv_len: int
    dim: int
    causal: bool
    # Implementations skipped unless --all, with the reason.
    slow: tuple = ()

    @property
    def q_shape(self):
        return (self.batch, self.q_heads, self.q_len, self.dim)

    @property
    def kv_shape(self):
        return (self.batch, self.kv_heads, self.kv_len, self.dim)

    @property
    def flops(self):
        """4·B·Hq·D per visible (query, key) pair: QKᵀ and PV, 2 each."""
        if self.causal:  # key j visible to query i iff j <= i + Skv - Sq
            rows = np.arange(self.q_len) + self.kv_len - self.q_len + 1
            pairs = int(np.clip(rows, 0, self.kv_len).sum())
        else:
            pairs = self.q_len * self.kv_len
        return 4 * self.batch * self.q_heads * self.dim * pairs

    @property
    def kv_bytes(self):
        """Bytes of K and V, each read once by an ideal decode step."""
        return 2 * self.batch * self.kv_heads * self.kv_len * self.dim * 4

    @property
    def decode(self):
        return self.q_len == 1

    def mlir(self):
        """The benchmarked function: one tfm.attention, entry point @attn."""
        def tensor(shape):
            return "tensor<" + "x".join(map(str, shape)) + "xf32>"
        q, kv = tensor(self.q_shape), tensor(self.kv_shape)
        attrs = " {mask = #tfm.mask<causal>}" if self.causal else ""
        return (f"func.func @attn(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
                f"  %o = tfm.attention %q, %k, %v{attrs}\n"
                f"      : ({q}, {kv}, {kv}) -> {q}\n"
                f"  return %o : {q}\n}}\n")


def _cases():
    cases = []
    for s in (512, 1024, 2048, 4096):
        for causal in (True, False):
            cases.append(Case(f"prefill_s{s}_{'causal' if causal else 'nomask'}",
                              1, 32, 8, s, s, 128, causal))
    for kv_len in (4096, 32768):
        cases.append(Case(f"decode_kv{kv_len}", 1, 32, 8, 1, kv_len, 128, False))
    # MQA decode: one kv head, where only split-KV gives the threads work.
    cases.append(Case("decode_mqa_kv32768", 1, 8, 1, 1, 32768, 128, False))
    cases.append(Case("onehead_s32768_causal", 1, 1, 1, 32768, 32768, 64, True,
                      slow=(("reference", "its 8 GiB of untiled scores take "
                             "~150 s per call on 2 EPYC cores; --all runs it"),)))
    return {case.name: case for case in cases}


CASES = _cases()


def measure(call, min_reps, min_time, slow):
    """Seconds of `call()` (which returns a status, 0 = ok): a warm-up call,
    then at least `min_reps` calls and `min_time` seconds, or one call when
    the warm-up took over `slow` seconds. Returns (median, reps, warm-up)."""
    start = time.perf_counter()
    assert call() == 0, "runtime check failed"
    warm = time.perf_counter() - start
    if warm > slow:
        min_reps, min_time = 1, 0.0
    times = []
    while len(times) < min_reps or sum(times) < min_time:
        start = time.perf_counter()
        status = call()
        times.append(time.perf_counter() - start)
        assert status == 0, "runtime check failed"
    return float(np.median(times)), len(times), warm


def status_kib(field):
    """A "VmRSS" or "VmHWM" (peak) line of /proc/self/status, in KiB. Unlike
    getrusage's ru_maxrss, VmHWM excludes the parent's RSS at fork."""
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def worker(impl, directory, case, min_reps, min_time, slow):
    """Times `directory/IMPL.so` on the inputs there; prints a result line."""
    library = runtime.Library(directory / f"{impl}.so")
    arrays = [np.fromfile(directory / "q.f32", np.float32).reshape(case.q_shape),
              np.fromfile(directory / "k.f32", np.float32).reshape(case.kv_shape),
              np.fromfile(directory / "v.f32", np.float32).reshape(case.kv_shape),
              np.full(case.q_shape, np.nan, np.float32)]
    base = status_kib("VmRSS")
    # Bound once, checked once: each timed call only runs the entry point.
    bound = library["attn"].bind(*arrays[:3], out=[arrays[3]])

    def call():
        bound()
        return 0

    seconds, reps, warm = measure(call, min_reps, min_time, slow)
    peak = status_kib("VmHWM")
    output, error = arrays[-1], "-"  # no naive output to compare with
    naive = directory / "naive.f32"
    if not np.isfinite(output).all():
        error = "inf"
    elif naive.exists():
        expected = np.fromfile(naive, np.float32).reshape(case.q_shape)
        error = f"{np.abs(output - expected).max() / np.abs(expected).max():.2e}"
    print(f"attention seconds={seconds:.9f} reps={reps} warm_seconds={warm:.6f} "
          f"rss_base_kib={base} rss_peak_kib={peak} error={error}")


def machine():
    """The header line naming the CPU and its load."""
    model = next((line.split(":", 1)[1].strip() for line in subprocess.run(
        ["lscpu"], capture_output=True, text=True).stdout.splitlines()
        if line.startswith("Model name")), "?")
    return (f"machine: {model}, {os.cpu_count()} cpus, load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def add_compare_arguments(parser, what):
    """--compare-with TFM_COMPILE (`what` it builds is timed as impl
    'before') and --interleave (both in one process, call by call)."""
    parser.add_argument("--compare-with", metavar="TFM_COMPILE",
                        help=f"also time {what} this tfm-compile builds "
                        "(e.g. a build of an earlier commit) as impl 'before'")
    parser.add_argument("--interleave", action="store_true",
                        help="with --compare-with: time 'before' and tfm in one "
                        "process, call by call, instead of one after the other")


def parse(line):
    """The key=value fields of a result line."""
    return dict(field.split("=", 1) for field in line.split()[1:])


# OpenBLAS cores with AVX-512 kernels, and with AVX2 kernels.
AVX512_CORES = {"SkylakeX", "Cooperlake", "SapphireRapids"}
AVX2_CORES = {"Haswell", "Zen"} | AVX512_CORES


def cpu_flags():
    """The flags of the first CPU in /proc/cpuinfo."""
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


class Runner:
    """Runs the subprocesses of one benchmark run."""

    def __init__(self, args):
        self.args = args
        self.baselines = BENCH / ".build" / "baselines"
        self.env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
                        OPENBLAS_NUM_THREADS=str(args.threads))
        # OPENBLAS_CORETYPE=Haswell would pin OpenBLAS to AVX2 kernels.
        self.env.pop("OPENBLAS_CORETYPE", None)
        self.openblas = self.choose_openblas_core()
        if args.quick:
            self.policy = ["1", "0.1", "2"]
        else:
            self.policy = ["3", "1.0", "10"]

    def choose_openblas_core(self):
        """Says which kernels OpenBLAS runs, and sets OPENBLAS_CORETYPE for
        every baseline (sgemm, the naive attention, PyTorch) where OpenBLAS
        0.3.21 picks worse ones than the CPU has: it does not know recent
        Intel Xeons and falls back to Prescott (SSE3), a fifth of the sgemm
        rate of its AVX-512 kernels there."""
        found, why = self.run([self.baselines, "sgemm", 64, 1])
        assert found, why
        core, flags = found["core"], cpu_flags()
        better = None
        if "avx512f" in flags and core not in AVX512_CORES:
            better = "Cooperlake" if "avx512_bf16" in flags else "SkylakeX"
        elif "avx2" in flags and core not in AVX2_CORES:
            better = "Haswell"
        if not better:
            return f"OpenBLAS picks {core} kernels itself, OPENBLAS_CORETYPE unset"
        self.env["OPENBLAS_CORETYPE"] = better
        return (f"OpenBLAS picks {core} kernels on this CPU: "
                f"OPENBLAS_CORETYPE={better} for every OpenBLAS baseline")

    def run(self, command):
        """The result line of `command`, or (None, why it gave none)."""
        lines, why = self.run_all(command)
        return (lines[-1] if lines else None), why

    def run_all(self, command):
        """Every line `command` prints, parsed (its result lines), or (None,
        why it gave none)."""
        try:
            done = subprocess.run([str(c) for c in command], env=self.env,
                                  capture_output=True, text=True,
                                  timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            return None, f"skipped: over the {self.args.timeout} s timeout"
        if done.returncode < 0:
            return None, f"killed by signal {-done.returncode} (out of memory?)"
        if done.returncode != 0:
            return None, "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
        lines = [line for line in done.stdout.strip().splitlines()
                 if line.split()[1:] and all("=" in f for f in line.split()[1:])]
        if not lines:
            return None, "failed: printed no result"
        return [parse(line) for line in lines], None

    def sgemm(self):
        """The sgemm rate line (GFLOP/s)."""
        sgemm, why = self.run([self.baselines, "sgemm", 4096,
                               2 if self.args.quick else 7])
        assert sgemm, why
        return sgemm

    def fma(self):
        """The FMA peak line (GFLOP/s)."""
        fma, why = self.run([self.baselines, "fma", 10**8 if self.args.quick else 4 * 10**8,
                             3 if self.args.quick else 5])
        assert fma, why
        return fma

    def triad(self, reps=None):
        """The STREAM triad line (GB/s)."""
        reps = reps or (5 if self.args.quick else 20)
        triad, why = self.run([self.baselines, "triad", 256, reps])
        assert triad, why
        return triad

    def header(self, threads_use="OMP_NUM_THREADS for tfm, torch.set_num_threads "
               "and OPENBLAS_NUM_THREADS for PyTorch and sgemm"):
        """Prints the machine, the thread settings (`threads_use`: what the
        thread count sets), OpenBLAS's kernels and the tfm-compile in use;
        returns the tool and when it was built."""
        print(machine())
        print(f"threads: {self.args.threads} ({threads_use})")
        print(self.openblas)
        tool = compiler._tfm_compile()
        built = modified(tool)
        print(f"tfm-compile: {tool} (built {built})")
        return tool, built

    def rates(self, weights_per):
        """Measures and prints the machine's sgemm rate, FMA peak and
        triad (wGB/s: weight bytes read per `weights_per` / time); returns
        the three."""
        sgemm = self.sgemm()
        sgemm_rate = float(sgemm["gflops"])
        print(f"sgemm: {sgemm_rate:.1f} GFLOP/s (n={sgemm['n']}, OpenBLAS "
              f"{sgemm['core']} kernels, {sgemm['threads']} threads, median of "
              f"{sgemm['reps']})")
        peak = float(self.fma()["gflops"])
        print(f"FMA peak: {peak:.1f} GFLOP/s (f32 multiply-add chains on every thread)")
        triad = float(self.triad()["gbps"])
        print(f"STREAM triad: {triad:.1f} GB/s (wGB/s: weight bytes read per "
              f"{weights_per} / time)\n")
        return sgemm_rate, peak, triad

    def closing(self, sgemm_rate, tool, built):
        """The sgemm rate again, with warnings where the machine or the
        tool changed during the run."""
        again = float(self.sgemm()["gflops"])
        print(f"\nsgemm again: {again:.1f} GFLOP/s, load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if abs(again - sgemm_rate) > 0.1 * sgemm_rate:
            print("WARNING: the sgemm rate changed by over 10% during the run")
        if modified(tool) != built:
            print("WARNING: tfm-compile was rebuilt during the run")

    def case(self, case, impls):
        """{impl: result fields or the reason there are none} for one case."""
        directory = BENCH / ".build" / "data" / case.name
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        rng = np.random.default_rng(0)
        for name, shape in (("q", case.q_shape), ("k", case.kv_shape),
                            ("v", case.kv_shape)):
            rng.standard_normal(shape, dtype=np.float32).tofile(directory / f"{name}.f32")
        skipped = {} if self.args.all else dict(case.slow)
        results = {impl: "skipped: " + skipped[impl] if impl in skipped
                   else self.bracketed(case, impl, directory) for impl in impls}
        shutil.rmtree(directory)
        return results

    def bracketed(self, case, impl, directory):
        """`measure`, for decode between two triads: this VM's bandwidth
        drifts by a third within minutes, so a decode step is compared with
        the mean of the triads taken just before and after it."""
        if not case.decode:
            return self.measure(case, impl, directory)
        before = float(self.triad(5)["gbps"])
        result = self.measure(case, impl, directory)
        after = float(self.triad(5)["gbps"])
        if isinstance(result, dict):
            result["triad_gbps"] = (before + after) / 2
        return result

    def measure(self, case, impl, directory):
        """The result fields of `impl` on `case`, or why there are none."""
        if impl == "naive":
            command = [self.baselines, "attention", directory, case.batch,
                       case.q_heads, case.kv_heads, case.q_len, case.kv_len,
                       case.dim, int(case.causal), *self.policy]
        else:
            try:
                compile_library(case, impl, directory / f"{impl}.so",
                                self.args.compare_with)
            except compiler.CompileError as error:
                return "failed: " + str(error).splitlines()[0]
            command = [sys.executable, __file__, "worker", impl, directory,
                       case.name, *self.policy]
        result, why = self.run(command)
        return result or why


def compile_library(case, impl, output, before_tool=None):
    """Compiles `case` with tfm-compile (`before_tool` for the "before"
    impl), retrying while a rebuild replaces the tool (missing or busy)."""
    flags = ["--reference-attention"] if impl == "reference" else []
    for attempt in range(10):
        saved = os.environ.get("TFM_COMPILE")
        if impl == BEFORE:
            os.environ["TFM_COMPILE"] = str(before_tool)
        try:
            return compiler.compile_mlir(case.mlir(), output, flags=flags)
        except OSError:
            if attempt == 9:
                raise
            time.sleep(30)
        finally:
            if impl == BEFORE:
                os.environ.pop("TFM_COMPILE", None)
                if saved is not None:
                    os.environ["TFM_COMPILE"] = saved


def logits_error(got_path, want_path, tolerance):
    """max|got - want| / max|want| of two saved arrays, formatted, with
    WRONG past `tolerance`."""
    got, want = np.load(got_path), np.load(want_path)
    relative = np.abs(got - want).max() / np.abs(want).max()
    return f"{relative:.2e}" + ("" if relative <= tolerance else " WRONG")


def modified(path):
    """When `path` was last modified, or "missing"."""
    return time.ctime(path.stat().st_mtime) if path.exists() else "missing"


COLUMNS = [("case", 22), ("impl", 9), ("ms", 10), ("reps", 5), ("GFLOP/s", 8),
           ("%sgemm", 7), ("naive/x", 8), ("KV GB/s", 8), ("%triad", 7),
           ("triad", 6), ("RSS MiB", 8), ("+in/out", 8), ("error", 9)]


def row(values):
    return " ".join(str(v).rjust(w) if i > 1 else str(v).ljust(w)
                    for i, ((_, w), v) in enumerate(zip(COLUMNS, values)))


def report(case, impl, result, naive, sgemm, triad):
    """One table line; `naive` is the naive result of the same case or None.
    Decode results carry their own triad (`Runner.bracketed`)."""
    if isinstance(result, str):
        return row([case.name, impl]) + " " + result
    seconds = float(result["seconds"])
    gflops = case.flops / seconds / 1e9
    triad = float(result.get("triad_gbps", triad))
    base, peak = int(result["rss_base_kib"]), int(result["rss_peak_kib"])
    error = result.get("error", "-")
    if error != "-" and float(error) > TOLERANCE:
        error += " WRONG"
    values = [case.name, impl, f"{seconds * 1e3:.3f}", result["reps"],
              f"{gflops:.1f}", f"{100 * gflops / sgemm:.1f}",
              f"{float(naive['seconds']) / seconds:.2f}" if naive else "-",
              f"{case.kv_bytes / seconds / 1e9:.1f}" if case.decode else "-",
              f"{100 * case.kv_bytes / seconds / 1e9 / triad:.1f}" if case.decode else "-",
              f"{triad:.1f}" if case.decode else "-",
              f"{peak / 1024:.0f}", f"{(peak - base) / 1024:.0f}", error]
    return row(values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[],
                        help="run cases whose name contains this (repeatable)")
    parser.add_argument("--impls", default=",".join(IMPLS),
                        help=f"comma-separated subset of {','.join(IMPLS)}")
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--all", action="store_true",
                        help="also the measurements skipped as too slow")
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("BENCH_THREADS", os.cpu_count())),
                        help="threads (default $BENCH_THREADS, else the cpus)")
    parser.add_argument("--timeout", type=int, default=900,
                        help="seconds per measurement before it is skipped")
    parser.add_argument("--compare-with", metavar="TFM_COMPILE",
                        help="also time the tiled lowering of this tfm-compile "
                        "(e.g. a build of an earlier commit) as impl 'before'")
    args = parser.parse_args()
    impls = [i for i in IMPLS if i in args.impls.split(",")]
    if args.compare_with:
        impls.insert(impls.index("tiled") if "tiled" in impls else len(impls),
                     BEFORE)
    cases = [c for c in CASES.values()
             if not args.only or any(o in c.name for o in args.only)]
    runner = Runner(args)

    tool, built = runner.header("OMP_NUM_THREADS for tfm and the triad, "
                                "OPENBLAS_NUM_THREADS for naive and sgemm")
    if args.compare_with:
        print(f"before: {args.compare_with} (built "
              f"{modified(pathlib.Path(args.compare_with))})")
    sgemm, triad = runner.sgemm(), runner.triad()
    sgemm_rate, triad_rate = float(sgemm["gflops"]), float(triad["gbps"])
    print(f"sgemm: {sgemm_rate:.1f} GFLOP/s (n={sgemm['n']}, OpenBLAS "
          f"{sgemm['core']} kernels, {sgemm['threads']} threads, median of "
          f"{sgemm['reps']})")
    fma = runner.fma()
    print(f"FMA peak: {float(fma['gflops']):.1f} GFLOP/s ({fma['threads']} threads, "
          f"median of {fma['reps']}); sgemm is "
          f"{100 * sgemm_rate / float(fma['gflops']):.1f}% of it")
    print(f"STREAM triad: {triad_rate:.1f} GB/s (3 x {triad['mib_per_array']} MiB "
          f"f64, 2 reads + 1 write per element, median of {triad['reps']})")
    print()
    print(row([name for name, _ in COLUMNS]))
    sys.stdout.flush()
    start = time.perf_counter()
    for case in cases:
        results = runner.case(case, impls)
        naive = results.get("naive")
        naive = naive if isinstance(naive, dict) else None
        for impl, result in results.items():
            print(report(case, impl, result, naive, sgemm_rate, triad_rate))
        sys.stdout.flush()
    print(f"\ncases took {time.perf_counter() - start:.0f} s")
    # The % columns assume the machine's load stayed as it was at the start.
    again = float(runner.sgemm()["gflops"])
    print(f"sgemm again: {again:.1f} GFLOP/s, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if abs(again - sgemm_rate) > 0.1 * sgemm_rate:
        print("WARNING: the sgemm rate changed by over 10% during the run: "
              "other load on the machine skews the figures")
    if modified(tool) != built:
        print("WARNING: tfm-compile was rebuilt during the run: cases may "
              "mix builds")


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        impl, directory, name, min_reps, min_time, slow = sys.argv[2:]
        worker(impl, pathlib.Path(directory), CASES[name], int(min_reps),
               float(min_time), float(slow))
    else:
        main()
