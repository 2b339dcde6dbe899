"""Run each notebook alone, as Colab opens one: copied into an empty folder, with a fresh HOME and
nothing of the repository beside it (only the installed package). Fails, listing the notebooks and
their first error, if any notebook raises.

    python scripts/notebooks_alone.py [--jobs 2] [--nbval [--fresh-cache]] [--python VENV/bin/python]
                                      [--keep DIR] [X.ipynb ...]

With --nbval each copy is also checked by nbval in strict mode against its stored outputs (the
sanitize rules of tests/nbval_sanitize.cfg), so one run proves both that a notebook needs nothing
of the repository and that it prints what the book shows: ``make test`` runs it so. Under --nbval
the notebooks share the package's own kernel cache (the folder ``import internals`` picks for this
environment, keyed by the kernel sources and Numba's settings), so the kernels the unit tests just
compiled load instead of compiling again; a cached kernel prints nothing a notebook stores (the
compile notice is a widget, which nbval never compares). --fresh-cache gives the run one new empty
cache instead. Without --nbval each notebook gets a cache of its own, as a fresh Colab runtime
has. Two notebooks run at a time by default. Numba writes each cache file to a temporary name and
renames it into place, so a reader never meets half a file; after the unit tests have filled the
cache, the two rarely compile anything at all.
--python runs them in another environment (make colab-check: Colab's older torch and Numba in
.venv-colab). --keep DIR (without --nbval) saves each executed copy there, so what another stack
prints can be read beside the stored outputs.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"
SMALLEST_PX = 9     # internals.viz.legibility.SMALLEST_PX (this script runs without the package)

# Seconds each chapter took under ``make test`` (two at a time, kernels cached), longest first.
# The notebooks start in this order, so the two jobs end together: in name order the longest
# ones (10, 07, 09) came late, and one job ran on alone. Only the order hangs on these
# figures; a notebook missing here starts last, and a stale figure costs only some balance.
SECONDS = {"10_cnn": 95, "09_capstone": 73, "appendix_numba": 71, "07_memory": 55, "11_compile": 52,
           "13_ddp": 47, "08_codebase_tour": 40, "03_storage": 37, "04_kernels": 36, "02_strides": 34,
           "05_dispatch": 26, "01_tensors": 25, "08b_boundary": 25, "12_processes": 25, "04b_cuda_kernels": 24,
           "06_autograd": 24, "performance": 15}


# pytest, as ``python -m pytest`` runs it, with one import refused: nbval's nbformat imports
# jsonschema, which imports rfc3987_syntax if installed (only to check "iri" formats, which
# nbformat's schema never asks for: it validates with fastjsonschema) and that module builds
# an Earley grammar on import, 3.5 CPU s for each notebook. jsonschema goes on without it.
NBVAL_PYTEST = "import sys; sys.modules['rfc3987_syntax'] = None; import pytest; sys.exit(pytest.main())"


def clean_environment():
    """This process's environment without the settings a notebook's run must not inherit."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON", "MPL", "NUMBA"))}


def package_kernel_cache(python):
    """The kernel cache folder ``import internals`` picks under ``python`` in a notebook's environment.

    Asked of the package itself (``_cuda_env`` keys the folder by the kernel sources, Numba's version
    and its code-generation settings), so a run never reads kernels built from other sources."""
    probe = "import os; from internals import _cuda_env; print(os.environ['NUMBA_CACHE_DIR'])"
    proc = subprocess.run([python, "-c", probe], env=clean_environment(), capture_output=True, text=True,
                          check=True, cwd=tempfile.gettempdir())
    return proc.stdout.strip().splitlines()[-1]


def run_alone(notebook, timeout=1200, python=sys.executable, nbval=False, numba_cache=None, keep=None):
    """Execute ``notebook`` in a new empty folder; return (name, seconds, error text or None). With
    ``keep`` (a folder), the executed copy is saved there under the notebook's name."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="alone-") as tmp:
        tmp = Path(tmp)
        work, home = tmp / "work", tmp / "home"
        work.mkdir()
        home.mkdir()
        shutil.copy(notebook, work / notebook.name)
        env = clean_environment()
        env.update(HOME=str(home), NUMBA_CACHE_DIR=str(numba_cache or tmp / "numba-cache"),
                   PYTHONHASHSEED="0", XDG_CACHE_HOME=str(home / ".cache"))
        env.update(watch_figure_text(tmp))
        if not nbval:       # nbval compares the figures the notebook's inline backend shows
            env["MPLBACKEND"] = "Agg"
        if nbval:
            command = [python, "-c", NBVAL_PYTEST, "--nbval", notebook.name, "--nbval-current-env",
                       f"--nbval-sanitize-with={SANITIZE}", f"--nbval-cell-timeout={timeout}", "-q",
                       "-p", "no:xdist", "-p", "no:cacheprovider", "--rootdir", str(work)]
        else:
            command = [python, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                       f"--ExecutePreprocessor.timeout={timeout}", "--output", "executed.ipynb", notebook.name]
        proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
        if keep and (work / "executed.ipynb").exists():
            shutil.copy(work / "executed.ipynb", Path(keep) / notebook.name)
        small = sorted(set((tmp / "figure-text.log").read_text().splitlines())) \
            if (tmp / "figure-text.log").exists() else []
    error = None if proc.returncode == 0 else ((proc.stdout + proc.stderr).strip().splitlines() or ["(no output)"])
    if error:
        error = "\n".join(error[-40:] if nbval else error[-15:])
    if small:
        error = "\n".join(filter(None, [error, f"text below {SMALLEST_PX} px on the book's page:", *small]))
    return notebook.name, time.perf_counter() - start, error


def watch_figure_text(folder):
    """Environment that makes every pyplot figure of a run log its text too small for the page
    (internals.viz.legibility) into ``folder``/figure-text.log: a matplotlibrc with its hook."""
    (folder / "matplotlibrc").write_text("figure.hooks: internals.viz.legibility:watch\n")
    return {"MATPLOTLIBRC": str(folder / "matplotlibrc"), "INTERNALS_FIGURE_TEXT_LOG": str(folder / "figure-text.log")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--python", default=sys.executable, help="the Python whose environment runs them")
    parser.add_argument("--nbval", action="store_true", help="also compare every output with the stored one")
    parser.add_argument("--fresh-cache", action="store_true",
                        help="with --nbval: one new empty kernel cache for the run, not the package's own")
    parser.add_argument("--keep", type=Path, help="without --nbval: save each executed notebook in this folder")
    args = parser.parse_args()
    if args.keep:
        args.keep = args.keep.resolve()     # each notebook runs in a folder of its own
        args.keep.mkdir(parents=True, exist_ok=True)
    notebooks = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    notebooks.sort(key=lambda p: -SECONDS.get(p.stem, 0))     # longest first: stable, so ties keep name order
    python = os.path.abspath(args.python)  # absolute, as each runs elsewhere; not resolved: a venv's python is a link
    failed = []
    with tempfile.TemporaryDirectory(prefix="alone-numba-") as fresh_cache, ThreadPoolExecutor(args.jobs) as pool:
        shared_cache = fresh_cache if args.fresh_cache or not args.nbval else package_kernel_cache(python)
        run = (lambda nb: run_alone(nb, python=python, nbval=True, numba_cache=shared_cache)) if args.nbval else \
            (lambda nb: run_alone(nb, python=python, keep=args.keep))
        for name, seconds, error in pool.map(run, notebooks):
            print(f"{'FAIL' if error else 'ok  '} {name} alone{' (nbval)' if args.nbval else ''} ({seconds:.0f} s)",
                  flush=True)
            if error:
                failed.append((name, error))
    for name, error in failed:
        print(f"\n--- {name} ---\n{error}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
