"""Every compiled CPU kernel goes to Numba's on-disk cache (``cache=True``), so that a second
pytest-xdist worker, the next run and the next notebook kernel load it instead of compiling it
again (``aten/native/cpu/parallel_for.py``, ``loops.py``). A jitted function that Numba does not
cache is allowed only where it is inlined into a cached kernel (``inline="always"``): it is
compiled as part of that kernel and cached with it.

The cache is also shared by every checkout of the same sources (``internals/_kernel_cache.py``):
two copies of the package in different folders, one cache folder: the second copy loads what the
first compiled and writes nothing; a copy whose kernel file differs by one comment compiles again."""
import importlib
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

import internals
import internals.aten.native
from internals.aten.native import scalar_ops as ops
from internals.aten.native.cpu import loops, reduce
from internals.aten.native.cpu.parallel_for import Twins


def _native_modules():
    for info in pkgutil.walk_packages(internals.aten.native.__path__, "internals.aten.native."):
        yield importlib.import_module(info.name)


def _dispatchers(value):
    """The CPU dispatchers a module-level name holds: one, both builds of ``Twins``, or none."""
    builds = list(value) if isinstance(value, Twins) else [value]
    return [d for d in builds if isinstance(d, CPUDispatcher)]


def _cached(dispatcher):
    return not isinstance(dispatcher._cache, NullCache)


def test_every_module_level_kernel_is_cached_or_inlined():
    seen, uncached = 0, []
    for module in _native_modules():
        for name, value in vars(module).items():
            for dispatcher in _dispatchers(value):
                if dispatcher.py_func.__module__ != module.__name__:
                    continue            # imported from the module that defines it
                seen += 1
                if not _cached(dispatcher) and dispatcher.targetoptions.get("inline") != "always":
                    uncached.append(f"{module.__name__}.{name}")
    assert seen > 50                    # the walk found the kernels
    assert uncached == []


@pytest.mark.parametrize("kind, op", [("unary", ops.IDENTITY), ("binary", ops.ADD), ("ternary", ops.WHERE)])
def test_loops_built_per_op_are_cached(kind, op):
    """The elementwise loops a factory builds for one op number (``loops._build_*``)."""
    twins = loops._loops[kind, op]
    assert _cached(twins.parallel) and _cached(twins.serial)


@pytest.mark.parametrize("op", [ops.SUM, reduce.CASCADE_SUM])
def test_reduction_loops_built_per_op_are_cached(op):
    for twins in reduce._build_reduce(op):
        assert _cached(twins.parallel) and _cached(twins.serial)


# One draw from a generator compiles (or loads) the Mersenne Twister's kernel (c10/mt19937.py) and
# nothing else; importing the package compiles nothing (its seeding is plain Python).
CODE = "import internals; g = internals.Generator()\nwith g._lock: g.random(1)"


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


@pytest.mark.slow
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
