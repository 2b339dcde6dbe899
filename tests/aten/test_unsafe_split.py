"""``unsafe_split``, ``unsafe_split_with_sizes`` and ``unsafe_chunk`` against torch's: split's
pieces over the input's memory, but not views to autograd (no base, a version counter of
their own), with UnsafeSplitBackward0 / UnsafeSplitWithSizesBackward0 and split's errors."""
import pytest
import torch
from helpers import assert_same, outcome

import internals

PROGRAMS = {
    "split": lambda lib, x: x.unsafe_split(2, 1),
    "split_function": lambda lib, x: lib.unsafe_split(x, 3),
    "split_with_sizes": lambda lib, x: x.unsafe_split_with_sizes([1, 0, 3], 1),
    "chunk": lambda lib, x: x.unsafe_chunk(3, 0),
    "chunk_negative_dim": lambda lib, x: lib.unsafe_chunk(x, 2, -1),
    "chunk_of_empty": lambda lib, x: lib.unsafe_chunk(x[:0], 3, 0),
}


def _input(lib):
    return lib.arange(20, dtype=lib.float64).reshape(5, 4)


@pytest.mark.parametrize("name", PROGRAMS)
def test_pieces_match_torch(name):
    """Each piece's values, layout and place in the input's memory, and that it is no view (a
    version counter of its own)."""
    x_o, x_t = _input(internals), _input(torch)
    ours, theirs = PROGRAMS[name](internals, x_o), PROGRAMS[name](torch, x_t)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t)
        assert o._base is None and t._base is None
        assert o.storage_offset() == t.storage_offset()
    ours[0].add_(1)     # a write through a piece reaches the input, whose version stays
    theirs[0].add_(1)
    assert (ours[0]._version, x_o._version) == (theirs[0]._version, x_t._version)
    assert_same(x_o, x_t)


@pytest.mark.parametrize("name", ["split", "split_with_sizes", "chunk"])
def test_gradients_and_grad_fn_names_match_torch(name):
    x_o, x_t = _input(internals).requires_grad_(), _input(torch).requires_grad_()
    ours, theirs = PROGRAMS[name](internals, x_o), PROGRAMS[name](torch, x_t)
    assert [o.grad_fn.name() for o in ours] == [t.grad_fn.name() for t in theirs]
    sum((k + 1) * o.sum() for k, o in enumerate(ours)).backward()
    sum((k + 1) * t.sum() for k, t in enumerate(theirs)).backward()
    assert_same(x_o.grad, x_t.grad)


ERRORS = {
    "chunk_scalar": lambda lib: lib.unsafe_chunk(lib.tensor(1.0), 2),
    "chunk_zero": lambda lib: lib.unsafe_chunk(lib.ones(4), 0),
    "split_negative": lambda lib: lib.unsafe_split(lib.ones(4), -1),
    "split_zero": lambda lib: lib.unsafe_split(lib.ones(4), 0),
    "sizes_not_summing": lambda lib: lib.unsafe_split_with_sizes(lib.ones(4), [1, 2]),
    "bad_dim": lambda lib: lib.unsafe_split(lib.ones(4), 2, 1),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    theirs = outcome(ERRORS[name], torch)
    assert theirs[0] == "error" and outcome(ERRORS[name], internals) == theirs
