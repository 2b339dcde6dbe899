"""The kernel cache is shared by every checkout of the same sources (``internals/_kernel_cache.py``).

Two copies of the package in different folders, one cache folder: the second copy loads what the
first compiled and writes nothing; a copy whose kernel file differs by one comment compiles again.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import internals

# Importing the package seeds the default generator: it compiles (or loads) the Mersenne Twister's
# seeding kernel (c10/mt19937.py) and nothing else.
CODE = "import internals"


def _copy_package(folder):
    shutil.copytree(Path(internals.__file__).parent, folder / "internals",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _run(root, cache):
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache), INTERNALS_COMPILE_NOTICE="0")
    done = subprocess.run([sys.executable, "-c", CODE + "; print(internals.__file__)"], env=env, cwd=root,
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith(str(root / "internals" / "__init__.py"))   # the copy ran, not the repo


def _files(cache):
    return {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}


def test_a_second_checkout_loads_the_first_ones_kernels(tmp_path):
    cache = tmp_path / "cache"
    _run(_copy_package(tmp_path / "a"), cache)
    first = _files(cache)
    assert any(p.suffix == ".nbc" for p in first)
    _run(_copy_package(tmp_path / "b"), cache)
    assert _files(cache) == first                  # loaded: not one file written or rewritten

    edited = _copy_package(tmp_path / "c")
    source = edited / "internals" / "c10" / "mt19937.py"
    source.write_text(source.read_text() + "\n# a comment: other bytes, the same code\n")
    _run(edited, cache)
    after = _files(cache)
    assert [p for p in after if after[p] != first.get(p)]    # a changed source misses, compiles, stores
