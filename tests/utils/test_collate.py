"""default_collate, default_convert and the DataLoader's worker options, against torch's
(``torch/utils/data/_utils/collate.py`` and ``DataLoader.__init__``): the container types that
come back, each tensor's dtype, values and grad_fn, and the exception classes."""
import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import internals
import internals.utils.data as iud

Pair = collections.namedtuple("Pair", "a b")


def _describe(x):
    """A comparable picture of a collated batch: container types, and per tensor its dtype,
    values and grad_fn name."""
    if isinstance(x, (torch.Tensor, internals.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], x.tolist(), type(x.grad_fn).__name__ if x.grad_fn else None)
    if isinstance(x, dict):
        return (type(x).__name__, {k: _describe(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, [_describe(v) for v in x])
    if isinstance(x, (list, tuple, collections.deque)):
        return (type(x).__name__, [_describe(v) for v in x])
    return (type(x).__name__, x)


BATCHES = {
    "int_then_float": lambda lib: [1, 2.5],
    "float_then_int": lambda lib: [2.5, 1],
    "bool_then_int": lambda lib: [True, 2],
    "bools": lambda lib: [True, False],
    "bytes": lambda lib: [b"ab", b"c"],
    "strings": lambda lib: ["a", "b"],
    "tensors_requiring_grad": lambda lib: [lib.ones(2, requires_grad=True), lib.zeros(2)],
    "tuples_of_int_and_str": lambda lib: [(1, "a"), (2, "b")],
    "lists": lambda lib: [[1, 2.0], [3, 4.0]],
    "dicts": lambda lib: [{"x": 1, "s": "a"}, {"x": 2, "s": "b"}],
    "ordered_dicts": lambda lib: [collections.OrderedDict(a=1), collections.OrderedDict(a=2)],
    "named_tuples": lambda lib: [Pair(1, 2.0), Pair(3, 4.0)],
    "ranges": lambda lib: [range(2), range(2)],
    "numpy_arrays": lambda lib: [np.arange(3), np.arange(3)],
    "numpy_float32_scalars": lambda lib: [np.float32(1), np.float32(2)],
    "numpy_float64_scalars": lambda lib: [np.float64(1.5), np.float64(2)],
    "nested_tuples_with_strings": lambda lib: [(lib.ones(1), ("x", 1)), (lib.zeros(1), ("y", 2))],
    "zero_dim_tensors": lambda lib: [lib.tensor(1), lib.tensor(2)],
}

BAD_BATCHES = {
    "numpy_strings": lambda lib: [np.array(["a"]), np.array(["b"])],
    "tensor_then_int": lambda lib: [lib.ones(2), 2],
    "nones": lambda lib: [None, None],
    "unequal_lists": lambda lib: [[1, 2], [3]],
    # a sparse tensor of any layout: torch refuses it with a RuntimeError before stacking
    "sparse_coo": lambda lib: [lib.tensor([1., 0]).to_sparse(), lib.tensor([0., 2]).to_sparse()],
    "sparse_csr": lambda lib: [lib.eye(2).to_sparse_csr(), lib.eye(2).to_sparse_csr()],
    # a tensor as the whole batch: its rows are tensors, but stack takes no tensor as its list
    "a_tensor_as_the_batch": lambda lib: lib.ones(3, 2),
}


@pytest.mark.parametrize("name", list(BATCHES))
def test_default_collate_matches_torch(name):
    make = BATCHES[name]
    assert _describe(iud.default_collate(make(internals))) == _describe(tud.default_collate(make(torch)))


@pytest.mark.parametrize("name", list(BAD_BATCHES))
def test_default_collate_refuses_as_torch_does(name):
    make = BAD_BATCHES[name]
    with pytest.raises(Exception) as theirs:
        tud.default_collate(make(torch))
    with pytest.raises(Exception) as ours:
        iud.default_collate(make(internals))
    assert type(ours.value) is type(theirs.value)     # the class itself: NotImplementedError is a RuntimeError


@pytest.mark.parametrize("sample", [np.arange(2), (1, np.float32(2)), "ab", Pair(np.arange(1), "x"),
                                    [collections.OrderedDict(a=np.arange(2))], collections.deque([np.arange(1)]),
                                    range(3)],
                         ids=["array", "tuple", "string", "named_tuple", "ordered_dict", "deque", "range"])
def test_default_convert_matches_torch(sample):
    assert _describe(iud.default_convert(sample)) == _describe(tud.default_convert(sample))


def test_unbatched_loader_converts_numpy_samples():
    data = [np.arange(2), np.arange(2) + 1]
    ours = [_describe(b) for b in iud.DataLoader(data, batch_size=None)]
    assert ours == [_describe(b) for b in tud.DataLoader(data, batch_size=None)]


@pytest.mark.parametrize("kwargs", [dict(pin_memory=True), dict(pin_memory_device=""), dict(worker_init_fn=print),
                                    dict(in_order=False)],
                         ids=["pin_memory", "pin_memory_device", "worker_init_fn", "in_order"])
def test_loader_accepts_torch_options(kwargs):
    ours = [b.tolist() for b in iud.DataLoader(list(range(5)), batch_size=2, **kwargs)]
    assert ours == [b.tolist() for b in tud.DataLoader(list(range(5)), batch_size=2, **kwargs)]


@pytest.mark.parametrize("kwargs", [dict(persistent_workers=True), dict(prefetch_factor=2), dict(num_workers=-1),
                                    dict(timeout=-1), dict(batch_size=None, drop_last=True)],
                         ids=["persistent_workers", "prefetch_factor", "negative_workers", "negative_timeout",
                              "unbatched_drop_last"])
def test_loader_option_errors_match_torch(kwargs):
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(list(range(5)), **kwargs)
    with pytest.raises(ValueError) as ours:
        iud.DataLoader(list(range(5)), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_zero_prefetch_factor_refuses_when_iterated():
    """Accepted by the constructor (it refuses only negative values); torch's multi-process
    iterator asserts a positive one before it starts a worker."""
    for lib in (tud, iud):
        loader = lib.DataLoader(list(range(5)), num_workers=1, prefetch_factor=0)
        with pytest.raises(AssertionError, match="prefetch_factor must be greater than 0"):
            iter(loader)


def test_timeout_without_workers_refuses_when_iterated():
    """Accepted by the constructor; torch's single-process iterator asserts a zero timeout."""
    ours, theirs = iud.DataLoader([1, 2], timeout=5), tud.DataLoader([1, 2], timeout=5)
    with pytest.raises(AssertionError):
        iter(theirs)
    with pytest.raises(AssertionError):
        iter(ours)
