"""Every compiled CPU kernel goes to Numba's on-disk cache (``cache=True``), so that a second
pytest-xdist worker, the next run and the next notebook kernel load it instead of compiling it
again (``aten/native/cpu/parallel_for.py``, ``loops.py``). A jitted function that Numba does not
cache is allowed only where it is inlined into a cached kernel (``inline="always"``): it is
compiled as part of that kernel and cached with it."""
import importlib
import pkgutil

import pytest
from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

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
