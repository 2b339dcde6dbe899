"""Every parallel CPU loop and its one-thread twin, chosen per call as ``at::parallel_for`` chooses
(``aten/src/ATen/Parallel-inl.h``, ``ParallelOpenMP.h``).

``at::parallel_for`` runs its body inline, on the calling thread, when the range is at most one
grain or when only one thread is allowed; only otherwise does it enter the OpenMP pool. Numba fixes
the choice when it compiles: a function built with ``parallel=True`` always enters its pool, even
with one thread. So ``parallel_loop`` compiles the same Python function twice, once with
``parallel=True`` and once without (where ``prange`` is a plain ``range``), and ``pick`` chooses
between the two at each call.

The serial build is what lets a forked DataLoader worker run any kernel: a child forked from a
process whose GNU OpenMP pool has started cannot start it again (Numba terminates such a child),
and the worker calls ``set_num_threads(1)`` first, as torch's does, so it never asks for the pool.
"""
import math
import types
from typing import NamedTuple

import numpy as np
from numba import njit

from ... import parallel as _parallel

GRAIN = 32768   # at::internal::GRAIN_SIZE: up to this many elements a loop runs on the calling thread


class Twins(NamedTuple):
    """A loop compiled for Numba's thread pool and for the calling thread. Calling it calls the
    build ``pick`` chooses for the elements of its largest array argument (a kernel whose work is
    not its arguments' size, a matrix product, calls ``pick`` with its own count);
    ``inspect.getsource`` shows the one Python function both came from."""
    parallel: object
    serial: object

    def __call__(self, *args):
        return pick(self, (max((a.size for a in args if type(a) is np.ndarray), default=0),))(*args)

    @property
    def __wrapped__(self):
        return self.parallel.py_func


def parallel_loop(**options):
    """Decorator: compile the function with and without ``parallel=True`` (both ``cache=True``,
    both with ``options``) and return the two as ``Twins``.

    The serial build compiles a copy of the function under its own qualified name. Numba's on-disk
    cache names an index file by the function's module, qualified name and first line, and keys
    its entries by signature, bytecode and closure, never by ``parallel``: under one name the
    second build would load the first one's machine code from the cache, and a forked worker's
    "serial" loop would enter the pool after all.

    Both builds divide as C does unless ``options`` say otherwise (``error_model="numpy"``: a float
    divided by zero is an infinity or a NaN), since Numba's default differs between them: the
    parallel build's loop body already divides so, the serial one would raise ZeroDivisionError
    (the inverse of a singular matrix, on a small call or in a one-thread DataLoader worker)."""
    options = {"error_model": "numpy", **options}

    def compile_both(fn):
        twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
        twin.__qualname__ = f"{fn.__qualname__}.serial"
        twin.__module__, twin.__doc__ = fn.__module__, fn.__doc__
        return Twins(njit(parallel=True, cache=True, **options)(fn), njit(cache=True, **options)(twin))
    return compile_both


def pick(twins, work=None):
    """The serial build after ``set_num_threads(1)``, or when ``work`` (a shape: as many elements
    as the loop has steps) is at most one grain, since waking threads costs more than such a loop
    (measured on this course's 2-core machine with Numba's OpenMP pool: a float32 add of one grain
    takes about 30 us either way, and from two grains on the parallel loop wins: 131,072 elements,
    58 us serial, 37 us parallel). Otherwise the parallel build."""
    # ``_parallel.one_thread()``, read without its frame: every loop call asks
    if _parallel._requested == 1:       # never wake the pool: a forked worker may not start it
        return twins.serial
    if work is None:
        return twins.parallel
    n = math.prod(work.tolist() if type(work) is np.ndarray else work)    # Python ints: no overflow
    return twins.serial if n <= GRAIN else twins.parallel
