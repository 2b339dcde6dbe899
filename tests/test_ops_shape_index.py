"""Differential tests of the joining, indexing and creation operators (issue 16a) against torch:
PyTorch's OpInfo samples (values, dtypes, shapes, strides, errors), then gradients, torch's
errors and bounds checks, and the Python protocol (``__format__``, return types, ``__array__``).

The OpInfo runner is the one of ``test_ops.py`` (same comparison, same non-contiguous pass),
over this file's own table; its index arguments may also hold slices and ``...``.
"""
import numpy as np
import pytest
import torch

import internals
from conftest import TO_INTERNALS, assert_same, assert_same_error
from test_ops import (TORCH_DTYPES, Adapter, Unsupported, _noncontiguous, _opinfo_name, compare_call, fn, meth,
                      opinfo_samples, to_ours)
from torch.testing._internal.common_methods_invocations import op_db

ADAPTERS = {
    # joining and splitting
    "cat": Adapter(fn("cat"), kwargs=("dim",)),
    "stack": Adapter(fn("stack"), kwargs=("dim",)),
    "hstack": Adapter(fn("hstack")),
    "vstack": Adapter(fn("vstack")),
    "unbind": Adapter(fn("unbind"), "unbind"),
    "flip": Adapter(fn("flip"), "flip", kwargs=("dims",)),
    "roll": Adapter(fn("roll"), "roll"),
    "repeat": Adapter(meth("repeat"), "repeat"),
    "tile": Adapter(fn("tile"), "tile"),
    "repeat_interleave": Adapter(fn("repeat_interleave"), "repeat_interleave", kwargs=("repeats", "dim", "output_size")),
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
    # the samples with reduce="add"/"multiply" (scatter.reduce) are skipped: no such overload here
    "scatter": Adapter(fn("scatter"), "scatter", min_ran=0.3),
    "scatter_add": Adapter(fn("scatter_add"), "scatter_add"),
    "masked_fill": Adapter(fn("masked_fill"), "masked_fill"),
    "masked_select": Adapter(fn("masked_select"), "masked_select"),
    "nonzero": Adapter(fn("nonzero"), kwargs=("as_tuple",)),
    "argwhere": Adapter(fn("argwhere"), "argwhere"),
    "take": Adapter(fn("take"), "take"),
    # creation
    "new_zeros": Adapter(meth("new_zeros"), "new_zeros", kwargs=("dtype", "device", "requires_grad")),
    "new_ones": Adapter(meth("new_ones"), "new_ones", kwargs=("dtype", "device", "requires_grad")),
    "new_full": Adapter(meth("new_full"), "new_full", kwargs=("dtype", "device", "requires_grad")),
    "full_like": Adapter(fn("full_like"), kwargs=("dtype", "device")),
}
OPINFOS = {_opinfo_name(op): op for op in op_db if _opinfo_name(op) in ADAPTERS}
assert set(OPINFOS) == set(ADAPTERS), f"not in op_db: {set(ADAPTERS) - set(OPINFOS)}"


def convert(value):
    """``to_ours``, letting the slices and ``...`` of an index through."""
    if isinstance(value, slice) or value is Ellipsis:
        return value
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        converted = [convert(v) for v in value]
        return converted if isinstance(value, list) else tuple(converted)
    return to_ours(value)


def run_samples(name, dtype):
    """Every OpInfo sample of ``name`` at ``dtype``, as given and non-contiguous: (ran, skipped)."""
    op, adapter = OPINFOS[name], ADAPTERS[name]
    ran, skipped, reasons = 0, 0, set()
    for sample in opinfo_samples(op, dtype):
        for layout in ("as given", "non-contiguous"):
            x, args, kwargs = sample.input, sample.args, sample.kwargs
            if layout == "non-contiguous":
                x, args, kwargs = _noncontiguous(x), _noncontiguous(args), {k: _noncontiguous(v) for k, v in kwargs.items()}
            try:
                extra = set(kwargs) - set(adapter.kwargs)
                if extra:
                    raise Unsupported(f"keyword {sorted(extra)}")
                ours = (convert(x), convert(tuple(args)), {k: convert(v) for k, v in kwargs.items()})
            except Unsupported as why:
                skipped += 1
                reasons.add(str(why))
                continue
            where = f"{name} {dtype} {layout}: input {getattr(x, 'shape', x)!r}, args {args!r}, kwargs {kwargs!r}"
            try:
                compare_call(adapter.ours, op.op, (x, args, kwargs), ours, adapter.tol)
                if adapter.method and op.method_variant is not None:
                    compare_call(meth(adapter.method), op.method_variant, (x, args, kwargs), ours, adapter.tol)
            except AssertionError as e:
                raise AssertionError(f"{where}\n{e}") from e
            ran += 1
    return ran, skipped, reasons


CASES = [pytest.param(name, dtype, id=f"{name}-{str(dtype)[6:]}") for name in ADAPTERS
         for dtype in TORCH_DTYPES if dtype in OPINFOS[name].supported_dtypes("cpu")]


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples(name, dtype):
    ran, skipped, reasons = run_samples(name, dtype)
    assert ran > 0 and ran >= ADAPTERS[name].min_ran * (ran + skipped), (
        f"{name} {dtype}: only {ran} of {ran + skipped} samples ran; skipped for {sorted(reasons)}")


# =============================================================================================
# Gradients: torch's node names, torch's gradients, and gradcheck
# =============================================================================================
def _index(lib, values, dtype="int64"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


GRAD_CASES = {
    "cat": ([(2, 3), (2, 2)], lambda L, a, b: L.cat([a, b], 1)),
    "cat-promoted": ([(2, 3), (1, 3)], lambda L, a, b: L.cat([a, b.float()])),
    "stack": ([(2, 3), (2, 3)], lambda L, a, b: L.stack([a, b], 1)),
    "hstack": ([(2,), (3,)], lambda L, a, b: L.hstack([a, b])),
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
                                  "gather", "scatter", "masked_select", "take"])
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
from hypothesis import given, settings, strategies as hst  # noqa: E402


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
