"""Numba's CUDA simulator under the package: the race ``aten/native/cuda/_simulator.py`` closes,
forced to happen by a NumPy whose ``empty`` sleeps (and so lets the other threads run)."""
import time

import numpy as np
import pytest
from numba import cuda, float64  # a global: the simulator swaps a kernel module's global cuda

# (tests/conftest.py imported internals first, which chose the simulator before Numba loaded)
from internals._cuda_env import SIMULATED

pytestmark = pytest.mark.skipif(not SIMULATED, reason="a race of the simulator; a GPU has no such race")


class _SlowNumPy:
    """NumPy whose ``empty`` sleeps first: every thread of a block misses the shared-array lookup
    before any of them stores its array, the interleaving that loses a thread's writes."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def empty(*args, **kwargs):
        time.sleep(0.002)
        return np.empty(*args, **kwargs)


def test_the_threads_of_a_block_share_one_shared_array(monkeypatch):
    from numba.cuda.simulator import kernelapi  # only under the simulator

    @cuda.jit
    def total_of_thread_ids(out):
        s = cuda.shared.array(32, float64)
        t = cuda.threadIdx.x
        s[t] = t
        cuda.syncthreads()
        acc = 0.0
        for i in range(32):
            acc += s[i]
        out[t] = acc

    monkeypatch.setattr(kernelapi, "np", _SlowNumPy())
    out = np.zeros(32)
    total_of_thread_ids[1, 32](out)
    assert (out == sum(range(32))).all(), out
