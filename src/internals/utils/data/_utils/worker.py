"""What a DataLoader worker process runs (``torch/utils/data/_utils/worker.py``).

A worker is seeded first: ``seed = base_seed + worker_id`` for Python's ``random`` and for the
default generator, and NumPy's global generator from a 128-bit state mixed out of the base seed
and the worker id. Then it loops: take ``(task index, sampler indices)`` from its own index
queue, fetch and collate that batch, put ``(task index, batch)`` on the result queue shared by
all workers. An exception becomes an ``ExceptionWrapper`` on the result queue instead of a
batch; ``None`` on the index queue means stop.
"""
import dataclasses
import os
import queue
import random

import numpy as np

from ...._utils import ExceptionWrapper
from ....aten.parallel import set_num_threads
from ....c10.map_allocator import close_naming
from ....random import manual_seed
from . import MP_STATUS_CHECK_INTERVAL
from .fetch import create_fetcher

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """Who this worker is: ``id`` (0 to ``num_workers - 1``), ``num_workers``, the ``seed`` it was
    given and its copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """This worker's WorkerInfo, or None in the main process (a dataset's ``__iter__`` uses it
    to give each worker its own share)."""
    return _worker_info


@dataclasses.dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's IterableDataset has no more samples."""

    worker_id: int


@dataclasses.dataclass(frozen=True)
class _ResumeIteration:
    """A persistent worker is told a new epoch begins (and answers with the same object)."""

    seed: object = None


def _generate_state(base_seed, worker_id):
    """NumPy's seed for a worker: four 32-bit words. torch spells out NumPy's ``SeedSequence``
    hash (so it works without NumPy); from the entropy ``[worker_id, low word of base_seed, high
    word, 0]`` NumPy computes the same words itself."""
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(entropy).generate_state(4).tolist()


class ManagerWatchdog:
    """Whether the process that started this worker still lives (if it died, the worker's
    parent becomes another process)."""

    def __init__(self):
        self.manager_pid, self.manager_dead = os.getppid(), False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _seed_worker(base_seed, worker_id):
    """Python's, the default generator's and NumPy's global streams, in torch's order."""
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, persistent_workers):
    """torch's ``_worker_loop``, its arguments in its order (less the datapipe's shared seed)."""
    global _worker_info
    try:
        set_num_threads(1)
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_exception = fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:       # reported with the first batch this worker is asked for
            init_exception = ExceptionWrapper(where=where)
        _serve(index_queue, data_queue, done_event, iterable, fetcher, init_exception, where, worker_id,
               lambda: create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last))
    except KeyboardInterrupt:   # the main process is being interrupted too; it reports that
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
        # The process now ends without waiting for the queue's thread, which may be sharing a
        # batch's storage: let it finish naming a segment (or name none), so no name is left.
        close_naming()


def _serve(index_queue, data_queue, done_event, iterable, fetcher, init_exception, where, worker_id, new_fetcher):
    """The loop: one task in, one result out, until ``None`` or until the parent is gone."""
    iteration_end = False
    watchdog = ManagerWatchdog()
    while watchdog.is_alive():
        try:
            r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
        except queue.Empty:
            continue
        if isinstance(r, _ResumeIteration):     # a new epoch for a persistent worker: a fresh fetcher
            data_queue.put((r, None))
            iteration_end, fetcher = False, new_fetcher()
            continue
        if r is None:
            break
        if done_event.is_set() or iteration_end:    # drain what was sent before the stop
            continue
        idx, index = r
        if init_exception is not None:
            data, init_exception = init_exception, None
        else:
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                if not iterable:
                    data = ExceptionWrapper(where=where)
                else:
                    data, iteration_end = _IterableDatasetStopIteration(worker_id), True
            except Exception:
                data = ExceptionWrapper(where=where)
        data_queue.put((idx, data))
        del data, idx, index, r     # a batch lives no longer than it must: its memory is shared
