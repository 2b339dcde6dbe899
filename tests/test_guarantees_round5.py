"""A fifth round of hostile inputs (issue 15): each case differed from torch 2.13 before its fix."""
import pytest
import torch
from conftest import assert_same, assert_same_error

import internals


def same_error(fn):
    """Both libraries raise the same class with the same message."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours) == str(theirs)


def same(fn, **kw):
    assert_same(fn(internals), fn(torch), **kw)


def same_or_same_error(fn):
    try:
        theirs = fn(torch)
    except Exception:
        return same_error(fn)
    ours = fn(internals)
    if isinstance(theirs, torch.Tensor):
        return assert_same(ours, theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t)


# ----------------------------------------------------------------------------- gather and scatter
@pytest.mark.parametrize("call", [
    lambda L: L.zeros(3, 4).scatter_add(0, L.tensor([[0., 1.]]), L.ones(2, 5)),
    lambda L: L.zeros(3, 4).scatter_reduce(0, L.tensor([[0, 1, 2, 0, 1]]), L.ones(2, 5), "sum"),
    lambda L: L.zeros(3, 4).scatter(0, L.tensor([[0, 1, 2, 0, 1]]), 7.),
    lambda L: L.zeros(3, 4).scatter(0, L.tensor([[0, 1]]), 7., reduce="add"),
    lambda L: L.zeros(3, 4).scatter_add(0, L.tensor([[0, 1, 2]]), L.ones(2, 2)),
    lambda L: L.zeros(0, 4).scatter(1, L.tensor([[0, 1], [2, 0]]), L.ones(2, 5)),
    lambda L: L.zeros(3, 4).scatter(0, L.tensor([[0, 1]]), L.ones(2, 5, dtype=L.long)),
    lambda L: L.zeros(3, 4).scatter(0, L.tensor([[0, 1]]), L.ones(5)),
    lambda L: L.zeros(3, 4).gather(0, L.tensor([[0, 1, 2, 0, 1]])),
    lambda L: L.zeros(3, 4).scatter_reduce(1, L.tensor([[0, 1]]), L.ones(2, 5, dtype=L.long), "amax",
                                           include_self=False),
])
def test_scatter_checks_in_torchs_order_with_torchs_messages(call):
    """``scatter_shape_check`` says "Expected index ... and to be no larger size than src"
    (gather's "Size does not match" was used), checks dtypes first, and names ``scatter`` for
    ``scatter_add`` too."""
    same_or_same_error(call)


# ----------------------------------------------------------------------------- index_put_, take, index_select
@pytest.mark.parametrize("index", ["[0, 0, 1]", "[5]", "[-6]", "[0.]", "[1, 0] uint8", "[]"])
@pytest.mark.parametrize("value", ["[1, 2]", "[[1.], [1.]]", "1.", "True"])
@pytest.mark.parametrize("size", [5, 0])
def test_index_put_checks_indices_then_value_shape_then_dtype_then_bounds(index, value, size):
    """``make_info`` checks the indices (and that a dim of size 0 is not indexed), then
    ``make_index_put_iterator`` the value's shape and dtype; the kernel checks the bounds last.
    The dtype was checked first."""
    def run(L):
        vals, _, dt = index.partition(" ")
        ix = L.tensor(eval(vals), dtype=getattr(L, dt) if dt else (L.long if vals == "[]" else None))
        return L.zeros(size).index_put_((ix,), L.tensor(eval(value)), accumulate=True)
    same_or_same_error(run)


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(0)[L.tensor([0, 0])],
    lambda L: L.zeros(2, 0)[:, L.tensor([[0], [1]])],
    lambda L: L.zeros(2, 0)[:, L.tensor([], dtype=L.long)],
])
def test_indexing_a_dim_of_size_0_is_refused_before_the_kernel(call):
    same_or_same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.take(L.zeros(0, 4), L.tensor([[0, 1], [2, 0]])),
    lambda L: L.take(L.zeros(0), L.tensor([-1])),
    lambda L: L.take(L.zeros(0), L.tensor([], dtype=L.long)),
    lambda L: L.index_select(L.tensor(0.), 0, L.empty(0, dtype=L.long)),
    lambda L: L.index_select(L.tensor(0.), 0, L.tensor([0, 0])),
    lambda L: L.index_select(L.tensor(0.), 0, L.tensor([0])),
    lambda L: L.index_select(L.tensor(0.), 1, L.tensor([0.])),
    lambda L: L.index_select(L.zeros(0, 4), 0, L.tensor(0)),
    lambda L: L.index_select(L.zeros(2, 0), 1, L.tensor([0])),
    lambda L: L.index_select(L.zeros(0, 4), 0, L.tensor([], dtype=L.long)),
])
def test_take_and_index_select_on_empty_and_0_dim_tensors(call):
    """A 0-dim tensor with an empty index gave an empty vector (torch: an error); empty
    sources named the index, not the emptiness."""
    same_or_same_error(call)


# ----------------------------------------------------------------------------- repeat_interleave
@pytest.mark.parametrize("x", ["L.arange(6.)", "L.arange(24.).reshape(2, 3, 4)", "L.empty(0, 3)", "L.tensor(3.)"])
@pytest.mark.parametrize("repeats", ["2", "0", "-1", "L.tensor(2)", "L.tensor([[1]])", "L.tensor([1., 2.])",
                                     "L.tensor([], dtype=L.long)"])
@pytest.mark.parametrize("dim", [None, 0, -1, 1])
@pytest.mark.parametrize("output_size", [None, 0, 3, 12])
def test_repeat_interleave_validates_as_torch(x, repeats, dim, output_size):
    """An output_size that disagrees, repeats of two dims, float repeats and a 0-dim input
    were accepted or refused with other errors."""
    same_or_same_error(lambda L: L.repeat_interleave(eval(x), eval(repeats), dim, output_size=output_size))


@pytest.mark.parametrize("repeats", ["[1, 2, 0]", "[1, -2, 0]", "[[1, 2]]", "[1., 2.]", "[]"])
@pytest.mark.parametrize("output_size", [None, 3, 5])
def test_repeat_interleave_of_counts(repeats, output_size):
    same_or_same_error(lambda L: L.repeat_interleave(L.tensor(eval(repeats), dtype=None if repeats != "[]"
                                                              else L.long), output_size=output_size))
