"""``torch/utils/data/dataloader.py``, ``_utils/collate.py`` and ``_utils/fetch.py``: batches from a
dataset, in the main process (``num_workers=0``). A map-style dataset is read at the sampler's
indices; an IterableDataset is read in its own order, ``batch_size`` samples at a time."""
import collections.abc
import itertools
import math

from ... import _tensor
from ..._functional import stack
from ...aten.native.tensor_factories import empty, tensor
from ...c10 import scalar_type as st
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate"]


def default_collate(batch):
    """torch's ``default_collate``: tensors stack along a new first dimension; Python ints,
    floats and bools become int64, float64 and bool tensors; tuples, lists and dicts collate
    field by field."""
    elem = batch[0]
    if isinstance(elem, _tensor.Tensor):
        return stack([t.detach() for t in batch], 0)     # a batch of data records no history
    if isinstance(elem, bool):
        return tensor(batch, dtype=st.bool_)
    if isinstance(elem, int):
        return tensor(batch, dtype=st.int64)
    if isinstance(elem, float):
        return tensor(batch, dtype=st.float64)
    if isinstance(elem, str):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch, strict=True)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(list(s)) for s in zip(*batch, strict=True)]
        return tuple(fields) if isinstance(elem, tuple) else fields
    raise TypeError(f"default_collate: batch must contain tensors, numbers, dicts or lists; found {type(elem)}")


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
                 collate_fn=None, drop_last=False, generator=None):
        if num_workers != 0:
            raise NotImplementedError("internals' DataLoader loads in the main process: num_workers must be 0")
        if isinstance(dataset, IterableDataset):
            _check_iterable_options(shuffle, sampler, batch_sampler)
            sampler = _InfiniteConstantSampler()
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last, self.generator = dataset, batch_size, drop_last, generator
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.collate_fn = collate_fn or (default_collate if batch_sampler is not None else (lambda x: x))
        self.num_workers = num_workers

    def __iter__(self):
        """One pass. As ``_BaseDataLoaderIter.__init__``, starting it draws the base seed at once;
        the sampler's own draws come with the first batch."""
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
