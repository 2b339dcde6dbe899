"""Datasets and the DataLoader (``torch/utils/data``): indexable data, the order to visit it in,
and batches stacked into tensors.

The random part is torch's, draw for draw: ``shuffle=True`` uses a ``RandomSampler`` that, with
no generator given, takes a 64-bit seed from the default generator and shuffles with
``randperm`` on a fresh generator seeded with it; and each pass over a DataLoader first draws a
"base seed" (torch's, meant for worker processes). So after the same ``manual_seed`` the batches
come in torch's order.
"""
from ._utils.worker import get_worker_info
from .dataloader import DataLoader, default_collate, default_convert
from .dataset import (
                      ChainDataset,
                      ConcatDataset,
                      Dataset,
                      IterableDataset,
                      StackDataset,
                      Subset,
                      TensorDataset,
                      random_split,
)
from .distributed import DistributedSampler
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "DataLoader", "default_collate",
           "default_convert", "get_worker_info"]
