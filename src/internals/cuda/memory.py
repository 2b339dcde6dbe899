"""``internals.cuda`` memory management: what the caching allocator counts (``torch/cuda/memory.py``).

``memory_allocated()`` is the sum of the blocks handed out to storages (rounded sizes);
``memory_reserved()`` the sum of the segments obtained from the device. ``memory_stats()`` has
torch's keys, ``memory_snapshot()`` lists segments and their blocks, ``memory_summary()`` prints
torch's table. ``set_device_capacity`` is ours: the size of the simulated device.
"""
import collections
import pickle
import sys

from ..c10.device import as_device
from ..c10.device import device as _device
from . import caching_allocator as _ca
from .allocator_config import get_config
from .caching_allocator import OutOfMemoryError, cuda_allocator

__all__ = ["OutOfMemoryError", "memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "memory_stats",
           "memory_stats_as_nested_dict", "memory_snapshot", "memory_summary", "empty_cache", "mem_get_info",
           "set_per_process_memory_fraction", "get_per_process_memory_fraction", "set_device_capacity",
           "get_allocator_backend"]


def _device_index(device):
    """0 for ``None``, ``0``, ``"cuda"``, ``"cuda:0"`` or such a device: there is one device
    (torch's ``_get_device_index``: a string or device must name a cuda device)."""
    if device is None:
        return 0
    if isinstance(device, (str, _device)):
        device = as_device(device)
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        index = device.index
    elif isinstance(device, int) and not isinstance(device, bool):
        index = device
    else:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    if index != 0:
        raise RuntimeError(f"Invalid device argument {index}: did you call init?")
    return 0


def _allocator(device=None):
    _device_index(device)
    return cuda_allocator.device_allocator


def memory_stats_as_nested_dict(device=None):
    """The statistics as torch's C++ side hands them to Python (``memoryStats``)."""
    allocator = _allocator(device)
    with allocator.mutex:       # one consistent set of numbers, while other threads allocate
        return _nested_stats(allocator.stats)


def _nested_stats(stats):
    def stat_dict(stat):
        return {"current": stat.current, "peak": stat.peak, "allocated": stat.allocated, "freed": stat.freed}

    result = {name: getattr(stats, name) for name in ("num_alloc_retries", "num_ooms", "max_split_size",
                                                      "num_sync_all_streams", "num_device_alloc",
                                                      "num_device_free", "num_oom_rejections")}
    for name in _ca.ARRAY_STATS:
        result[name] = {pool: stat_dict(stat) for pool, stat in getattr(stats, name).items()}
    result["oversize_allocations"] = stat_dict(stats.oversize_allocations)
    result["oversize_segments"] = stat_dict(stats.oversize_segments)
    return result


def memory_stats(device=None):
    """An OrderedDict of every statistic, nested keys joined by dots and sorted, as torch's."""
    flat = []

    def add(prefix, value):
        if isinstance(value, dict):
            for key, inner in value.items():
                add(f"{prefix}.{key}" if prefix else key, inner)
        else:
            flat.append((prefix, value))

    add("", memory_stats_as_nested_dict(device))
    return collections.OrderedDict(sorted(flat))


def memory_allocated(device=None):
    return _allocator(device).stats.allocated_bytes["all"].current


def max_memory_allocated(device=None):
    return _allocator(device).stats.allocated_bytes["all"].peak


def memory_reserved(device=None):
    return _allocator(device).stats.reserved_bytes["all"].current


def max_memory_reserved(device=None):
    return _allocator(device).stats.reserved_bytes["all"].peak


def reset_peak_memory_stats(device=None):
    _allocator(device).reset_peak_stats()


def reset_accumulated_memory_stats(device=None):
    _allocator(device).reset_accumulated_stats()


def empty_cache():
    """Give every cached segment that is entirely free back to the device (split ones stay)."""
    cuda_allocator.device_allocator.empty_cache()


def mem_get_info(device=None):
    """``(free, total)`` bytes of the device, as ``cudaMemGetInfo`` says."""
    return _allocator(device).memory.mem_get_info()


def set_device_capacity(nbytes, device=None):
    """internals only: the total memory of the simulated device (None: 16 GiB, or the GPU's own)."""
    _allocator(device).memory.capacity = nbytes


def set_per_process_memory_fraction(fraction, device=None):
    """Allow segments to add up to ``fraction`` of the device's total memory; beyond it, OOM."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _allocator(device).set_memory_fraction(fraction)


def get_per_process_memory_fraction(device=None):
    allocator = _allocator(device)
    if allocator.allowed_memory_maximum is None:
        return 1.0
    return allocator.allowed_memory_maximum / allocator.memory.total()


def get_allocator_backend():
    return "native"


def _set_allocator_settings(env):
    """Parse a ``PYTORCH_CUDA_ALLOC_CONF`` string now, as torch's private function of that name."""
    get_config().parse(env)


def memory_snapshot(mempool_id=None, include_traces=True):
    """Every segment, by address, with its blocks in address order (``_cuda_memorySnapshot``)."""
    allocator = _allocator()
    with allocator.mutex:
        segments = [_segment(head) for head in allocator.segments()]
        # torch notes each snapshot in the history, with the bytes active at that moment
        allocator.history.record("snapshot", 0, sum(s["active_size"] for s in segments), 0)
    return segments


def _segment(head):
    blocks = [{"address": b.ptr, "size": b.size, "requested_size": b.requested_size,
               "state": "active_allocated" if b.allocated else "inactive", "frames": b.frames or []}
              for b in _ca.segment_blocks(head)]
    active = [b for b in blocks if b["state"] == "active_allocated"]
    return {"device": 0, "address": head.ptr, "total_size": sum(b["size"] for b in blocks),
            "allocated_size": sum(b["size"] for b in active), "active_size": sum(b["size"] for b in active),
            "requested_size": sum(b["requested_size"] for b in active), "stream": head.stream,
            "segment_type": "small" if head.pool.is_small else "large", "segment_pool_id": (0, 0),
            "is_expandable": head.expandable_segment is not None, "frames": head.segment_frames or [],
            "blocks": blocks}


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None,
                           clear_history=False, compile_context=False, global_record_annotations=False,
                           skip_actions=None):
    """Keep the allocator's history for ``_snapshot`` (``torch.cuda.memory._record_memory_history``).

    ``stacks="python"`` keeps the caller's frames; ``"all"`` adds the package's own frames, which
    stand where torch's C++ frames stand. ``device``, ``compile_context`` and
    ``global_record_annotations`` are taken for torch's signature (one device; nothing compiled
    or annotated to record).
    """
    allocator = _allocator(device)
    with allocator.mutex:
        allocator.history.configure(enabled, context, stacks, max_entries, clear_history, skip_actions)


def _snapshot(device=None):
    """Segments and the recorded history, as ``torch.cuda.memory._snapshot()`` returns them."""
    segments = memory_snapshot()
    allocator = _allocator(device)
    with allocator.mutex:
        return {"segments": segments, "device_traces": [allocator.history.trace()]}


def _dump_snapshot(filename="dump_snapshot.pickle"):
    """``_snapshot()`` pickled to ``filename``: what pytorch.org/memory_viz and ``_memory_viz`` read."""
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


def _scaled(value, reference, units, step, threshold):
    """Divide ``value`` by ``step`` while the row's reference value stays at or above ``threshold``."""
    unit = units[0]
    for next_unit in units[1:]:
        if reference < threshold:
            break
        unit, value, reference = next_unit, value // step, reference / step
    return value, unit


def _size_cell(value, reference):
    value, unit = _scaled(value, reference, ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"], 1024, 768 * 1024)
    return f"{value:6d} {unit}"


def _count_cell(value, reference):
    value, unit = _scaled(value, reference, [" ", "K", "M"], 1000, 750 * 1000)
    return f"{value:7d} {unit} "


_SUMMARY_ROWS = [("allocated_bytes", "Allocated memory", _size_cell), ("active_bytes", "Active memory", _size_cell),
                 ("requested_bytes", "Requested memory", _size_cell),
                 ("reserved_bytes", "GPU reserved memory", _size_cell),
                 ("inactive_split_bytes", "Non-releasable memory", _size_cell),
                 ("allocation", "Allocations", _count_cell), ("active", "Active allocs", _count_cell),
                 ("segment", "GPU reserved segments", _count_cell),
                 ("inactive_split", "Non-releasable allocs", _count_cell)]


def memory_summary(device=None, abbreviated=False):
    """torch's 75-column table of the statistics: each row scaled to the unit of its pool total."""
    stats = memory_stats(device)
    rule, double = "-" * 75, "=" * 75
    lines = [double, f" {'':16} PyTorch CUDA memory summary, device ID {_device_index(device):<17d} ", rule,
             f"  {'':9} CUDA OOMs: {stats['num_ooms']:<12d} | {'':6} cudaMalloc retries: "
             f"{stats['num_alloc_retries']:<8d}  ",
             double, "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]

    def row(label, prefix, cell, reference_prefix):
        metrics = ("current", "peak", "allocated", "freed")
        cells = [cell(stats[prefix + m], stats[reference_prefix + m]) for m in metrics]
        return f" {label:<21} | " + " | ".join(cells) + " "

    for key, name, cell in _SUMMARY_ROWS:
        lines.append(rule)
        pools = [("all", name)] + ([] if abbreviated else [("large_pool", "      from large pool"),
                                                            ("small_pool", "      from small pool")])
        for pool, label in pools:
            lines.append(row(label, f"{key}.{pool}.", cell, f"{key}.all."))
    for key, name in (("oversize_allocations", "Oversize allocations"), ("oversize_segments", "Oversize GPU segments")):
        lines.append(rule)
        lines.append(row(name, f"{key}.", _count_cell, f"{key}."))
    lines.append(double)
    return "|" + "|\n|".join(lines) + "|\n"
