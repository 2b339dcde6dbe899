"""``torch/utils/data/dataset.py``: Dataset and TensorDataset."""

__all__ = ["Dataset", "TensorDataset"]


class Dataset:
    """Anything with ``__getitem__(index)`` (and, for samplers, ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")


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
