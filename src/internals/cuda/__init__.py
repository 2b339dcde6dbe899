"""``internals.cuda``: the cuda device, on a GPU or on Numba's CUDA simulator (``torch/cuda``)."""
import sys

from .._cuda_env import SIMULATED
from . import memory
from .memory import (
    OutOfMemoryError,
    empty_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
    set_device_capacity,
    set_per_process_memory_fraction,
)
from .random import get_rng_state, initial_seed, manual_seed, manual_seed_all, set_rng_state
from .streams import Event, Stream, StreamContext, current_stream, default_stream, stream

__all__ = ["is_available", "is_simulated", "device_count", "synchronize", "current_device", *memory.__all__,
           "Event", "Stream", "StreamContext", "current_stream", "default_stream", "stream",
           "manual_seed", "manual_seed_all", "initial_seed", "get_rng_state", "set_rng_state"]

_announced = False


def is_available():
    """True on a GPU and on the simulator alike: ``device="cuda"`` always works."""
    return True


def is_simulated():
    """True when cuda kernels run on Numba's CUDA simulator rather than a GPU."""
    return SIMULATED


def device_count():
    return 1


def current_device():
    return 0


def synchronize():
    from numba import cuda  # numba.cuda is slow to import: loaded on first CUDA use
    cuda.synchronize()


def _announce_simulator():
    """Say once per process that cuda work is simulated (slow: keep sizes small)."""
    global _announced
    if SIMULATED and not _announced:
        _announced = True
        print("internals: no CUDA GPU found, so device='cuda' runs on Numba's CUDA simulator\n"
              "(correct but slow: keep sizes small).", file=sys.stderr)
