"""``torch/utils/data/dataset.py``: map-style and iterable datasets, their combinations, and
``random_split``."""
import bisect
import collections.abc
import itertools
import math
import typing
import warnings

from ..._functional import randperm
from ...c10.generator import default_generator

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]


_T_co = typing.TypeVar("_T_co", covariant=True)


class Dataset(typing.Generic[_T_co]):
    """Anything with ``__getitem__(index)`` (and, for samplers, ``__len__``); generic in its
    sample type, as torch's (``Dataset[int]`` is a type hint a reader may write)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], collections.abc.Iterable[_T_co]):
    """A stream of samples, read with ``__iter__`` in its own order (no indices, no sampler).
    An abstract ``Iterable``, as torch's: a subclass without ``__iter__`` cannot be made."""

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is ``(t[i] for t in tensors)``; all tensors share their first dimension."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Sample i gathers sample i of each dataset: a tuple (positional datasets) or a dict (keywords)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = list(args or kwargs.values())
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        """A batch of samples: each dataset that reads batches (``__getitems__``) is asked for all
        the indices at once, the others one index at a time, as the DataLoader's fetcher does."""
        named = isinstance(self.datasets, dict)
        columns = {k: self._column(d, indices) for k, d in (self.datasets.items() if named
                                                             else enumerate(self.datasets))}
        if named:
            return [{k: column[i] for k, column in columns.items()} for i in range(len(indices))]
        return [tuple(column[i] for column in columns.values()) for i in range(len(indices))]

    @staticmethod
    def _column(dataset, indices):
        if not callable(getattr(dataset, "__getitems__", None)):
            return [dataset[i] for i in indices]
        items = dataset.__getitems__(indices)
        if len(items) != len(indices):
            raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
        return items

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Map-style datasets one after another: index i falls in the first dataset whose running total
    of lengths exceeds it."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if dataset_idx == 0 else self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][idx - start]


def _iterable_only(d):
    if not isinstance(d, IterableDataset):
        raise AssertionError("ChainDataset only supports IterableDataset")
    return d


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, read lazily."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            yield from _iterable_only(d)

    def __len__(self):
        return sum(len(_iterable_only(d)) for d in self.datasets)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, renumbered from 0."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        # The DataLoader reads batches through __getitems__, which would bypass an overridden __getitem__.
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When subclassing Subset and "
                "overriding __getitem__, you must also override __getitems__ to ensure DataLoader works correctly "
                "with your custom logic. A simple implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        """A whole batch at once (the DataLoader's fast path), through the dataset's own if it has one."""
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def _lengths_from_fractions(n, fractions):
    """floor(n · fraction) each, then the remainder handed out one by one from the first split."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                          stacklevel=3)
    return lengths


def random_split(dataset, lengths, generator=default_generator):
    """Split into non-overlapping Subsets of the given lengths (or fractions summing to 1), from one
    ``randperm`` of the whole: the same splits as torch's after the same seed."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[end - length:end])
            for end, length in zip(itertools.accumulate(lengths), lengths, strict=True)]
