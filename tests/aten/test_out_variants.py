"""out=: ``torch.add(a, b, out=c)`` runs ``add.out``, writes into ``c`` and returns it.

Each case runs the same program in torch and in internals and compares what comes back: the
result is ``out`` itself (or a ``return_types.<op>_out`` of the outs), its values, dtype, sizes
and strides (a resized ``out`` takes the functional result's strides), the warnings (a non-empty
``out`` resized), the error class and message (dtype rules, autograd), the version counter, and
the operators a logging TorchDispatchMode sees.
"""
import math

import pytest
import torch
from helpers import PRODUCT_ULPS, logging_modes
from helpers import inputs as _inputs  # noqa: F401
from helpers import run_out_variant as _run

import internals
from internals.testing import assert_within_ulps

# name -> program over the inputs, with ``lib`` and ``e(*shape, dtype=...)`` for an empty out
CASES = {
    # elementwise: TensorIterator's rule (cast to a wider out; a narrower one is refused)
    "add": "lib.add(x, g, out=e(2, 3))",
    "add alpha, out resized from empty": "lib.add(x, 1, alpha=2, out=e(0))",
    "add, out resized with a warning": "lib.add(x, x, out=e(5))",
    "add into a narrower dtype": "lib.add(x, x, out=e(2, 3, dtype=lib.long))",
    "add ints into float": "lib.add(l, l, out=e(2, 3))",
    "add of a transposed input keeps its layout": "lib.add(xt, 1, out=e(0))",
    "add into a transposed out keeps out's strides": "lib.add(xt, 1, out=e(2, 3).t())",
    "add broadcast": "lib.add(x, lib.ones(3), out=e(0))",
    "add in place through out": "lib.add(x, x, out=x)",
    "sub": "lib.sub(x, g, alpha=3, out=e(0))",
    "mul": "lib.mul(x, g, out=e(2, 3, dtype=lib.float64))",
    "div": "lib.div(l, 4, out=e(0))",
    "div ints into an int out": "lib.div(l, 4, out=e(0, dtype=lib.long))",
    "pow": "lib.pow(x, 2, out=e(0))",
    "pow tensor": "lib.pow(x, g, out=e(0))",
    "maximum": "lib.maximum(x, g, out=e(0))",
    "minimum": "lib.minimum(x, g, out=e(0))",
    "eq": "lib.eq(x, 2, out=e(0, dtype=lib.bool))",
    "lt into float": "lib.lt(x, g, out=e(0))",
    "ge": "lib.ge(x, g, out=e(2, 3, dtype=lib.bool))",
    "exp": "lib.exp(x, out=e(0))",
    "exp of ints into ints": "lib.exp(l, out=e(0, dtype=lib.long))",
    "exp of ints into float64": "lib.exp(l, out=e(0, dtype=lib.float64))",
    "log": "lib.log(x + 1, out=e(0))",
    "sqrt": "lib.sqrt(x, out=e(2, 3))",
    "sigmoid": "lib.sigmoid(x, out=e(0))",
    "tanh": "lib.tanh(x, out=e(0))",
    "sin": "lib.sin(x, out=e(0))",
    "cos": "lib.cos(x, out=e(0))",
    "neg": "lib.neg(x, out=e(0))",
    "neg into another dtype": "lib.neg(x, out=e(2, 3, dtype=lib.long))",
    "abs into another dtype": "lib.abs(x, out=e(2, 3, dtype=lib.long))",
    "clamp": "lib.clamp(x, 1, 3, out=e(0))",
    "clamp by tensors": "lib.clamp(x, min=g, out=e(0))",
    "clamp into another dtype": "lib.clamp(x, 0, 1, out=e(0, dtype=lib.long))",
    "where": "lib.where(x > 2, x, g, out=e(0))",
    "where into another dtype": "lib.where(x > 2, x, g, out=e(0, dtype=lib.long))",
    "where with a number": "lib.where(x > 2, x, 0.0, out=e(0))",
    # reductions and scans: computed in out's dtype
    "sum": "lib.sum(x, 0, out=e(0))",
    "sum keepdim": "lib.sum(x, 1, keepdim=True, out=e(0))",
    "sum into long": "lib.sum(x / 4, 0, out=e(2, dtype=lib.long))",
    "mean": "lib.mean(x, 0, out=e(0))",
    "mean into float64": "lib.mean(m, 1, out=e(0, dtype=lib.float64))",
    "mean into long": "lib.mean(x, 0, out=e(0, dtype=lib.long))",
    "prod": "lib.prod(x + 1, 1, out=e(0))",
    "cumsum": "lib.cumsum(x, 1, out=e(0))",
    "cumsum into long": "lib.cumsum(x / 3, 0, out=e(2, 3, dtype=lib.long))",
    "sum with a dtype that is not out's": "lib.sum(x, 0, dtype=lib.float64, out=e(0))",
    "sum with out's dtype": "lib.sum(x, 0, dtype=lib.float64, out=e(0, dtype=lib.float64))",
    "mean with a dtype that is not out's": "lib.mean(x, 0, dtype=lib.float64, out=e(0))",
    "mean of ints into float": "lib.mean(l, 0, out=e(0))",
    "mean into float16": "lib.mean(x, 0, out=e(0, dtype=lib.float16))",
    "cumsum with a dtype that is not out's": "lib.cumsum(x, 0, dtype=lib.float64, out=e(0))",
    "cumsum of ints into int32": "lib.cumsum(l, 0, out=e(0, dtype=lib.int32))",
    "prod into int32": "lib.prod(x, 1, out=e(0, dtype=lib.int32))",
    "sum into bool": "lib.sum(x, 0, out=e(0, dtype=lib.bool))",
    "max dim": "lib.max(x, 1, out=(e(0), e(0, dtype=lib.long)))",
    "min dim keepdim": "lib.min(x, 0, True, out=(e(0), e(0, dtype=lib.long)))",
    "max dim, indices of the wrong dtype": "lib.max(x, 1, out=(e(0), e(0)))",
    "max dim, values of the wrong dtype": "lib.max(x, 1, out=(e(0, dtype=lib.long), e(0, dtype=lib.long)))",
    # linear algebra: out's dtype must be the result's
    "mm": "lib.mm(x, m, out=e(0))",
    "mm into a fitting out": "lib.mm(x, m, out=e(2, 4))",
    "mm into float64": "lib.mm(x, m, out=e(2, 4, dtype=lib.float64))",
    "bmm": "lib.bmm(b, b.transpose(1, 2), out=e(0))",
    "matmul": "lib.matmul(x, m, out=e(0))",
    "matmul into long": "lib.matmul(x, m, out=e(0, dtype=lib.long))",
    "addmm": "lib.addmm(lib.ones(4), x, m, beta=2, alpha=3, out=e(0))",
    # shape and indexing
    "cat": "lib.cat([x, g], out=e(0))",
    "cat dim 1 into float64": "lib.cat([x, g], 1, out=e(0, dtype=lib.float64))",
    "cat into long": "lib.cat([x, g], out=e(0, dtype=lib.long))",
    "stack": "lib.stack([x, g], 1, out=e(0))",
    "stack into long": "lib.stack([x, g], out=e(0, dtype=lib.long))",
    "index_select": "lib.index_select(x, 1, i, out=e(0))",
    "index_select into long": "lib.index_select(x, 1, i, out=e(0, dtype=lib.long))",
    "gather": "lib.gather(x, 1, lib.tensor([[2, 0], [1, 1]]), out=e(0))",
    "gather into long": "lib.gather(x, 1, lib.tensor([[2, 0]]), out=e(0, dtype=lib.long))",
    "sort": "lib.sort(x, 1, descending=True, out=(e(0), e(0, dtype=lib.long)))",
    "sort stable": "lib.sort(xt, stable=True, dim=0, out=(e(0), e(0, dtype=lib.long)))",
    "sort, values of the wrong dtype": "lib.sort(x, out=(e(0, dtype=lib.long), e(0, dtype=lib.long)))",
    "topk": "lib.topk(x, 2, out=(e(0), e(0, dtype=lib.long)))",
    # factories: made in out's dtype, resized without a warning (arange: its own)
    "arange": "lib.arange(5, out=e(0, dtype=lib.long))",
    "arange into float": "lib.arange(1, 4, 0.5, out=e(0))",
    "arange resized, with its warning": "lib.arange(5, out=e(2, dtype=lib.long))",
    "arange with a dtype that is not out's": "lib.arange(5, out=e(0), dtype=lib.long)",
    "arange with a device type that is not out's": "lib.arange(5, out=e(0), device='cuda')",
    "zeros": "lib.zeros(3, out=e(2, dtype=lib.long))",
    "zeros of a size": "lib.zeros(2, 2, out=e(0))",
    "ones": "lib.ones((2, 3), out=e(2, 3, dtype=lib.int32))",
    "full": "lib.full((3,), 2, out=e(2, dtype=lib.long))",
    "linspace": "lib.linspace(0, 1, 5, out=e(2))",
    "linspace into float64": "lib.linspace(-1, 1, 4, out=e(0, dtype=lib.float64))",
    "arange requires_grad": "lib.arange(3.0, out=e(0), requires_grad=True)",
    # memory overlap: TensorIterator refuses an out that partly overlaps an input; cat and
    # index_select refuse any overlap; an out that reaches an element twice is refused
    "add into a transposed view of its input": "lib.add(x, 1, out=x.t())",
    "exp into a row of its input": "lib.exp(x, out=x[0])",
    "cat into one of its inputs": "lib.cat([x, g], out=x)",
    "index_select into a slice of its input": "lib.index_select(x, 0, lib.tensor([0]), out=x[0:1])",
    "add into an expanded out": "lib.add(x, 1, out=lib.ones(1).expand(2, 3))",
    "where into an input": "lib.where(x > 3, x, g, out=g)",
    "clamp into its input": "lib.clamp(x, 1, 3, out=x)",
    "cumsum into its input": "lib.cumsum(x, 0, out=x)",
    # autograd: no graph through out=
    "add of an input that requires grad": "lib.add(x.requires_grad_(), g, out=e(0))",
    "exp of an input that requires grad": "lib.exp(x.requires_grad_(), out=e(0))",
    "mm of an input that requires grad": "lib.mm(x, m.requires_grad_(), out=e(0))",
    "sum of an input that requires grad": "lib.sum(x.requires_grad_(), 0, out=e(0))",
    "max of an input that requires grad": "lib.max(x.requires_grad_(), 1, out=(e(0), e(0, dtype=lib.long)))",
    "cat of a list with an input that requires grad": "lib.cat([g, x.requires_grad_()], out=e(0))",
    "add into an out that requires grad": "lib.add(x, g, out=e(0).requires_grad_())",
    "matmul of an input that requires grad": "lib.matmul(x.requires_grad_(), m, out=e(0))",
    "zeros into an out that requires grad": "lib.zeros(2, out=e(0).requires_grad_())",
    "eq of an input that requires grad": "lib.eq(x.requires_grad_(), 2, out=e(0, dtype=lib.bool))",
    "add of an input that requires grad, under no_grad":
        "_no_grad(lib, lambda: lib.add(x.requires_grad_(), g, out=e(0)))",
}








@pytest.mark.parametrize("program", list(CASES.values()), ids=list(CASES))
def test_out_variant_as_torch(program):
    expected, got = _run(torch, program), _run(internals, program)
    if expected[0] != "error":
        torch.testing.assert_close(got[-1], expected[-1], rtol=1e-6, atol=1e-6)   # the values, as lists
        expected, got = expected[:-1], got[:-1]
    assert got == expected


def test_out_results_are_the_outs_and_their_versions_move():
    """Sanity of the comparison above for one case: ``r is out``, one version bump per write."""
    kind, identity, _, versions, messages, _ = _run(internals, CASES["max dim"])
    assert (kind, identity, versions, messages) == (("return_types", "max_out", 2),
                                                     [True, True], [1, 1], [])


# The operators a logging mode sees: the out= overload, as torch's.
LOGGED = {
    "add": lambda lib, x: lib.add(x, x, out=lib.empty(0)),
    "exp": lambda lib, x: lib.exp(x, out=lib.empty(0)),
    "sum": lambda lib, x: lib.sum(x, 0, out=lib.empty(0)),
    "max": lambda lib, x: lib.max(x, 1, out=(lib.empty(0), lib.empty(0, dtype=lib.long))),
    "mm": lambda lib, x: lib.mm(x, x.t(), out=lib.empty(0)),
    "cat": lambda lib, x: lib.cat([x, x], out=lib.empty(0)),
    "arange": lambda lib, x: lib.arange(3, out=lib.empty(0, dtype=lib.long)),
    "zeros": lambda lib, x: lib.zeros(3, out=lib.empty(0)),
    "sort": lambda lib, x: lib.sort(x, out=(lib.empty(0), lib.empty(0, dtype=lib.long))),
    "clamp": lambda lib, x: lib.clamp(x, 0, 1, out=lib.empty(0)),
}


@pytest.mark.parametrize("name", list(LOGGED))
def test_out_variant_logged_as_torch(name):
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    x_t, x_i = torch.ones(2, 3), internals.ones(2, 3)
    with mode_t:
        LOGGED[name](torch, x_t)
    with mode_i:
        LOGGED[name](internals, x_i)
    assert log_i == log_t


@pytest.mark.parametrize("program", ["lib.exp(lib.ones(1), out=3)", "lib.add(lib.ones(1), lib.ones(1), out=3)"])
def test_out_of_another_type_as_torch(program):
    """The binding's signature carries ``out`` where torch's does: a number for it is refused in
    torch's words, or (add takes numbers as tensors) taken as a wrapped number."""
    results = []
    for lib in (torch, internals):
        with pytest.raises(Exception) as info:      # noqa: PT011 -- the class is compared below
            eval(program, {"lib": lib})
        results.append((type(info.value).__name__, str(info.value)))
    assert results[1] == results[0]


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2)), ((4, 2, 3), (3, 2)),
                 ((4, 2, 3), (4, 3, 2)), ((3,), (4, 3, 2))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_out(shapes):
    """Values, sizes and strides of every kind of product, and the autograd refusal in
    ``matmul()``'s name; the 1-d and 2-d products log the out= product torch's does."""
    a, b = shapes
    results = []
    for lib in (torch, internals):
        x, y = lib.arange(float(math.prod(a))).reshape(a), lib.arange(float(math.prod(b))).reshape(b) / 3
        log = []
        mode = logging_modes(log, log)[lib is internals]
        out = lib.empty(0)
        with mode:
            r = lib.matmul(x, y, out=out)
        with pytest.raises(RuntimeError) as info:
            lib.matmul(x.requires_grad_(), y, out=lib.empty(0))
        logged = log if (len(a), len(b)) in {(1, 1), (2, 1), (2, 2)} else None
        values = r.detach().to_torch() if lib is internals else r.detach()
        results.append((r is out, tuple(r.shape), r.stride(), values, str(info.value), logged))
    assert results[1][:3] == results[0][:3] and results[1][4:] == results[0][4:]
    assert_within_ulps(results[1][3], results[0][3], PRODUCT_ULPS)     # sums in the order of the CPU's BLAS kernel
