"""``torch/utils/data/dataloader.py``, ``_utils/collate.py`` and ``_utils/fetch.py``: batches from a
dataset, in the main process (``num_workers=0``). A map-style dataset is read at the sampler's
indices; an IterableDataset is read in its own order, ``batch_size`` samples at a time."""
import collections.abc
import copy
import itertools
import math
import re

import numpy as np

from ... import _tensor
from ..._functional import as_tensor, stack
from ...aten.native.tensor_factories import empty, tensor
from ...c10 import scalar_type as st
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_STRING_OR_OBJECT_DTYPE = re.compile(r"[SaUO]")    # NumPy dtype codes no tensor can hold


def _collate_tensors(batch):
    """Stacked along a new first dimension, history kept (a batch of tensors that require grad
    gets StackBackward0)."""
    return stack(list(batch), 0)


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


def _collate_mapping(batch):
    elem = batch[0]
    fields = {key: default_collate([d[key] for d in batch]) for key in elem}
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)     # keeps the mapping's own type and attributes
            clone.update(fields)
            return clone
        return type(elem)(fields)
    except TypeError:                   # a mapping type that cannot be copied or built from a dict
        return fields


def _collate_sequence(batch):
    elem = batch[0]
    if any(len(e) != len(elem) for e in batch):
        raise RuntimeError("each element in list of batch should be of equal size")
    fields = [default_collate(samples) for samples in zip(*batch)]
    if isinstance(elem, tuple):
        return fields                   # torch gives tuples back as lists
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, field in enumerate(fields):
                clone[i] = field
            return clone
        return type(elem)(fields)
    except TypeError:                   # range and the like cannot be rebuilt from a list
        return fields


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
        return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    """torch's checks of the worker options, in its order. The loader itself runs in the main
    process, so beyond these checks num_workers > 0 is refused."""
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
    if num_workers != 0:
        raise NotImplementedError("internals' DataLoader loads in the main process: num_workers must be 0")


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


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size``, shuffled or in order."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        """torch's arguments, in its order. pin_memory (page-locked batches for faster copies to a
        GPU), timeout, worker_init_fn, multiprocessing_context, prefetch_factor, persistent_workers
        and in_order concern worker processes or pinned memory: they are checked as torch checks
        them and kept, and change nothing in a main-process loader."""
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
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
        self.num_workers, self.pin_memory, self.timeout, self.prefetch_factor = num_workers, pin_memory, timeout, None
        self.persistent_workers, self.pin_memory_device, self.in_order = persistent_workers, pin_memory_device, in_order
        self.worker_init_fn, self.multiprocessing_context = worker_init_fn, multiprocessing_context

    def __iter__(self):
        """One pass. As ``_BaseDataLoaderIter.__init__``, starting it draws the base seed at once;
        the sampler's own draws come with the first batch."""
        if self.timeout != 0:    # torch's single-process iterator asserts it (a timeout is for workers)
            raise AssertionError("a single-process DataLoader iterator requires timeout == 0")
        indices = iter(self.batch_sampler if self.batch_sampler is not None else self.sampler)
        empty((), dtype=st.int64).random_(generator=self.generator)
        if isinstance(self.dataset, IterableDataset):
            return self._stream_batches(indices, iter(self.dataset))    # the dataset's iterator starts now
        return self._batches(indices)

    def _batches(self, indices):
        for index in indices:
            if self.batch_sampler is None:
                yield self.collate_fn(self.dataset[index])
            elif callable(getattr(self.dataset, "__getitems__", None)):     # the dataset reads a batch at once
                yield self.collate_fn(self.dataset.__getitems__(index))
            else:
                yield self.collate_fn([self.dataset[i] for i in index])

    def _stream_batches(self, places, samples):
        """``_IterableDatasetFetcher``: up to ``batch_size`` samples per batch; a short last batch is
        kept unless ``drop_last``."""
        for place in places:
            if self.batch_sampler is None:      # batch_size=None: one sample at a time, not batched
                try:
                    sample = next(samples)
                except StopIteration:
                    return
                yield self.collate_fn(sample)
                continue
            batch = list(itertools.islice(samples, len(place)))
            if not batch or (self.drop_last and len(batch) < len(place)):
                return
            yield self.collate_fn(batch)
            if len(batch) < len(place):
                return

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):       # trusts the dataset's own length
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
