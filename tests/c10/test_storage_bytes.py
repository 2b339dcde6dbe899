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


@pytest.mark.parametrize("read", [bytes, lambda s: s.tolist(), lambda s: s[0]], ids=["bytes", "tolist", "item"])
def test_meta_storage_has_no_bytes_to_read(read):
    """The meta device's allocator gives no memory: the size is kept, every read refused as torch's."""
    ours = internals.empty(2, device="meta").untyped_storage()
    theirs = torch.empty(2, device="meta").untyped_storage()
    assert (ours.nbytes(), ours.data_ptr()) == (theirs.nbytes(), theirs.data_ptr()) == (8, 0)
    with pytest.raises(NotImplementedError) as their_error:
        read(theirs)
    with pytest.raises(NotImplementedError, match=str(their_error.value)):
        read(ours)
