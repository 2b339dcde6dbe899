"""One replica's share of a dataset (``torch/utils/data/distributed.py``): the indices, shuffled
alike on every replica (a generator seeded with ``seed + epoch``), padded or cut to a multiple of
the number of replicas, then dealt out round-robin, so each replica sees a different part."""
import math

from ...aten.native.distributions import randperm
from ...c10.generator import Generator
from .sampler import Sampler


class DistributedSampler(Sampler):
    """Replica ``rank`` of ``num_replicas`` (both read from the default process group when not
    given) takes every ``num_replicas``-th index from position ``rank``. Without ``drop_last`` the
    list is padded with its own first indices up to a multiple of ``num_replicas``; with it the
    list is cut down to one. Call :meth:`set_epoch` before each epoch for a new order."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _default_group("get_world_size")
        if rank is None:
            rank = _default_group("get_rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)   # the cut-down share
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = randperm(n, generator=Generator().manual_seed(self.seed + self.epoch)).tolist()
        else:
            indices = list(range(n))
        missing = self.total_size - len(indices)
        if not self.drop_last and missing > 0:
            repeats = math.ceil(missing / len(indices))       # a short list is repeated whole first
            indices += (indices * repeats)[:missing]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch joins the seed: each epoch a new order, the same on every replica."""
        self.epoch = epoch


def _default_group(query):
    from ... import distributed  # the process group lives above the data utilities: asked only here
    if not distributed.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return getattr(distributed, query)()
