"""Datasets and the DataLoader (``torch/utils/data``): indexable data, the order to visit it in,
and batches stacked into tensors.

The random part is torch's, draw for draw: ``shuffle=True`` uses a ``RandomSampler`` that, with
no generator given, takes a 64-bit seed from the default generator and shuffles with
``randperm`` on a fresh generator seeded with it; and each pass over a DataLoader first draws a
"base seed" (torch's, meant for worker processes). So after the same ``manual_seed`` the batches
come in torch's order.
"""
from .dataloader import DataLoader, default_collate, default_convert
from .dataset import Dataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "TensorDataset", "Sampler", "SequentialSampler", "RandomSampler", "BatchSampler",
           "DataLoader", "default_collate", "default_convert"]
