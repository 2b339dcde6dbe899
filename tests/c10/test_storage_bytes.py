"""A storage's bytes read the same way in internals as in torch: ``storage[i]``, ``tolist()``, ``bytes()``."""
import pytest
import torch
from helpers import DTYPE_PAIRS

import internals


@pytest.mark.parametrize("ours_dtype, torch_dtype", DTYPE_PAIRS, ids=[t.name for t, _ in DTYPE_PAIRS])
def test_storage_bytes_match_torch(ours_dtype, torch_dtype):
    values = [0, 1, 2, 100, 7]
    ours = internals.tensor(values, dtype=ours_dtype).untyped_storage()
    theirs = torch.tensor(values, dtype=torch_dtype).untyped_storage()
    assert bytes(ours) == bytes(theirs)
    assert ours.tolist() == theirs.tolist()
    assert [ours[i] for i in (0, 1, -1)] == [theirs[i] for i in (0, 1, -1)]


def test_storage_index_out_of_range_raises_index_error():
    ours = internals.tensor([1.5, -2.0]).untyped_storage()
    theirs = torch.tensor([1.5, -2.0]).untyped_storage()
    for i in (8, -9):
        with pytest.raises(IndexError):
            theirs[i]
        with pytest.raises(IndexError):
            ours[i]


def test_cuda_storage_bytes_match_cpu():
    x = internals.tensor([1.5, -2.0, 3.0], device="cuda")
    assert bytes(x.untyped_storage()) == bytes(torch.tensor([1.5, -2.0, 3.0]).untyped_storage())


def test_storage_on_a_device_without_allocator_raises():
    with pytest.raises(NotImplementedError):
        internals.empty(2, device="meta")
