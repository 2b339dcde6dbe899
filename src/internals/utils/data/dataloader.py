"""``torch/utils/data/dataloader.py`` and ``_utils/collate.py``: batches from a dataset, in the
main process (``num_workers=0``) or in worker processes. A map-style dataset is read at the
sampler's indices; an IterableDataset is read in its own order, ``batch_size`` samples at a time.

With workers (``_MultiProcessingDataLoaderIter``), the main process keeps the sampler: it sends
each batch's indices, numbered, to the workers' index queues in turn (``prefetch_factor`` tasks
per worker in flight), and reads ``(number, batch)`` pairs from one result queue shared by all
workers. Batches that arrive early wait in ``_task_info`` until their turn, so the loader yields
them in the sampler's order whatever order the workers finish in."""
import collections.abc
import copy
import itertools
import math
import os
import queue
import re
import time
import typing
import warnings
from multiprocessing.context import BaseContext

import numpy as np

from ... import _tensor, cuda
from ... import _utils as _exceptions
from ... import multiprocessing as _multiprocessing
from ..._functional import as_tensor, stack
from ...aten.native.tensor_factories import empty, tensor
from ...c10 import scalar_type as st
from ...c10.tensor_impl import strided
from . import _utils as _worker_utils
from ._utils import MP_STATUS_CHECK_INTERVAL, signal_handling
from ._utils import worker as _worker
from ._utils.fetch import create_fetcher
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_STRING_OR_OBJECT_DTYPE = re.compile(r"[SaUO]")    # NumPy dtype codes no tensor can hold


def _collate_tensors(batch):
    """Stacked along a new first dimension, history kept (a batch of tensors that require grad
    gets StackBackward0). A sparse tensor (any layout but strided) is refused, as torch does."""
    if batch[0].layout is not strided:
        raise RuntimeError("Batches of sparse tensors are not currently supported by the default collate_fn; "
                           "please provide a custom collate_fn to handle them appropriately.")
    return stack(batch, 0)         # as given: a tensor passed as the batch is refused by stack, as in torch


def _collate_arrays(batch):
    if _STRING_OR_OBJECT_DTYPE.search(batch[0].dtype.str):
        raise TypeError(_ERROR.format(batch[0].dtype))
    return default_collate([as_tensor(b) for b in batch])


# Element type -> how a batch of it is collated, tried in this order (``default_collate_fn_map``):
# the exact type first, then the first entry the element is an instance of. A bool is an int, so
# [True, 2] goes to tensor() as a whole and comes back int64, [1, 2.5] float32, [2.5, 1] float64.
_COLLATE_BY_TYPE = {
    _tensor.Tensor: _collate_tensors,
    np.ndarray: _collate_arrays,
    (np.bool_, np.number, np.object_): lambda batch: as_tensor(np.asarray(batch)),
    float: lambda batch: tensor(list(batch), dtype=st.float64),
    int: lambda batch: tensor(list(batch)),
    str: lambda batch: batch,          # strings and bytes stay as given (a tuple from a transposed batch)
    bytes: lambda batch: batch,
}


def _collate_fn_for(elem):
    if type(elem) in _COLLATE_BY_TYPE:
        return _COLLATE_BY_TYPE[type(elem)]
    return next((fn for kind, fn in _COLLATE_BY_TYPE.items() if isinstance(elem, kind)), None)


def _rebuilt_like(elem, fields):
    """``fields`` (a dict, or a list) in ``elem``'s own container type, as torch's collate and
    convert keep it: a mutable mapping or sequence is copied and refilled (its type and
    attributes kept), another type is built from the fields, and one that can be neither (a
    ``range``, a mapping without a dict constructor) gives the plain dict or list."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(fields)
            return clone
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, field in enumerate(fields):
                clone[i] = field
            return clone
        return type(elem)(fields)
    except TypeError:
        return fields


def _collate_mapping(batch):
    elem = batch[0]
    fields = {key: default_collate([d[key] for d in batch]) for key in elem}
    return _rebuilt_like(elem, fields)


def _collate_sequence(batch):
    elem = batch[0]
    if any(len(e) != len(elem) for e in batch):
        raise RuntimeError("each element in list of batch should be of equal size")
    fields = [default_collate(samples) for samples in zip(*batch)]
    if isinstance(elem, tuple):
        return fields                   # torch gives tuples back as lists
    return _rebuilt_like(elem, fields)


def default_collate(batch):
    """torch's ``default_collate`` (``torch/utils/data/_utils/collate.py``): tensors stack along a
    new first dimension; NumPy arrays and scalars become tensors; a batch of Python numbers becomes
    one tensor as ``tensor()`` types it (floats float64); strings and bytes stay as they are;
    mappings, named tuples and sequences collate field by field."""
    elem = batch[0]
    fn = _collate_fn_for(elem)
    if fn is not None:
        return fn(batch)
    if isinstance(elem, collections.abc.Mapping):
        return _collate_mapping(batch)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        return _collate_sequence(batch)
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data):
    """torch's ``default_convert``, what a loader without batching applies to each sample: NumPy
    arrays and scalars become tensors, containers are converted element by element."""
    if isinstance(data, _tensor.Tensor):
        return data
    if isinstance(data, (np.ndarray, np.bool_, np.number)) and not _STRING_OR_OBJECT_DTYPE.search(data.dtype.str):
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        # the mapping's own type kept (an OrderedDict stays one), as collating keeps it
        return _rebuilt_like(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt_like(data, [default_convert(d) for d in data])
    return data


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    """torch's checks of the worker options, in its order."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
                         "enable multiprocessing, otherwise set prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _check_context(context, num_workers):
    """``DataLoader.multiprocessing_context``'s setter: a start method's name or a context, and
    only with workers. None is Python's default context (``fork`` on Linux)."""
    if context is None:
        return None
    if num_workers == 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                         f"but got num_workers={num_workers}")
    if isinstance(context, str):
        methods = _multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start method in {methods!r}, "
                             f"but got multiprocessing_context={context!r}")
        return _multiprocessing.get_context(context)
    if not isinstance(context, BaseContext):
        raise TypeError("multiprocessing_context option should be a valid context object or a string specifying "
                        f"the start method, but got multiprocessing_context={context}")
    return context


def _warn_if_too_many_workers(num_workers):
    """torch's ``check_worker_number_rationality``: more workers than CPUs this process may run
    on (its affinity set, which counts cgroup and taskset limits) earns a warning."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if cpus is not None and num_workers <= cpus:
        return
    suggestion = ("DataLoader is not able to compute a suggested max number of worker in current system."
                  if cpus is None else
                  f"Our suggested max number of worker in current system is {cpus}"
                  f"{'' if hasattr(os, 'sched_getaffinity') else ' (`cpuset` is not taken into account)'}, "
                  "which is smaller than what this DataLoader is going to create.")
    warnings.warn(f"This DataLoader will create {num_workers} worker processes in total. {suggestion} Please be "
                  "aware that excessive worker creation might get DataLoader running slow or even freeze, lower the "
                  "worker number to avoid potential slowness/freeze if necessary.", stacklevel=3)


def _pin_memory_enabled(loader):
    """Pinned (page-locked) memory is what a GPU's copy engine reads without a staging copy, so
    pinning only means something with an accelerator. Like torch on a machine without one, the
    loader warns and yields ordinary pageable batches; it does the same on a GPU (nothing here
    allocates page-locked host memory)."""
    if loader.pin_memory:
        if cuda.is_available() and not cuda.is_simulated():
            warnings.warn("internals does not pin memory: batches stay in pageable memory", stacklevel=3)
        else:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=3)
    return False


class _InfiniteConstantSampler(Sampler):
    """An IterableDataset's sampler: ``None`` forever, so that a BatchSampler over it only counts
    out ``batch_size`` places per batch; the dataset's iterator fills them."""

    def __iter__(self):
        while True:
            yield None


def _check_iterable_options(shuffle, sampler, batch_sampler):
    """An IterableDataset orders its samples itself: no shuffle, sampler or batch_sampler."""
    for name, value, unset in (("shuffle", shuffle, shuffle in (False, None)), ("sampler", sampler, sampler is None),
                               ("batch_sampler", batch_sampler, batch_sampler is None)):
        if not unset:
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                             f"{name}={value}")


_T_co = typing.TypeVar("_T_co", covariant=True)


class DataLoader(typing.Generic[_T_co]):
    """Iterate over ``dataset`` in batches of ``batch_size``, shuffled or in order (generic in
    the batch type, as torch's)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        """torch's arguments, in its order. pin_memory (page-locked batches for faster copies to a
        GPU), timeout, worker_init_fn, multiprocessing_context, prefetch_factor, persistent_workers
        and in_order concern worker processes or pinned memory: they are checked as torch checks
        them and kept, and change nothing in a main-process loader."""
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if isinstance(dataset, IterableDataset):
            _check_iterable_options(shuffle, sampler, batch_sampler)
            sampler = _InfiniteConstantSampler()
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        if batch_sampler is None and batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last, self.generator = dataset, batch_size, drop_last, generator
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.collate_fn = collate_fn or (default_collate if batch_sampler is not None else default_convert)
        self.num_workers, self.pin_memory, self.timeout = num_workers, pin_memory, timeout
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.pin_memory_device, self.in_order, self.worker_init_fn = pin_memory_device, in_order, worker_init_fn
        self.multiprocessing_context = _check_context(multiprocessing_context, num_workers)
        self._iterator = None       # the one iterator persistent workers keep between epochs
        self._IterableDataset_len_called = None    # what len(loader) last said of an IterableDataset
        _warn_if_too_many_workers(num_workers)     # here and again for each new set of workers
        self._initialized = True

    # What an iterator, or a pass already started, reads: torch refuses changing them afterwards.
    _FIXED_AFTER_INIT = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")

    def __setattr__(self, attr, val):
        if getattr(self, "_initialized", False) and attr in self._FIXED_AFTER_INIT:
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _index_sampler(self):
        """What the iterator draws from: batches of indices, or single indices without batching."""
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __iter__(self):
        """One pass. As ``_BaseDataLoaderIter.__init__``, starting it draws the base seed at once;
        the sampler's own draws come with the first batch. With ``persistent_workers`` the same
        workers serve every pass, so later passes draw no base seed (torch's ``_reset``)."""
        if self.num_workers == 0:
            return self._single_process_iter()
        if not self.persistent_workers:
            _warn_if_too_many_workers(self.num_workers)
            return _MultiProcessingDataLoaderIter(self)
        if self._iterator is None:
            _warn_if_too_many_workers(self.num_workers)
            self._iterator = _MultiProcessingDataLoaderIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def _single_process_iter(self):
        _pin_memory_enabled(self)
        if self.timeout != 0:    # torch's single-process iterator asserts it (a timeout is for workers)
            raise AssertionError("a single-process DataLoader iterator requires timeout == 0")
        return _SingleProcessDataLoaderIter(self)

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):       # trusts the dataset's own length,
            length = self._IterableDataset_len_called = len(self.dataset)   # and its iterators warn past it
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


def _warn_past_reported_length(iterator, num_workers):
    """torch's ``_BaseDataLoaderIter.__next__``: an IterableDataset whose ``len(loader)`` was asked
    and that then yields more batches than it said gets a warning for each extra batch."""
    reported = iterator._IterableDataset_len_called
    if iterator._iterable and reported is not None and iterator._num_yielded > reported:
        message = (f"Length of IterableDataset {iterator._dataset} was reported to be {reported}(when accessing "
                   f"len(dataloader)), but {iterator._num_yielded} samples have been fetched. ")
        if num_workers > 0:
            message += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
        warnings.warn(message, stacklevel=3)


class _SingleProcessDataLoaderIter:
    """torch's iterator in the main process (torch/utils/data/dataloader.py): an object, not a
    generator, so that ``len(iter(loader))`` is the number of batches of a pass. Creating it takes
    the sampler's iterator, draws the base seed and starts the dataset's fetcher, as torch does."""

    def __init__(self, loader):
        self._index_sampler, self._dataset = loader._index_sampler, loader.dataset
        self._iterable = isinstance(loader.dataset, IterableDataset)
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = empty((), dtype=st.int64).random_(generator=loader.generator).item()
        self._num_yielded, self._IterableDataset_len_called = 0, loader._IterableDataset_len_called
        self._dataset_fetcher = create_fetcher(self._iterable, loader.dataset, loader.batch_sampler is not None,
                                               loader.collate_fn, loader.drop_last)

    def __iter__(self):
        return self

    def __next__(self):
        data = self._dataset_fetcher.fetch(next(self._sampler_iter))   # either may raise StopIteration
        self._num_yielded += 1
        _warn_past_reported_length(self, 0)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", type(self).__name__)


class _MultiProcessingDataLoaderIter:
    """torch's iterator over worker processes. Its state: ``_send_idx`` (the next task's number),
    ``_rcvd_idx`` (the next number to yield), ``_task_info`` (number -> ``(worker,)`` while the
    task is out, ``(worker, batch)`` once its batch came early) and ``_workers_status`` (which
    workers still take tasks)."""

    def __init__(self, loader):
        self._pin_memory = _pin_memory_enabled(loader)
        self._index_sampler = loader._index_sampler
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = empty((), dtype=st.int64).random_(generator=loader.generator).item()
        self._num_workers, self._timeout = loader.num_workers, loader.timeout
        self._persistent_workers, self._prefetch_factor = loader.persistent_workers, loader.prefetch_factor
        if self._prefetch_factor <= 0:      # the loader accepts 0; torch's iterator then refuses it
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        self._in_order, self._shutdown, self._worker_pids_set = loader.in_order, False, False
        self._iterable, self._dataset = isinstance(loader.dataset, IterableDataset), loader.dataset
        context = loader.multiprocessing_context or _multiprocessing
        self._worker_result_queue = self._data_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._index_queues, self._workers = [], []
        for worker_id in range(self._num_workers):
            self._start_worker(context, loader, worker_id)
        signal_handling._set_worker_pids(id(self), tuple(w.pid for w in self._workers))
        signal_handling._set_SIGCHLD_handler()
        self._worker_pids_set = True
        self._reset(loader, first_iter=True)

    def _start_worker(self, context, loader, worker_id):
        index_queue = context.Queue()
        index_queue.cancel_join_thread()    # indices left unread must not block this process's exit
        w = context.Process(target=_worker._worker_loop, daemon=True, args=(
            self._iterable, loader.dataset, index_queue, self._worker_result_queue, self._workers_done_event,
            loader.batch_sampler is not None, loader.collate_fn, loader.drop_last, self._base_seed,
            loader.worker_init_fn, worker_id, self._num_workers, self._persistent_workers))
        w.start()
        self._index_queues.append(index_queue)
        self._workers.append(w)

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _reset(self, loader, first_iter=False):
        """A new pass: a fresh sampler iterator; for persistent workers, a fresh fetcher in each
        (they answer ``_ResumeIteration``); then ``prefetch_factor`` tasks per worker sent ahead."""
        if not first_iter:
            self._sampler_iter = iter(loader._index_sampler)
        self._send_idx, self._rcvd_idx, self._task_info, self._tasks_outstanding = 0, 0, {}, 0
        self._num_yielded, self._IterableDataset_len_called = 0, loader._IterableDataset_len_called
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for index_queue in self._index_queues:
                index_queue.put(_worker._ResumeIteration())
            resumed = 0
            while resumed < self._num_workers:
                idx, _ = self._get_data()
                resumed += isinstance(idx, _worker._ResumeIteration)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        """Send the sampler's next indices to the next worker in turn that still takes tasks."""
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        _warn_past_reported_length(self, self._num_workers)
        return data

    def _next_data(self):
        """The batch numbered ``_rcvd_idx``: from the buffer if it came early, else read results,
        buffering those that come before their turn, until it arrives."""
        while True:
            if not self._skip_to_next_live_task():
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:       # it came early and waited
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._worker_finished(data.worker_id)
                continue
            if idx != self._rcvd_idx and self._in_order:
                self._task_info[idx] += (data,)
                continue
            self._task_info.pop(idx)
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
            return self._process_data(data)

    def _skip_to_next_live_task(self):
        """Move ``_rcvd_idx`` past tasks no worker will answer (their worker's dataset ended);
        False when nothing is left to yield."""
        while self._rcvd_idx < self._send_idx:
            info = self._task_info.get(self._rcvd_idx)
            if info and (len(info) == 2 or self._workers_status[info[0]]):
                return True
            self._task_info.pop(self._rcvd_idx, None)
            self._rcvd_idx += 1
        return False

    def _worker_finished(self, worker_id):
        """An IterableDataset's copy in that worker is exhausted: it gets no more tasks."""
        if self._persistent_workers:
            self._workers_status[worker_id] = False
        else:
            self._mark_worker_as_unavailable(worker_id)
        self._try_put_index()

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, _exceptions.ExceptionWrapper):
            data.reraise()
        return data

    def _get_data(self):
        """The next result; with a ``timeout``, a RuntimeError once it has passed with nothing."""
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if not success:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _try_get_data(self, timeout=MP_STATUS_CHECK_INTERVAL):
        """Wait up to ``timeout`` for a result. Whatever interrupts the wait (nothing came, or the
        SIGCHLD handler's error), a worker found dead turns it into torch's "exited unexpectedly"."""
        try:
            signal_handling._error_if_any_worker_fails(id(self))
            with signal_handling.waiting():
                return True, self._data_queue.get(timeout=timeout)
        except Exception as e:
            failed = self._dead_workers()
            if not failed and not isinstance(e, queue.Empty):
                failed = self._wait_for_an_exiting_worker()
            for w in failed:
                self._mark_worker_as_unavailable(self._workers.index(w))
            signal_handling._forget_pids(id(self), [w.pid for w in failed])
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") \
                    from self._cause(e, failed)
            if isinstance(e, queue.Empty):
                return False, None
            raise

    @staticmethod
    def _cause(error, failed):
        """What interrupted the wait, unless it was only a symptom of the death (the killed
        worker's socket reset before SIGCHLD was handled, which a busy machine makes likely):
        then the handler's own error, as torch reports it when its handler runs first."""
        if isinstance(error, (RuntimeError, queue.Empty)):
            return error
        message = signal_handling._failure_of(failed[0])
        return error if message is None else RuntimeError(message)

    def _wait_for_an_exiting_worker(self, limit=5.0):
        """After a connection reset by a worker: the kernel closes a killed process's sockets
        before ``waitpid`` sees it gone, so wait until one is seen dead (a busy machine can take
        more than a moment), at most ``limit`` seconds; the error path only."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            for worker_id, w in enumerate(self._workers):
                if self._workers_status[worker_id]:
                    w.join(timeout=0.01)
            failed = self._dead_workers()
            if failed:
                return failed
        return []

    def _dead_workers(self):
        return [w for worker_id, w in enumerate(self._workers) if self._workers_status[worker_id] and not w.is_alive()]

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        """Tell the worker to stop (``None`` on its index queue) and send it nothing more."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        """Stop every worker and wait a bounded time for each; one still alive then is terminated.
        Runs at the end of a pass, on an error, and when the iterator is collected."""
        if _worker_utils.python_exit_status or self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for index_queue in self._index_queues:
                index_queue.cancel_join_thread()
                index_queue.close()
        finally:
            if self._worker_pids_set:
                signal_handling._remove_worker_pids(id(self))
                self._worker_pids_set = False
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()

    def __del__(self):
        if getattr(self, "_workers", None) is not None:
            self._shutdown_workers()
