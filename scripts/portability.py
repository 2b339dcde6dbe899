"""Run the differential tests and the notebooks under other CPU code paths than this machine's.

torch picks its vectorised kernels by CPU capability (``ATEN_CPU_CAPABILITY``), MKL its BLAS
kernels by instruction set (``MKL_ENABLE_INSTRUCTIONS``, ``MKL_CBWR``), oneDNN its convolutions
(``ONEDNN_MAX_CPU_ISA``: which 16-bit float convolutions it takes at all), and Numba compiles the
package's kernels for the host CPU unless told otherwise (``NUMBA_CPU_NAME``; the package keys its
kernel cache by that setting, so a generic build compiles once into a cache of its own). Each
setting plays another reader's machine; one summary line is printed per setting.

    python scripts/portability.py                       # every setting, the whole differential set
    python scripts/portability.py --settings default --tests sensitive --notebooks notebooks/10_cnn.ipynb

CONTRIBUTING.md says what must hold on every CPU and what is compared within ulps.
"""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each setting: the environment it adds.
SETTINGS = {
    "default": {"ATEN_CPU_CAPABILITY": "default"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512"},
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
    "mkl-avx2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "numba-generic": {"NUMBA_CPU_NAME": "generic"},
    "onednn-avx2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
}
# The differential test files whose results torch takes from CPU-dependent code (vector math,
# BLAS, reductions, complex kernels, printed values): the set CI runs under one other setting.
SENSITIVE = ["aten/test_products_in_place_and_out.py", "aten/test_out_variants.py", "aten/test_complex.py",
             "aten/test_complex_unary.py", "test_tensor_str.py",
             "aten/test_binary_ops.py::test_float_powers_take_torchs_short_cuts",
             "aten/test_binary_ops.py::test_sqrt_is_pow_half",
             "aten/test_vec_math.py", "aten/test_linear_algebra.py",
             # fused or separate multiply-adds, by torch's build (add's alpha, addcmul, lerp, cross)
             "aten/test_pointwise_ops.py", "hostile/test_hostile_arithmetic.py::test_add_and_sub_with_alpha_round_once",
             "aten/test_shape_scan_search_ops.py::test_cross_rounds_as_torchs_kernel"]
# Folders whose tests compare nothing with torch (pictures, the book, timings, the repository).
NOT_DIFFERENTIAL = {"viz", "course"}


def cpu_has(flag):
    """Whether /proc/cpuinfo lists ``flag`` (False where there is no such file)."""
    try:
        return flag in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


def available_settings():
    """Every setting this CPU can run: avx512 only where it has AVX-512 F."""
    return [name for name in SETTINGS if name != "avx512" or cpu_has("avx512f")]


def test_files(which):
    """``sensitive``, ``all`` (every differential test file), ``none`` (or nothing) or a list of paths."""
    if which in ([], ["none"]):
        return []
    if which == ["sensitive"]:
        return [f"tests/{name}" for name in SENSITIVE]
    if which == ["all"]:
        return [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tests").rglob("test_*.py"))
                if p.parent.name not in NOT_DIFFERENTIAL]
    return which


def run(command, env):
    """Run one command from the repository root; its exit status and the last line it printed."""
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    sys.stdout.write(done.stdout[-4000:] if done.returncode else "")
    return done.returncode, lines[-1] if lines else done.stderr.strip()[-200:]


def run_setting(name, tests, notebooks, workers):
    """The tests, then nbval over the notebooks, under one setting; a summary line."""
    env = {**os.environ, **SETTINGS[name], "PYTHONHASHSEED": "0"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    parallel = ["-n", str(workers), "--dist", "loadfile"] if workers > 1 else ["-p", "no:xdist"]   # as `make test`
    start, results = time.monotonic(), []
    if tests:
        results.append(run([sys.executable, "-m", "pytest", *tests, "-q", *parallel], env))
    if notebooks:
        results.append(run([sys.executable, "-m", "pytest", "--nbval", *notebooks, "--nbval-current-env",
                            "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "-q", "-p", "no:xdist"], env))
    settings = " ".join(f"{k}={v}" for k, v in SETTINGS[name].items())
    ok = all(code == 0 for code, _ in results)
    summary = " | ".join(last for _, last in results)
    print(f"{'ok  ' if ok else 'FAIL'} {name:15} {settings:32} {time.monotonic() - start:6.0f} s  {summary}",
          flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", default=",".join(available_settings()),
                        help=f"comma-separated, of {', '.join(SETTINGS)} (default: all this CPU runs)")
    parser.add_argument("--tests", nargs="*", default=["all"],
                        help="'all' (the differential test files), 'sensitive', test paths, or 'none'")
    parser.add_argument("--notebooks", nargs="*", default=sorted(str(p.relative_to(ROOT))
                                                                  for p in (ROOT / "notebooks").glob("*.ipynb")),
                        help="notebooks for nbval (default: every notebook), or 'none'")
    parser.add_argument("-n", "--workers", type=int, default=2, help="pytest-xdist workers for the tests")
    args = parser.parse_args()
    names = args.settings.split(",")
    unknown = set(names) - set(SETTINGS)
    if unknown:
        parser.error(f"unknown settings: {', '.join(sorted(unknown))}")
    notebooks = [] if args.notebooks == ["none"] else args.notebooks
    results = [run_setting(name, test_files(args.tests), notebooks, args.workers) for name in names]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
