"""Chapter 3's claims about versions and lifetimes, checked against torch.

* A tensor a factory or an op returns is at version 0: the writes made while building it are below
  the layer that counts versions (torch's ADInplaceOrView); only the user's in-place calls count.
* A storage stays allocated while anything refers to it, a NumPy array from ``.numpy()`` included.
"""
import gc

import numpy as np
import pytest
import torch

import internals
from internals.c10.allocator import cpu_allocator

FRESH = {
    "zeros": lambda t: t.zeros(3),
    "ones": lambda t: t.ones(3),
    "full": lambda t: t.full((2,), 3.0),
    "zeros_like": lambda t: t.zeros_like(t.ones(2)),
    "tensor": lambda t: t.tensor([1.0, 2.0]),
    "arange": lambda t: t.arange(6),
    "linspace": lambda t: t.linspace(0, 1, 5),
    "eye": lambda t: t.eye(3),
    "to(float64)": lambda t: t.ones(3).to(t.float64),
    "to(bfloat16)": lambda t: t.ones(3).to(t.bfloat16),
    "clone": lambda t: t.ones(3).t().clone(),
    "contiguous": lambda t: t.ones(2, 3).t().contiguous(),
    "reshape copy": lambda t: t.ones(2, 3).t().reshape(6),
    "mean": lambda t: t.ones(2, 3).mean(0),
    "sum(dtype)": lambda t: t.ones(2, 3).sum(0, dtype=t.float64),
    "mm float16": lambda t: t.ones(2, 2, dtype=t.float16).mm(t.ones(2, 2, dtype=t.float16)),
    "add": lambda t: t.ones(3) + 1,
}


@pytest.mark.parametrize("name", FRESH)
def test_fresh_tensors_start_at_version_zero(name):
    make = FRESH[name]
    assert make(internals)._version == make(torch)._version == 0


def _in_place_story(t):
    a = t.zeros(2, 3)
    view = a.t()
    versions = []
    for write in (lambda: a.add_(1), lambda: view.mul_(2), lambda: a.fill_(0), lambda: a.zero_(),
                  lambda: a.copy_(t.ones(3)), lambda: a.__setitem__(0, 5.0), lambda: a[1].exp_(),
                  lambda: a.div_(2), lambda: a.relu_()):
        write()
        versions.append((a._version, view._version))
    return versions


def test_each_user_in_place_call_bumps_once():
    assert _in_place_story(internals) == _in_place_story(torch)


@pytest.fixture
def heap_frozen():
    """Everything older than the test moved out of the collector's sight (``gc.freeze``), so that
    each ``gc.collect`` below walks only the objects the test made: a worker's heap, after a few
    thousand tests, takes seconds a collection. What the test frees, cycles included, is still
    collected. The older objects stay frozen afterwards, as conftest.py froze what collection left
    (unfreezing would hand those back to every later walk too); what was garbage is collected
    first, so none of it is kept for good."""
    gc.collect()
    gc.freeze()
    yield


def _allocated():
    gc.collect()
    return cpu_allocator.allocated_bytes


def test_numpy_array_keeps_the_storage_allocated(heap_frozen):
    start = _allocated()
    x = internals.zeros(1000)
    array = x[10:20].numpy()
    del x
    assert _allocated() - start == 4000          # the array still refers to the bytes
    array[0] = 7.0                               # and may still write them
    del array
    assert _allocated() - start == 0


def test_numpy_array_base_holds_the_tensor():
    x = internals.arange(6.0).reshape(2, 3).t()
    array = x.numpy()
    assert array.base.tensor is x
    assert array.flags.writeable and array.strides == x.to_torch().numpy().strides
    array[1, 0] = -1.0
    assert x.tolist() == [[0.0, 3.0], [-1.0, 4.0], [2.0, 5.0]]


def test_from_numpy_allocates_nothing(heap_frozen):
    start = _allocated()
    t = internals.from_numpy(np.zeros(1000))
    assert _allocated() - start == 0
    del t
