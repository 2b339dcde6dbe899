"""Chapter 2's additions against torch: indexing that copies or views, ``_base``, the views of
split/chunk/unbind/narrow, ``view(dtype)`` and memory formats."""
import pytest
import torch
from helpers import assert_same, assert_same_error

import internals


def _x(L):
    return L.arange(12.).reshape(3, 4).clone()   # a base of its own, not a view of arange


def _shares(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


INDEXES = {   # name: (index, torch makes a view)
    "x[0]": (lambda L: 0, True),
    "x[1:3]": (lambda L: slice(1, 3), True),
    "x[None]": (lambda L: None, True),
    "x[..., 0]": (lambda L: (Ellipsis, 0), True),
    "x[[0, 2]]": (lambda L: [0, 2], False),
    "x[tensor([1])]": (lambda L: L.tensor([1]), False),
    "x[x > 4]": (lambda L: _x(L) > 4, False),
    "x[1:, [0, 2]]": (lambda L: (slice(1, None), [0, 2]), False),
    "x.t()[[3, 1]]": (lambda L: [3, 1], False),
}


@pytest.mark.parametrize("name", INDEXES)
def test_indexing_views_or_copies_as_torch(name):
    make_index, torch_views = INDEXES[name]
    results = []
    for L in (torch, internals):
        x = _x(L)
        y = (x.t() if name.startswith("x.t()") else x)[make_index(L)]
        results.append(y)
        assert (_shares(y, x), y._is_view(), y._base is x) == (torch_views,) * 3
    assert_same(results[1], results[0])


def test_advanced_indexing_copies_take_torchs_strides():
    """The copy's strides follow the input's dimension order (TensorIterator), as torch's."""
    makes = [lambda L: L.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)[[0, 1]],
             lambda L: L.arange(24.).reshape(2, 3, 4).transpose(0, 2)[:, [1]],
             lambda L: L.arange(24.).reshape(2, 3, 4)[[1, 0], :, [0, 2]],
             lambda L: L.arange(24.).reshape(1, 2, 3, 4).contiguous(memory_format=L.channels_last)[:, [1, 0]]]
    for make in makes:
        assert_same(make(internals), make(torch))


def test_setitem_and_index_put_write_in_place():
    results = []
    for L in (torch, internals):
        x = _x(L)
        ptr = x.untyped_storage().data_ptr()
        x[[0, 2]] = 7.
        x[x > 10] = -1.
        same = x.index_put_((L.tensor([1, 1]), L.tensor([0, 3])), L.tensor([5., 6.]), accumulate=True)
        assert same is x and x.untyped_storage().data_ptr() == ptr and x._version == 3
        results.append(x)
    assert_same(results[1], results[0])


@pytest.mark.parametrize("split", [lambda x: x.split(2), lambda x: x.split([1, 3], 1), lambda x: x.chunk(2, 1),
                                   lambda x: x.chunk(3), lambda x: x.unbind(1), lambda x: x.unbind(),
                                   lambda x: [x.narrow(1, 1, 2), x.narrow(0, 2, 1)]])
def test_split_chunk_unbind_narrow_are_views_at_walking_offsets(split):
    theirs, ours = (list(split(_x(L))) for L in (torch, internals))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t)
        assert o._base is not None and t._base is not None


@pytest.mark.parametrize("source, target", [("float32", "int32"), ("float32", "int16"), ("int16", "float32"),
                                            ("float64", "float32"), ("float32", "float32")])
def test_view_dtype_shares_storage_but_is_no_autograd_view(source, target):
    """derivatives.yaml marks view.dtype non-differentiable: no ``_base``, one version counter."""
    seen = []
    for L in (torch, internals):
        t = L.ones(2, 4, dtype=getattr(L, source), requires_grad=source.startswith("float"))
        with L.no_grad():
            v = t.view(getattr(L, target))
            v.zero_()
        seen.append((v._is_view(), v._base is None, v.requires_grad, v.grad_fn, _shares(v, t),
                     t._version, v._version))
        seen.append(v)
    assert seen[0] == seen[2]
    assert_same(seen[3], seen[1])


@pytest.mark.parametrize("size, stride, offset", [((3, 1), (6, 3), 0), ((3, 2), (6, 3), 1), ((3, 2), (7, 3), 0),
                                                  ((3, 2), (7, 1), 1), ((3, 3), (7, 1), 0), ((3,), (2,), 0)])
def test_view_dtype_widening_checks_in_torchs_order(size, stride, offset):
    """Widening checks the last size, then the offset, then the strides (view_dtype's order)."""
    def run(L):
        return L.arange(60, dtype=L.int16).as_strided(size, stride, offset).view(L.float32)
    ours, theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(ours) == str(theirs)


def test_memory_formats():
    def layouts(L):
        x = L.arange(24.).reshape(1, 2, 3, 4)
        cl = x.contiguous(memory_format=L.channels_last)
        dense = L.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)
        return [cl, cl + 1, cl.clone(), L.zeros_like(cl), dense + 1, dense.clone(), dense.exp(),
                L.arange(12.).reshape(3, 4)[:, ::2].clone(), x.to(memory_format=L.channels_last),
                L.ones(2, 3, 4, 5, 6).contiguous(memory_format=L.channels_last_3d)]
    for o, t in zip(layouts(internals), layouts(torch)):
        assert_same(o, t)

    def flags(L):
        x = L.ones(2, 3, 4, 5)
        cl = x.contiguous(memory_format=L.channels_last)
        return [(t.is_contiguous(), t.is_contiguous(memory_format=L.channels_last))
                for t in (x, cl, L.ones(2, 1, 4, 5), L.ones(2, 3, 1, 1), cl.permute(0, 2, 3, 1))]
    assert flags(internals) == flags(torch)


def test_fast_set_up_remembers_its_answer_by_layout():
    """``fast_set_up`` remembers its output strides by the operands' shape and strides: operands
    of one shape in turn contiguous, channels-last, permuted, overlapping (stride 0) and mixed each
    give torch's output layout, however often the same shape came before with another layout."""
    def results(L):
        x = L.arange(24.).reshape(1, 2, 3, 4)
        cl = x.contiguous(memory_format=L.channels_last)
        perm = L.arange(24.).reshape(4, 1, 2, 3).permute(1, 2, 3, 0)    # dense, not contiguous
        expanded = L.arange(4.).expand(1, 2, 3, 4)                     # same shape, stride 0
        pairs = [(x, x), (cl, cl), (perm, perm), (x, x), (expanded, x), (cl, x), (perm, cl), (cl, cl), (perm, perm)]
        return [a + b for a, b in pairs + pairs]
    for o, t in zip(results(internals), results(torch)):
        assert_same(o, t)


def test_check_views_tables_a_group_and_fails_loudly():
    x, tx = _x(internals), _x(torch)
    text = internals.testing.check_views({"x.t()": (x.t(), tx.t()), "x[1:]": (x[1:], tx[1:])})
    lines = text.splitlines()
    assert lines[2].split() == ["x.t()", "[4,", "3]", "[1,", "4]", "0", "float32"]
    assert lines[3].split() == ["x[1:]", "[2,", "4]", "[4,", "1]", "4", "float32"]
    assert len(lines) == 5 and lines[-1].startswith("ok: ")
    with pytest.raises(AssertionError, match=r"stride \(1, 3\) != \(4, 1\)"):
        internals.testing.check_views({"x.t()": (x.t(), tx.t()), "wrong": (x.t().contiguous().t(), tx)})
