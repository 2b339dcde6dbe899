"""Storages: bytes, slices, resizing and their bounds.

Each case differed from torch 2.13 before it was fixed."""

import numpy as np
import pytest
import torch
from helpers import same_error, same_or_same_error

import internals


@pytest.mark.parametrize("call", [
    lambda L: L.empty(1, 2**62, 12),
    lambda L: L.zeros(2**62, 12),
    lambda L: L.ones(2**63 - 1, 2, dtype=L.int8),
    lambda L: L.full((2**62, 12), 2.),
    lambda L: L.empty(2**63 - 1, 0),
    lambda L: L.empty(2**61, 2**61, dtype=L.int8, memory_format=L.channels_last),
    lambda L: L.empty(-2, 3, memory_format=L.preserve_format),
    lambda L: L.empty(2, -1, -3),
])
def test_factories_check_the_storage_size_before_the_strides(call):
    """``computeStorageNbytesContiguous`` refuses sizes whose bytes pass int64 before any stride
    is computed (the package named a stride or the element count)."""
    same_or_same_error(call)


# ----------------------------------------------------------------------------- storages and set_
@pytest.mark.parametrize("nbytes", [2**63, -2**63 - 1, 4.0, True, "3", -1])
def test_storage_resize_reads_its_argument_as_torch(nbytes):
    same_error(lambda L: L.ones(2).untyped_storage().resize_(nbytes))


@pytest.mark.parametrize("nbytes", [-1, -5])
def test_a_storage_of_negative_size_is_the_allocators_error(nbytes):
    same_error(lambda L: L.UntypedStorage(nbytes))


@pytest.mark.parametrize("size, stride", [((2**62, 4), (1, 1)), ((2**62, 4, 0), (1, 1, 1)), ((2**62, 4), None),
                                          ((2**31, 2**31), None), ((2**31, 2**31), (2**31, 1))])
def test_set_and_resize_count_elements_and_bytes_as_torch(size, stride):
    def run(L):
        y = L.empty(0)
        if stride is None:
            return y.resize_(*size)
        return y.set_(L.arange(6.).untyped_storage(), 0, size, stride)
    same_error(run)


# ----------------------------------------------------------------------------- leftovers
@pytest.mark.parametrize("size", [(2,), (2, 2), (3, 3), (0,)])
@pytest.mark.parametrize("template", [
    lambda L, s: L.zeros(s), lambda L, s: L.zeros(s).t() if len(s) == 2 else L.zeros(s),
    lambda L, s: L.zeros(s, dtype=L.int64)])
@pytest.mark.parametrize("how", ["method", "function", "channels_last", "preserve"])
def test_resize_as_takes_the_templates_sizes_not_its_strides(size, template, how):
    def run(L):
        x = L.arange(4.)
        t = template(L, size)
        if how == "function":
            return L.resize_as_(x, t).reshape(-1)[:min(4, x.numel())]
        if how == "channels_last":
            t = L.zeros(1, *size, 1) if len(size) == 2 else L.zeros(1, 2, 2, *size)
            return x.resize_as_(t, memory_format=L.channels_last).stride(), x.shape
        if how == "preserve":
            t = L.zeros(1, 3, 2, 2).permute(0, 2, 3, 1).permute(0, 3, 1, 2)
            return x.resize_as_(t, memory_format=L.preserve_format).stride(), x.shape
        r = x.resize_as_(t)
        return r.shape, r.stride(), r.reshape(-1)[:min(4, r.numel())]
    same_or_same_error(run)


def test_resize_as_of_a_tensor_that_requires_grad_is_refused():
    same_error(lambda L: L.ones(4, requires_grad=True).resize_as_(L.zeros(2)))


STORAGE_WRITES = [
    lambda s: s.__setitem__(0, 7), lambda s: s.__setitem__(0, 256), lambda s: s.__setitem__(0, -1),
    lambda s: s.__setitem__(0, -129), lambda s: s.__setitem__(0, True), lambda s: s.__setitem__(-1, 7),
    lambda s: s.__setitem__(8, 7), lambda s: s.__setitem__(0, 1.5), lambda s: s.__setitem__(0, np.int64(3)),
    lambda s: s.__setitem__(slice(1, 3), 9), lambda s: s.__setitem__(slice(-3, None), 9),
    lambda s: s.__setitem__(slice(10, 30), 9), lambda s: s.__setitem__(slice(0, 8, 2), 9),
    lambda s: s.__setitem__("a", 9), lambda s: s.__setitem__(True, 9),
    lambda s: s.__setitem__(np.int64(1), 9), lambda s: s.__setitem__(2**63, 9),
    lambda s: s[-16], lambda s: s[-17], lambda s: s[16], lambda s: s[::2], lambda s: s["a"], lambda s: s[True],
    lambda s: s[1.0], lambda s: s[2**63], lambda s: s.fill_(3), lambda s: s.fill_(256), lambda s: s.fill_(1.5),
    lambda s: s[4:8].resize_(2),
]


@pytest.mark.parametrize("write", STORAGE_WRITES)
def test_untyped_storage_bytes_are_read_and_written_as_torch(write):
    """``THPStorage_set``: an int value kept modulo 256, an index that must lie inside (negative
    ones are refused when writing, counted from the end when reading), slices of step 1;
    internals had no item assignment, no slices and no ``fill_``."""
    def run(L):
        s = L.arange(2.).untyped_storage()
        out = write(s)
        return s.tolist(), out.tolist() if hasattr(out, "tolist") else out
    try:
        theirs = run(torch)
    except Exception:
        return same_error(lambda L: run(L))
    assert run(internals) == theirs


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_storage_slice_shares_bytes_and_outlives_its_parent(device):
    x = internals.arange(4., device=device)
    s = x.untyped_storage()
    part = s[4:8]
    assert not part.resizable() and part.nbytes() == 4
    part[3] = 64          # the float 1.0 becomes 2.0 (0x3f80 -> 0x4000 in its top bytes)
    part[2] = 0
    assert x.tolist() == [0., 2., 2., 3.]
    del x, s
    assert part.tolist() == [0, 0, 0, 64]


@pytest.mark.parametrize("program", [
    lambda lib: lib.empty(4).as_strided((2**40, 2**40), (2**40, 1)),
    lambda lib: lib.empty(4).as_strided((2**62, 2), (1, 2**62)),
    lambda lib: lib.empty(4).as_strided((2**40, 2**40), (0, 0)),
    lambda lib: lib.empty_strided((2**40, 2**40), (2**40, 1)),
    lambda lib: lib.empty_strided((2**61,), (1,)),
    lambda lib: lib.empty_strided((2**62,), (2,)),
    lambda lib: lib.empty(2**62, 4),
    lambda lib: lib.empty(1).new_empty_strided((2**62,), (2,)),
])
def test_a_storage_past_int64_is_refused_as_torch_counts_it(program):
    """torch counts a view's storage bytes before its elements (``checkInBoundsForStorage``, then
    ``numel``), and an ``empty_strided`` names its strides even when they are contiguous."""
    same_error(program)
