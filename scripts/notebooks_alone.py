"""Run each notebook alone, as Colab opens one: copied into an empty folder, with a fresh HOME and
Numba cache and nothing of the repository beside it (only the installed package). Fails, listing
the notebooks and their first error, if any notebook raises.

    python scripts/notebooks_alone.py [--jobs 2] [--python VENV/bin/python] [notebooks/X.ipynb ...]

Two notebooks run at a time by default: every kernel compiles again in a fresh cache. --python runs
them in another environment (make colab-check: Colab's older torch and Numba in .venv-colab).
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

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def run_alone(notebook, timeout=1200, python=sys.executable):
    """Execute ``notebook`` in a new empty folder; return (name, seconds, error text or None)."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="alone-") as tmp:
        tmp = Path(tmp)
        work, home = tmp / "work", tmp / "home"
        work.mkdir()
        home.mkdir()
        shutil.copy(notebook, work / notebook.name)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON", "MPL", "NUMBA"))}
        env.update(HOME=str(home), NUMBA_CACHE_DIR=str(tmp / "numba-cache"), MPLBACKEND="Agg",
                   PYTHONHASHSEED="0", XDG_CACHE_HOME=str(home / ".cache"))
        proc = subprocess.run(
            [python, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
             f"--ExecutePreprocessor.timeout={timeout}", "--output", "executed.ipynb", notebook.name],
            cwd=work, env=env, capture_output=True, text=True)
    error = None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["(no output)"])
    if error:
        error = "\n".join(error[-15:])
    return notebook.name, time.perf_counter() - start, error


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--python", default=sys.executable, help="the Python whose environment runs them")
    args = parser.parse_args()
    notebooks = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    python = os.path.abspath(args.python)  # absolute, as each runs elsewhere; not resolved: a venv's python is a link
    failed = []
    with ThreadPoolExecutor(args.jobs) as pool:
        for name, seconds, error in pool.map(lambda nb: run_alone(nb, python=python), notebooks):
            print(f"{'FAIL' if error else 'ok  '} {name} alone ({seconds:.0f} s)", flush=True)
            if error:
                failed.append((name, error))
    for name, error in failed:
        print(f"\n--- {name} ---\n{error}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
