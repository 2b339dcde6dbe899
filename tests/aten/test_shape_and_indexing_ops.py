"""Differential tests of the joining, indexing and creation operators against torch:
PyTorch's OpInfo samples (values, dtypes, shapes, strides, errors), then gradients, torch's
errors and bounds checks, and the Python protocol (``__format__``, return types, ``__array__``).

The OpInfo runner is the one of ``test_ops.py`` (same comparison, same non-contiguous pass),
over this file's own table; its index arguments may also hold slices and ``...``.
"""
import warnings

import numpy as np
import pytest
import torch
from helpers import (
    TORCH_DTYPES,
    Adapter,
    assert_fake_matches_real,
    assert_same,
    assert_same_error,
    assert_second_derivatives_match_torch,
    check_opinfo_samples,
    fn,
    meth,
    opinfo_cases,
    to_ours,
)
from hypothesis import given, settings
from hypothesis import strategies as hst

import internals

ADAPTERS = {
    # joining and splitting
    "cat": Adapter(fn("cat"), kwargs=("dim",)),
    "stack": Adapter(fn("stack"), kwargs=("dim",)),
    "hstack": Adapter(fn("hstack")),
    "vstack": Adapter(fn("vstack")),
    "unbind": Adapter(fn("unbind"), "unbind"),
    "flip": Adapter(fn("flip"), "flip", kwargs=("dims",)),
    "fliplr": Adapter(fn("fliplr"), "fliplr"),
    "flipud": Adapter(fn("flipud"), "flipud"),
    "roll": Adapter(fn("roll"), "roll"),
    "repeat": Adapter(meth("repeat"), "repeat"),
    "tile": Adapter(fn("tile"), "tile"),
    "repeat_interleave": Adapter(fn("repeat_interleave"), "repeat_interleave",
                                 kwargs=("repeats", "dim", "output_size")),
    "tril": Adapter(fn("tril"), "tril"),
    "triu": Adapter(fn("triu"), "triu"),
    "diag": Adapter(fn("diag"), "diag"),
    "diag_embed": Adapter(fn("diag_embed"), "diag_embed", kwargs=("offset", "dim1", "dim2")),
    "atleast_1d": Adapter(fn("atleast_1d")),
    "atleast_2d": Adapter(fn("atleast_2d")),
    # indexing
    "__getitem__": Adapter(lambda x, index: x[index]),
    "index_put": Adapter(fn("index_put"), "index_put", kwargs=("accumulate",)),
    "index_select": Adapter(fn("index_select"), "index_select"),
    "gather": Adapter(fn("gather"), "gather", kwargs=("sparse_grad",)),
    "scatter": Adapter(fn("scatter"), "scatter", kwargs=("reduce",)),
    "scatter_add": Adapter(fn("scatter_add"), "scatter_add"),
    "masked_fill": Adapter(fn("masked_fill"), "masked_fill"),
    "masked_select": Adapter(fn("masked_select"), "masked_select"),
    "nonzero": Adapter(fn("nonzero"), "nonzero", kwargs=("as_tuple",)),
    "argwhere": Adapter(fn("argwhere"), "argwhere"),
    "take": Adapter(fn("take"), "take"),
    "put": Adapter(fn("put"), "put"),
    # creation
    "new_zeros": Adapter(meth("new_zeros"), "new_zeros", kwargs=("dtype", "device", "requires_grad")),
    "new_ones": Adapter(meth("new_ones"), "new_ones", kwargs=("dtype", "device", "requires_grad")),
    "new_full": Adapter(meth("new_full"), "new_full", kwargs=("dtype", "device", "requires_grad")),
    "full_like": Adapter(fn("full_like"), kwargs=("dtype", "device")),
}


def convert(value):
    """``to_ours``, letting the slices and ``...`` of an index through."""
    if isinstance(value, slice) or value is Ellipsis:
        return value
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        converted = [convert(v) for v in value]
        return converted if isinstance(value, list) else tuple(converted)
    return to_ours(value)


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, TORCH_DTYPES))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name], convert=convert)


# =============================================================================================
# Gradients: torch's node names, torch's gradients, and gradcheck
# =============================================================================================
def _index(lib, values, dtype="int64"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


GRAD_CASES = {
    "fill_ with a 0-dim tensor": ([(3,), ()], lambda L, a, v: a.clone().fill_(v)),
    "cat": ([(2, 3), (2, 2)], lambda L, a, b: L.cat([a, b], 1)),
    "cat-promoted": ([(2, 3), (1, 3)], lambda L, a, b: L.cat([a, b.float()])),
    "stack": ([(2, 3), (2, 3)], lambda L, a, b: L.stack([a, b], 1)),
    "hstack": ([(2,), (3,)], lambda L, a, b: L.hstack([a, b])),
    "concatenate": ([(2,), (3,)], lambda L, a, b: L.concatenate([a, b])),
    "fliplr": ([(2, 3)], lambda L, a: L.fliplr(a)),
    "vstack": ([(3,), (2, 3)], lambda L, a, b: L.vstack([a, b])),
    "unbind": ([(2, 3)], lambda L, a: L.unbind(a, 1)[1]),
    "flip": ([(2, 3, 2)], lambda L, a: a.flip([0, 2])),
    "roll": ([(3, 4)], lambda L, a: a.roll((1, -2), (0, 1))),
    "roll-flat": ([(3, 4)], lambda L, a: a.roll(5)),
    "repeat": ([(2, 3)], lambda L, a: a.repeat(2, 1, 3)),
    "tile": ([(2, 3)], lambda L, a: a.tile((2,))),
    "repeat_interleave": ([(2, 3)], lambda L, a: a.repeat_interleave(2, dim=1)),
    "repeat_interleave-tensor": ([(2, 3)], lambda L, a: a.repeat_interleave(_index(L, [1, 0, 2]), dim=1)),
    "tril": ([(3, 4)], lambda L, a: a.tril(1)),
    "triu": ([(2, 3, 4)], lambda L, a: a.triu(-1)),
    "diag-vector": ([(3,)], lambda L, a: L.diag(a, 1)),
    "diag_embed": ([(2, 3)], lambda L, a: L.diag_embed(a, -1, 0, 2)),
    "getitem-tensor": ([(4, 3)], lambda L, a: a[_index(L, [0, 2, 0])]),
    "getitem-mask": ([(4, 3)], lambda L, a: a[a > 0]),
    "getitem-mixed": ([(4, 3, 2)], lambda L, a: a[1:, _index(L, [[2], [0]]), None, _index(L, [1, 0])]),
    "index_put": ([(4, 3), (2, 3)], lambda L, a, v: a.index_put((_index(L, [3, 1]),), v)),
    "index_put-accumulate": ([(4, 3), (3,)], lambda L, a, v: a.index_put((_index(L, [1, 1]),), v, True)),
    "index_select": ([(4, 3)], lambda L, a: a.index_select(0, _index(L, [3, 3, 0]))),
    "gather": ([(3, 4)], lambda L, a: a.gather(1, _index(L, [[0, 0], [3, 1], [2, 2]]))),
    "scatter": ([(3, 4), (2, 2)], lambda L, a, s: a.scatter(1, _index(L, [[0, 1], [3, 2]]), s)),
    "scatter-value": ([(3, 4)], lambda L, a: a.scatter(0, _index(L, [[2, 1]]), 1.5)),
    "scatter_add": ([(3, 4), (2, 2)], lambda L, a, s: a.scatter_add(1, _index(L, [[0, 0], [3, 2]]), s)),
    "masked_fill": ([(3, 4)], lambda L, a: a.masked_fill(a > 0, 2.0)),
    "masked_fill-tensor": ([(3, 4), ()], lambda L, a, v: a.masked_fill(a > 0, v)),
    "masked_select": ([(3, 4)], lambda L, a: a.masked_select(_index(L, [True, False, True, True], "bool"))),
    "take": ([(3, 4)], lambda L, a: L.take(a, _index(L, [[0, -1], [5, 5]]))),
    "put": ([(3, 4), (3,)], lambda L, a, s: a.put(_index(L, [0, -1, 5]), s)),
    "put-accumulate": ([(3, 4), (2, 2)], lambda L, a, s: L.put(a, _index(L, [[0, 5], [5, -1]]), s, True)),
    "put_-transposed": ([(4, 3), (3,)], lambda L, a, s: (a * 1).t().put_(_index(L, [1, 4, 1]), s, accumulate=True)),
}


@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradients_match_torch(name):
    """The output, its grad_fn's name, and the inputs' gradients for a random output gradient."""
    shapes, build = GRAD_CASES[name]
    torch.manual_seed(0)
    theirs = [torch.randn(s, dtype=torch.float64, requires_grad=True) for s in shapes]
    ours = [internals.from_torch(t.detach()).requires_grad_() for t in theirs]
    out_t, out_o = build(torch, *theirs), build(internals, *ours)
    assert_same(out_o, out_t.detach())
    assert type(out_o.grad_fn).__name__ == type(out_t.grad_fn).__name__
    g = torch.randn_like(out_t)
    out_t.backward(g)
    out_o.backward(internals.from_torch(g))
    for o, t in zip(ours, theirs):
        assert_same(o.grad, t.grad, exact_layout=False)


@pytest.mark.parametrize("name", ["cat", "stack", "roll", "repeat", "getitem-mixed", "index_put-accumulate",
                                  "gather", "scatter", "masked_select", "take", "put", "put-accumulate"])
def test_gradcheck(name):
    shapes, build = GRAD_CASES[name]
    torch.manual_seed(1)
    inputs = [internals.from_torch(torch.randn(s, dtype=torch.float64)).requires_grad_() for s in shapes]
    assert internals.autograd.gradcheck(lambda *xs: build(internals, *xs), inputs)


def test_setitem_records_index_put():
    """``x[idx] = v`` on a non-leaf writes through index_put_: IndexPutBackward0, gradients to both."""
    def run(L):
        a = L.tensor([[1., 2.], [3., 4.], [5., 6.]], dtype=L.float64, requires_grad=True)
        v = L.tensor([10., 20.], dtype=L.float64, requires_grad=True)
        b = a * 1
        b[_index(L, [2, 0])] = v
        b[b > 15] = 0.
        (b * L.arange(6.).reshape(3, 2)).sum().backward()
        return b, a.grad, v.grad
    for o, t in zip(run(internals), run(torch)):
        assert_same(o.detach(), t.detach())


# =============================================================================================
# Advanced indexing over random layouts: values, shapes, strides (hypothesis)
# =============================================================================================
@hst.composite
def index_items(draw):
    shape = tuple(draw(hst.lists(hst.integers(1, 4), min_size=1, max_size=4)))
    items, d = [], 0
    while d < len(shape) and draw(hst.booleans()) or not items:
        if d >= len(shape):
            break
        kind = draw(hst.sampled_from(["int", "slice", "tensor", "mask", "none", "list"]))
        n = shape[d]
        if kind == "int":
            items.append(draw(hst.integers(-n, n - 1)))
        elif kind == "slice":
            items.append(slice(draw(hst.integers(-n, n)), None, draw(hst.integers(1, 2))))
        elif kind == "tensor":
            sizes = draw(hst.sampled_from([(2,), (1, 3), (2, 1)]))
            items.append(("tensor", draw(hst.lists(hst.integers(-n, n - 1), min_size=sizes[-1] * sizes[0],
                                                   max_size=sizes[-1] * sizes[0])), sizes))
        elif kind == "mask":
            items.append(("mask", draw(hst.lists(hst.booleans(), min_size=n, max_size=n))))
        elif kind == "list":
            items.append(draw(hst.lists(hst.integers(-n, n - 1), min_size=1, max_size=3)))
        else:
            items.append(None)
            continue
        d += 1
    permute = draw(hst.permutations(range(len(shape))))
    return shape, permute, items


def _materialize(lib, items):
    out = []
    for i in items:
        if isinstance(i, tuple) and i[0] == "tensor":
            out.append(lib.tensor(i[1]).reshape(i[2]))
        elif isinstance(i, tuple):
            out.append(lib.tensor(i[1]))
        else:
            out.append(i)
    return tuple(out)


@settings(max_examples=40)
@given(index_items())
def test_advanced_indexing_matches_torch(case):
    shape, permute, items = case
    base = torch.arange(math_prod(shape), dtype=torch.float32).reshape([shape[p] for p in permute])
    t = base.permute([permute.index(i) for i in range(len(shape))])     # shape ``shape``, permuted strides
    o = internals.from_torch(t)
    try:
        expected = t[_materialize(torch, items)]
    except Exception:
        assert_same_error(lambda: o[_materialize(internals, items)], lambda: t[_materialize(torch, items)])
        return
    assert_same(o[_materialize(internals, items)], expected)
    # the same index written to: every selected element gets its new value
    tt, oo = t.clone(), o.clone()
    tt[_materialize(torch, items)] = -1.
    oo[_materialize(internals, items)] = -1.
    assert_same(oo, tt)


def math_prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# =============================================================================================
# Errors: torch's exception class and message, before any kernel reads memory
# =============================================================================================
def _x(L):
    return L.arange(12.).reshape(3, 4)


ERRORS = {
    "index-out-of-range": lambda L: _x(L)[_index(L, [0, 3])],
    "index-negative-out-of-range": lambda L: _x(L)[_index(L, [-4])],
    "index-second-dim": lambda L: _x(L)[:, _index(L, [4])],
    "index-float": lambda L: _x(L)[L.tensor([0.])],
    "index-mask-shape": lambda L: _x(L)[L.tensor([True, False])],
    "index-too-many": lambda L: _x(L)[0, 1, _index(L, [0])],
    "index-no-broadcast": lambda L: _x(L)[_index(L, [0, 1]), _index(L, [0, 1, 2])],
    "index_put-out-of-range": lambda L: _x(L).index_put_((_index(L, [7]),), L.tensor(1.)),
    "index_put-dtype": lambda L: _x(L).index_put_((_index(L, [0]),), L.tensor(1., dtype=L.float64)),
    "index_put-shape": lambda L: _x(L).index_put_((_index(L, [0, 1]),), L.ones(3)),
    "setitem-out-of-range": lambda L: _x(L).__setitem__(_index(L, [5]), 0.),
    "index_select-out-of-range": lambda L: _x(L).index_select(1, _index(L, [4])),
    "index_select-dim0": lambda L: _x(L).index_select(0, _index(L, [3])),
    "index_select-negative": lambda L: _x(L).index_select(0, _index(L, [-1])),
    "scatter-negative": lambda L: _x(L).scatter(1, _index(L, [[-1]]), 1.),
    "index_select-matrix": lambda L: _x(L).index_select(1, _index(L, [[0]])),
    "index_select-float": lambda L: _x(L).index_select(1, L.tensor([0.])),
    "gather-out-of-range": lambda L: _x(L).gather(1, _index(L, [[4]])),
    "gather-negative": lambda L: _x(L).gather(1, _index(L, [[-1]])),
    "gather-dims": lambda L: _x(L).gather(1, _index(L, [0])),
    "gather-too-large": lambda L: _x(L).gather(1, L.zeros(4, 1, dtype=L.int64)),
    "scatter-out-of-range": lambda L: _x(L).scatter(0, _index(L, [[3]]), 1.),
    "scatter-dtype": lambda L: _x(L).scatter(0, _index(L, [[0]]), L.ones(1, 1, dtype=L.float64)),
    "scatter_add-out-of-range": lambda L: _x(L).scatter_add(1, _index(L, [[9]]), L.ones(1, 1)),
    "scatter-reduce-sum": lambda L: _x(L).scatter(0, _index(L, [[0]]), L.ones(1, 1), reduce="sum"),
    "scatter-value-reduce-mean": lambda L: _x(L).scatter_(0, _index(L, [[0]]), 2., reduce="mean"),
    "take-out-of-range": lambda L: L.take(_x(L), _index(L, [12])),
    "take-negative": lambda L: L.take(_x(L), _index(L, [-13])),
    "put-out-of-range": lambda L: _x(L).put_(_index(L, [0, 12]), L.ones(2)),
    "put-negative": lambda L: _x(L).put(_index(L, [-13]), L.ones(1), True),
    "put-counts": lambda L: _x(L).put_(_index(L, [1, 2]), L.ones(3)),
    "put-int32-index": lambda L: _x(L).put_(_index(L, [1], "int32"), L.ones(1)),
    "put-dtype": lambda L: _x(L).put_(_index(L, [1]), L.ones(1, dtype=L.float64)),
    "put-empty-self": lambda L: L.ones(0).put_(_index(L, [0]), L.ones(1)),
    "put-expanded-self": lambda L: L.ones(4).expand(3, 4).put_(_index(L, [1]), L.ones(1)),
    "put-source-in-self": lambda L: (lambda x: x.put_(_index(L, [0]), x[1, :1]))(_x(L)),
    "masked_fill-float-mask": lambda L: _x(L).masked_fill(L.ones(3, 4), 0.),
    "masked_fill-value-dims": lambda L: _x(L).masked_fill(_x(L) > 1, L.ones(1)),
    "masked_select-float-mask": lambda L: _x(L).masked_select(L.ones(4)),
    "cat-empty": lambda L: L.cat([]),
    "cat-dims": lambda L: L.cat([_x(L), L.ones(4)]),
    "cat-sizes": lambda L: L.cat([_x(L), L.ones(3, 3)], 0),
    "cat-zero-dim": lambda L: L.cat([L.tensor(1.), L.tensor(2.)]),
    "cat-dim": lambda L: L.cat([_x(L)], 2),
    "stack-sizes": lambda L: L.stack([_x(L), L.ones(4, 3)]),
    "stack-empty": lambda L: L.stack([]),
    "flip-duplicates": lambda L: _x(L).flip([0, -2]),
    "fliplr-vector": lambda L: L.fliplr(L.ones(2)),
    "flipud-scalar": lambda L: L.flipud(L.tensor(1.)),
    "roll-mismatch": lambda L: _x(L).roll((1, 2), (0,)),
    "roll-no-dims": lambda L: _x(L).roll((1, 2)),
    "repeat-too-few": lambda L: _x(L).repeat(2),
    "repeat-negative": lambda L: _x(L).repeat(2, -1),
    "repeat_interleave-negative": lambda L: L.repeat_interleave(_index(L, [1, -1])),
    "tril-vector": lambda L: L.ones(3).tril(),
    "triu-scalar": lambda L: L.tensor(1.).triu(),
    "diag-3d": lambda L: L.diag(L.ones(2, 2, 2)),
    "unbind-scalar": lambda L: L.tensor(1.).unbind(),
    "view-dtype-size": lambda L: L.ones(3).view(L.float64),
    "view-dtype-stride": lambda L: _x(L).t().view(L.int16),
    "diag_embed-same-dims": lambda L: L.diag_embed(L.ones(2), 0, 1, 1),
    "bool-ambiguous": lambda L: bool(L.ones(2)),
    "bool-empty": lambda L: bool(L.ones(0)),
}
# Where internals words an error in its own way (torch reports from deeper in its kernels).
OWN_MESSAGE = {"index-float", "masked_fill-value-dims", "cat-dim", "flip-duplicates", "view-dtype-size",
               "repeat-negative", "diag_embed-same-dims", "stack-empty"}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    ours, theirs = assert_same_error(lambda: ERRORS[name](internals), lambda: ERRORS[name](torch))
    if name not in OWN_MESSAGE:
        assert str(ours).replace("internals", "torch") == str(theirs)


def test_negative_indices_wrap():
    """-1 is the last element for advanced indexing and take (gather and index_select refuse it)."""
    for L in (torch, internals):
        x = _x(L)
        assert x[_index(L, [-1, -3])].tolist() == [[8., 9., 10., 11.], [0., 1., 2., 3.]]
        assert L.take(x, _index(L, [-1, -12])).tolist() == [11., 0.]


@pytest.mark.parametrize("program", [
    "x.t().put_(_index(L, [1, -1, 6]), L.tensor([10., 20., 30.]))",
    "L.put(x, _index(L, [[0, 0], [5, 0]]), L.tensor([[1., 2.], [3., 4.]]), accumulate=True)",
    "x.half().put(_index(L, [2, 2, 2]), L.tensor([1e-3, 1e-3, 1e-3]).half(), True)",
    "L.zeros(3, dtype=L.bool).put_(_index(L, [1, 1]), L.tensor([True, True]), True)",
    "L.zeros(2, dtype=L.int8).put_(_index(L, [1, 1]), L.tensor([100, 100], dtype=L.int8), True)",
    "L.tensor(5.).put_(_index(L, -1), L.tensor(1.))",
    "x.put(L.ones(0, 3, dtype=L.int64), L.ones(0))",
    "x.bfloat16().put_(_index(L, [4]), L.tensor([-2.5]).bfloat16())",
])
def test_put_matches_torch(program):
    """Flat row-major positions whatever self's strides, negatives from the end; accumulate adds
    each repeat (the 16-bit floats rounding after each add, as torch's CPU kernel does; integers
    wrapping); an empty index leaves self as it is."""
    def run(L):
        return eval(program, {"L": L, "x": _x(L), "_index": _index})
    assert_same(run(internals), run(torch))


def test_put_in_place_returns_self_and_put_copies():
    for L in (internals, torch):
        x = _x(L).t()
        assert x.put_(_index(L, [0]), L.ones(1)) is x
        y = x.put(_index(L, [1]), L.ones(1))
        assert y is not x and y.stride() == x.stride() and x[0, 1].item() == 4.0 and y[0, 1].item() == 1.0


def test_put_without_accumulate_is_not_deterministic():
    """With deterministic algorithms on, put_ raises unless it accumulates (repeats may race)."""
    for L in (internals, torch):
        L.use_deterministic_algorithms(True)
        try:
            with pytest.raises(RuntimeError, match="^put_ does not have a deterministic implementation"):
                _x(L).put_(_index(L, [1]), L.ones(1))
            assert _x(L).put_(_index(L, [1, 1]), L.ones(2), accumulate=True)[0, 1].item() == 3.0
        finally:
            L.use_deterministic_algorithms(False)


def test_put_second_derivatives_match_torch():
    for accumulate in (False, True):
        def program(L, accumulate=accumulate):
            torch.manual_seed(2)
            x = L.from_torch(torch.randn(3, 4, dtype=torch.float64)) if L is internals else torch.randn(
                3, 4, dtype=torch.float64)
            x.requires_grad_()
            out = x.put(_index(L, [0, 5, 5]), x[0, :3] * x[1, :3], accumulate)
            return out * out, x
        assert_second_derivatives_match_torch(program)


def test_put_runs_on_fake_tensors():
    assert_fake_matches_real(lambda L, x, s: x.t().put_(L.tensor([0, 5]), s, accumulate=True),
                             lambda: (internals.ones(3, 4), internals.ones(2)))


def test_index_put_accumulates_repeated_indices():
    """accumulate=True adds once per occurrence; in float16 too (through float32)."""
    for dtype in ("float32", "float16", "int64"):
        results = []
        for L in (torch, internals):
            x = L.zeros(3, dtype=getattr(L, dtype))
            x.index_put_((_index(L, [0, 2, 0, 0]),), L.tensor([1, 2, 3, 4], dtype=getattr(L, dtype)), True)
            results.append(x)
        assert_same(results[1], results[0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_scatter_add_sums_16_bit_floats_in_float32(dtype):
    """2048 + 1 + 1 + 1 + 1: rounded after each add, float16 would stay at 2048; torch's CPU
    scatter_add (and scatter_reduce's sum) rounds once, after summing in float32."""
    results = []
    for L in (torch, internals):
        src = L.tensor([2048., 1., 1., 1., 1.], dtype=getattr(L, dtype))
        index = L.zeros(5, dtype=L.int64)
        results.append(L.zeros(1, dtype=src.dtype).scatter_add(0, index, src))
    assert_same(results[1], results[0])


SCATTER_REDUCE = {
    "add": lambda L, x: x.scatter(1, _index(L, [[0, 0], [1, 1]]), x[:, 1:] + 1, reduce="add"),
    "multiply": lambda L, x: x.scatter(0, _index(L, [[1, 1, 0]]), x[2:] + 1, reduce="multiply"),
    "value-add": lambda L, x: x.scatter(0, _index(L, [[0, 0, 1], [0, 2, 1]]), 2.5, reduce="add"),
    "value-multiply": lambda L, x: x.scatter(1, _index(L, [[2, 2, 2]]), -2, reduce="multiply"),
    "in-place": lambda L, x: x.clone().scatter_(1, _index(L, [[1, 1]]), x[:1] * 3, reduce="multiply"),
    "in-place-value": lambda L, x: x.clone().scatter_(0, _index(L, [[2], [2]]), 4., reduce="add"),
    "int64": lambda L, x: x.long().scatter(1, _index(L, [[0, 0]]), 3, reduce="multiply"),
    "float16": lambda L, x: x.half().scatter(1, _index(L, [[0, 0]]), x[:1, :2].half(), reduce="add"),
}


@pytest.mark.parametrize("name", SCATTER_REDUCE)
def test_scatter_with_reduce_matches_torch(name):
    """scatter(reduce="add"|"multiply"): repeated indices reduce once per occurrence (scatter.reduce,
    scatter.value_reduce and their in-place forms)."""
    t = torch.arange(1., 10.).reshape(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(SCATTER_REDUCE[name](internals, internals.from_torch(t)), SCATTER_REDUCE[name](torch, t))


_TORCH_SCATTER_WARNINGS = """
import torch, warnings
warnings.simplefilter("always")
for value in (torch.ones(1, 1), 2.):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.zeros(2, 2).scatter(0, torch.zeros(1, 1, dtype=torch.long), value, reduce="add")
    print(repr([str(w.message).split(" (Triggered internally")[0] for w in caught]))
"""


def test_scatter_with_reduce_warns_as_torch():
    """A tensor src with ``reduce`` is deprecated (a scalar value is not). torch warns once per
    process, so its warnings are read in a fresh interpreter."""
    import subprocess
    import sys
    theirs = subprocess.run([sys.executable, "-c", _TORCH_SCATTER_WARNINGS], capture_output=True, text=True,
                            check=True).stdout.splitlines()
    ours = []
    for value in (internals.ones(1, 1), 2.):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            internals.zeros(2, 2).scatter(0, internals.zeros(1, 1, dtype=internals.int64), value, reduce="add")
        ours.append(repr([str(w.message) for w in caught]))
    assert ours == theirs and theirs[1] == "[]"


# =============================================================================================
# Views, creation and the Python protocol
# =============================================================================================
ZERO_DIM_INDEX = {
    "int": lambda L: L.tensor(1),
    "negative int": lambda L: L.tensor(-1, dtype=L.int32),
    "true": lambda L: L.tensor(True),
    "false": lambda L: L.tensor(False),
    "int and slice": lambda L: (slice(1, None), L.tensor(2)),
}


@pytest.mark.parametrize("name", ZERO_DIM_INDEX)
def test_zero_dim_tensor_index_views_as_torch(name):
    """A 0-dim integer tensor indexes like a Python int: a view sharing the storage (torch's
    ``applySlicing`` turns it into ``select``); a 0-dim bool adds a dim of size 1 or 0, as a copy."""
    t = torch.arange(12.).reshape(3, 4)
    o = internals.from_torch(t)
    expected, ours = t[ZERO_DIM_INDEX[name](torch)], o[convert(ZERO_DIM_INDEX[name](torch))]
    assert_same(ours, expected)
    assert ours._is_view() == expected._is_view()
    same = expected.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    assert (ours.untyped_storage().data_ptr() == o.untyped_storage().data_ptr()) == same


def test_every_view_has_a_base():
    x = internals.zeros(2, 3, 4)
    views = [x.view(6, 4), x[0], x[:, 1:], x.transpose(0, 1), x.unfold(2, 2, 1), x.diagonal(),
             *x.unbind(1), *x.split(1), x.movedim([0, 1], [2, 0]), x.swapaxes(0, 2), x.unflatten(2, (2, 2))]
    for v in views:
        assert v._base is x and v._is_view()
    assert not x._is_view() and not x[_index(internals, [0])]._is_view() and not x.flip(0)._is_view()
    # view.dtype shares the storage but is non-differentiable, so autograd records no view (as torch)
    assert not x.view(internals.int32)._is_view() and not torch.zeros(2).view(torch.int32)._is_view()


@pytest.mark.parametrize("source, target", [("float32", "int32"), ("float32", "int16"), ("float32", "uint8"),
                                            ("int16", "float32"), ("int64", "float16"), ("bool", "int8")])
def test_view_dtype(source, target):
    t = torch.arange(16).reshape(2, 8).to(getattr(torch, source))[:, 4:]
    o = internals.from_torch(t)
    assert_same(o.view(getattr(internals, target)), t.view(getattr(torch, target)))


@pytest.mark.parametrize("make", [lambda L, x: x.new_zeros(2, 3), lambda L, x: x.new_ones((2,), dtype=L.int8),
                                  lambda L, x: x.new_full((1, 2), 7), lambda L, x: x.new_empty(3).fill_(1),
                                  lambda L, x: L.full_like(x, 2.5), lambda L, x: L.eye(2, 3, dtype=L.int64)])
def test_creation_like_a_tensor(make):
    def run(L):
        return make(L, L.ones(2, 4, dtype=L.float64)[:, ::2])
    assert_same(run(internals), run(torch))


def test_format_prints_a_number_for_a_0dim_tensor():
    for L in (torch, internals):
        x = L.tensor([3., 4.], requires_grad=True)
        (x * x * 21).sum().backward()
        assert (f"{x.grad[1]}", f"{x.grad[0]:.2f}", f"{L.tensor(7):03d}") == ("168.0", "126.00", "007")
    assert f"{internals.ones(2)}" == str(internals.ones(2))


def test_return_types_print_as_torch():
    x = [[1., 5.], [4., 2.]]
    ours, theirs = internals.tensor(x).max(1), torch.tensor(x).max(1)
    assert repr(ours).replace("internals", "torch") == repr(theirs)
    assert type(ours).__module__ == "internals.return_types" and ours.values is ours[0]
    assert internals.return_types.max is type(ours)


def test_numpy_protocol():
    o, t = internals.tensor([1., 2.]), torch.tensor([1., 2.])
    assert_same(o + np.array([1, 2]), t + np.array([1, 2]))
    assert_same(np.sin(o), np.sin(t))
    assert_same(np.greater(o, 1), np.greater(t, 1))
    assert np.array_equal(np.asarray(o), np.asarray(t)) and np.asarray(o, dtype=np.int8).dtype == np.int8
    assert internals.Tensor.__array_priority__ == torch.Tensor.__array_priority__


def test_generator_repr():
    assert repr(internals.Generator()).startswith("<internals._C.Generator object at 0x")


# =============================================================================================
# The CUDA kernels (Numba's simulator here): torch's CPU values and strides, on the device
# =============================================================================================
CUDA_CASES = {
    "cat": lambda L, x, dev: L.cat([x, x.t()[:2]], 0),
    "stack": lambda L, x, dev: L.stack([x, x], 2),
    "getitem": lambda L, x, dev: x[L.tensor([2, 0, 2], device=dev), 1:],
    "getitem-mask": lambda L, x, dev: x[x > 4],
    "getitem-cpu-index": lambda L, x, dev: x[:, L.tensor([1, 1])],
    "index_put-accumulate": lambda L, x, dev: x.index_put((L.tensor([0, 0], device=dev),), x[1], True),
    "setitem-mask": lambda L, x, dev: _set(x, x > 4, 0.5),
    "gather": lambda L, x, dev: x.gather(1, L.tensor([[2, 0], [1, 1], [0, 0]], device=dev)),
    "scatter_add": lambda L, x, dev: x.scatter_add(0, L.tensor([[2, 2, 0]], device=dev), x[:1]),
    "scatter-multiply": lambda L, x, dev: x.scatter(0, L.tensor([[2, 2, 0]], device=dev), 3., reduce="multiply"),
    "scatter-add-float16": lambda L, x, dev: x.half().scatter(1, L.tensor([[1, 1]], device=dev), 2., reduce="add"),
    "index_select": lambda L, x, dev: x.index_select(1, L.tensor([2, 0], device=dev)),
    "take": lambda L, x, dev: L.take(x, L.tensor([[8, -1]], device=dev)),
    "put-accumulate": lambda L, x, dev: x.t().put(L.tensor([8, -1, 8], device=dev), x[0, :3], True),
    "masked_fill": lambda L, x, dev: x.masked_fill(x < 3, -1.),
    "masked_select": lambda L, x, dev: x.masked_select(x > 2),
    "nonzero": lambda L, x, dev: L.nonzero(x > 4),
    "flip": lambda L, x, dev: x.t().flip(0),
    "roll": lambda L, x, dev: x.roll(1, 1),
    "repeat": lambda L, x, dev: x.repeat(1, 2),
    "tril": lambda L, x, dev: x.tril(),
    "diag_embed": lambda L, x, dev: L.diag_embed(x),
    "index_put-float16": lambda L, x, dev: x.half().index_put((L.tensor([1, 1], device=dev),), x[0].half(), True),
}


def _set(x, index, value):
    x = x.clone()
    x[index] = value
    return x


@pytest.mark.parametrize("name", CUDA_CASES)
def test_cuda_kernels(name):
    t = torch.arange(9.).reshape(3, 3)
    o = internals.from_torch(t).cuda()
    expected = CUDA_CASES[name](torch, t, "cpu")
    ours = CUDA_CASES[name](internals, o, "cuda")
    assert ours.device.type == "cuda" and ours.stride() == expected.stride()
    assert_same(ours.cpu(), expected, exact_layout=False)


# =============================================================================================
# tensor() from Python data: torch's dtype inference and its errors
# =============================================================================================
TENSOR_DATA = ["[1, 2.5]", "[True, 2]", "[[1, 2], [3, 4]]", "[np.float32(2), 1]", "[np.int16(1), 2]", "[]", "[[]]",
               "[L.tensor(1.), L.tensor(2.)]", "(True, False)", "[1e40]", "-1, dtype=L.uint8", "[2**63 - 1]",
               "[1.5, -2.7], dtype=L.int32", "[-255], dtype=L.uint8", "[1e300], dtype=L.float16",
               # errors
               "[2**63]", "-2**63 - 1", "300, dtype=L.int8", "[1, 300], dtype=L.uint8", "[-256], dtype=L.uint8",
               "[2.5e10], dtype=L.int32", "[[1, 2], [3]]", "[[1], [2, 3]]", "[[1, 2], 3]", "[1, [2]]", "'a'"]


@pytest.mark.parametrize("data", TENSOR_DATA)
def test_tensor_from_python_data(data):
    def run(L):
        return eval(f"L.tensor({data})", {"L": L, "np": np})
    try:
        expected = run(torch)
    except Exception:
        ours, theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
        assert str(ours) == str(theirs)
        return
    assert_same(run(internals), expected)


def test_large_copies_take_the_parallel_loop():
    """Above one grain (32768 elements) the CPU copy runs in parallel chunks: same result."""
    t = torch.arange(70001, dtype=torch.float64)
    o = internals.from_torch(t)
    assert_same(o.flip(0), t.flip(0))
    index = torch.arange(70001).flip(0)
    assert_same(o[internals.from_torch(index)], t[index])
