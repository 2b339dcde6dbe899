"""Parallel CPU loops and their one-thread builds (``native/cpu/parallel_for.py``): every parallel
loop has a serial build, the two keep apart in Numba's disk cache, ``set_num_threads(1)`` runs
every kernel family on the calling thread with torch's results, and threads that change the
setting while others compute crash nothing."""
import importlib
import os
import pkgutil
import subprocess
import sys

import numba
import numpy as np
import pytest
import torch
from helpers import EveryKernel, in_threads
from numba.core.registry import CPUDispatcher

import internals
import internals.aten.native as native
from internals.aten import parallel
from internals.aten.native.cpu import parallel_for
from internals.testing import assert_within_ulps


def plain(sample):
    return [t.tolist() for t in sample]


@pytest.fixture
def restore_threads():
    """The thread setting as it was, whatever the test set."""
    requested, threads = parallel._requested, numba.get_num_threads()
    yield
    numba.set_num_threads(threads)
    parallel._requested = requested


def kernel_modules():
    """Every module of ``internals.aten.native`` (CUDA ones included: they must hold no CPU
    parallel loop either)."""
    for info in pkgutil.walk_packages(native.__path__, native.__name__ + "."):
        yield importlib.import_module(info.name)


def test_no_parallel_loop_without_a_serial_build():
    """A function compiled with ``parallel=True`` alone would enter the thread pool even after
    ``set_num_threads(1)``: in a forked worker, the end of that worker."""
    bare, twins = [], 0
    for module in kernel_modules():
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.targetoptions.get("parallel"):
                bare.append(f"{module.__name__}.{name}")
            twins += isinstance(value, parallel_for.Twins)
    assert bare == []
    assert twins >= 25          # the modules were searched: their loops are all there


def test_twins_are_one_function_compiled_two_ways():
    from internals.aten.native.cpu import im2col
    kernel = im2col.im2col
    assert kernel.parallel.targetoptions["parallel"] and "parallel" not in kernel.serial.targetoptions
    assert kernel.parallel.py_func.__code__ is kernel.serial.py_func.__code__
    assert kernel.parallel._cache._impl.filename_base != kernel.serial._cache._impl.filename_base


TOY = '''
import numpy as np
from numba import prange
from internals.aten.native.cpu.parallel_for import parallel_loop


@parallel_loop()
def add_one(a):
    for i in prange(a.size):
        a[i] += 1
'''

# Run twice against one cache folder: the first process compiles both builds, the second loads
# both. It starts the OpenMP pool with the parallel build, then forks: the child may only run the
# serial build, and dies if what the cache handed back for it was the parallel machine code.
PROGRAM = '''
import os, sys
import numba
import numpy as np
sys.path.insert(0, sys.argv[1])
import toy_loops
a = np.zeros(100000)
toy_loops.add_one.parallel(a)
toy_loops.add_one.serial(a)
hits = sum(toy_loops.add_one.serial.stats.cache_hits.values())
pid = os.fork()
if pid == 0:
    toy_loops.add_one.serial(a)
    os._exit(0 if a[0] == 3 else 1)
_, status = os.waitpid(pid, 0)
print(numba.threading_layer(), hits, os.waitstatus_to_exitcode(status))
'''


@pytest.mark.slow
def test_cache_keeps_the_two_builds_apart(tmp_path):
    (tmp_path / "toy_loops.py").write_text(TOY)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([os.path.dirname(internals.__path__[0]), os.environ.get("PYTHONPATH", "")]))
    runs = [subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path)], env=env, capture_output=True, text=True,
                           timeout=240) for _ in range(2)]
    outcomes = [r.stdout.split() for r in runs]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    layer = outcomes[0][0]
    assert outcomes == [[layer, "0", "0"], [layer, "1", "0"]]   # compiled, then loaded; the child lived
    names = sorted(p.name for p in (tmp_path / "cache").rglob("toy_loops.*.nbi"))   # one index file each
    assert [name.split("-")[0] for name in names] == ["toy_loops.add_one", "toy_loops.add_one.serial"]


def test_pick_follows_the_grain_and_the_thread_setting(restore_threads):
    kernel = internals.aten.native.cpu.loops._loops["binary", internals.aten.native.scalar_ops.ADD]
    assert parallel_for.pick(kernel, (parallel_for.GRAIN,)) is kernel.serial
    assert parallel_for.pick(kernel, (parallel_for.GRAIN + 1,)) is kernel.parallel
    assert parallel_for.pick(kernel) is kernel.parallel
    internals.set_num_threads(1)
    assert parallel_for.pick(kernel, (10 * parallel_for.GRAIN,)) is kernel.serial
    assert parallel_for.pick(kernel) is kernel.serial


@pytest.mark.parametrize("i", [0, 1])
def test_one_thread_runs_every_kernel_family_as_torch(restore_threads, i):
    """After ``set_num_threads(1)`` each family runs its serial build: the same bits as the
    parallel one (each task computes the same thing wherever it runs), torch's within a few ulps."""
    pooled, torch_threads = plain(EveryKernel(internals)[i]), torch.get_num_threads()
    internals.set_num_threads(1)
    torch.set_num_threads(1)
    try:
        alone = plain(EveryKernel(internals)[i])
        theirs = plain(EveryKernel(torch)[i])
    finally:
        torch.set_num_threads(torch_threads)
    assert alone == pooled
    for got, expected in zip(alone, theirs, strict=True):
        assert_within_ulps(got, expected, 8)


def test_threads_that_change_the_setting_while_others_compute(restore_threads):
    """Two threads run kernels (a convolution, a sum past one grain, a sort) while a third switches
    between one thread and two, the interpreter switching threads every microsecond: nothing
    crashes, and every result is the one computed alone."""
    x = internals.from_numpy(np.random.default_rng(0).integers(-4, 5, (2, 3, 16, 16)).astype(np.float32))
    w = internals.from_numpy(np.random.default_rng(1).integers(-4, 5, (4, 3, 3, 3)).astype(np.float32))
    big = internals.arange(100000.0)

    def results():
        return plain((internals.nn.functional.conv2d(x, w), big.sum(), x.reshape(-1, 16).sort(1).values))
    expected = results()

    def work(k):
        for _ in range(10):
            if k == 0:
                for n in (1, 2) * 20:
                    internals.set_num_threads(n)
            else:
                assert results() == expected
    assert in_threads(work, n=3) == []
