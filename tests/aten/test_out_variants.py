"""out=: ``torch.add(a, b, out=c)`` runs ``add.out``, writes into ``c`` and returns it.

Each case runs the same program in torch and in internals and compares what comes back: the
result is ``out`` itself (or a ``return_types.<op>_out`` of the outs), its values, dtype, sizes
and strides (a resized ``out`` takes the functional result's strides), the warnings (a non-empty
``out`` resized), the error class and message (dtype rules, autograd), the version counter, and
the operators a logging TorchDispatchMode sees. The same for the out= forms of the remaining
elementwise unary ops, ``nan_to_num`` (complex inputs too), ``amax``/``amin``, ``argmax``/``argmin``,
``cummax``/``cummin`` and ``normal``'s four overloads, with PyTorch's OpInfo samples run through each;
``mm`` into an ``out`` that is one of its inputs; and ``matmul(out=)`` of every rank logging the
products torch's ``_matmul_impl`` calls.

Tests the out= kernels across ``internals.aten.native`` (torch's ``*_out`` kernels in aten/src/ATen/native).
"""
import math
import warnings

import pytest
import torch
from helpers import (
    PRODUCT_ULPS,
    Adapter,
    assert_same,
    check_opinfo_samples,
    compare_into_empty_outs,
    logging_modes,
    opinfo_cases,
)
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








# Out= for operators that had none: the remaining elementwise unary ops, nan_to_num (complex
# inputs too), amax/amin, argmax/argmin, cummax/cummin and normal's four overloads
UNARY = ["reciprocal", "tan", "erf", "angle", "sign", "floor", "ceil", "trunc", "frac", "fix", "round",
         "nan_to_num"]
# unary_op's rule (out must have the input's dtype) and unary_float_op's (cast to a wider out)
UNARY_REDUCTION_CASES = {f"{name} {what}": program.format(name=name) for name in UNARY for what, program in {
    "": "lib.{name}(x, out=e(0))",
    "into long": "lib.{name}(x, out=e(0, dtype=lib.long))",
    "into float64": "lib.{name}(x, out=e(0, dtype=lib.float64))",
    "of ints": "lib.{name}(l, out=e(0))",
    "of ints into long": "lib.{name}(l, out=e(0, dtype=lib.long))",
    "into bool": "lib.{name}(x, out=e(0, dtype=lib.bool))",
    "into its input": "lib.{name}(x, out=x)",
    "resized with a warning": "lib.{name}(x, out=e(4))",
    "into a transposed out": "lib.{name}(x, out=e(3, 2).t())",
}.items()}
UNARY_REDUCTION_CASES.update({
    "bitwise_not": "lib.bitwise_not(l, out=e(0, dtype=lib.long))",
    "bitwise_not into float": "lib.bitwise_not(l, out=e(0))",
    "bitwise_not of a float into bool, refused for the dtype first": "lib.bitwise_not(x, out=e(0, dtype=lib.bool))",
    "round decimals": "lib.round(x / 7, decimals=2, out=e(0))",
    "round decimals into float64": "lib.round(x / 7, decimals=2, out=e(0, dtype=lib.float64))",
    # nn ops, through their aten out= overloads (torch._C._nn in torch)
    **{f"{name}{what}": f"lib.ops.aten.{name}.out(x, out=e(0{dtype}))" for name in ("gelu", "silu", "softplus")
       for what, dtype in (("", ""), (" into float64", ", dtype=lib.float64"))},
    "nan_to_num replacements": "lib.nan_to_num(lib.tensor([NAN, INF, -INF, 1.0]), nan=1.0, posinf=2.0, out=e(0))",
    "nan_to_num of complex": "lib.nan_to_num(lib.tensor([complex(NAN, INF), complex(1, -INF)]), neginf=-3.0, "
                             "out=e(0, dtype=lib.complex64))",
    "nan_to_num of complex into float": "lib.nan_to_num(lib.tensor([complex(NAN, INF)]), out=e(0))",
    "nan_to_num_ of complex": "lib.nan_to_num_(lib.tensor([complex(NAN, INF), complex(-INF, 2)]))",
})
for name in ("amax", "amin", "argmax", "argmin"):
    UNARY_REDUCTION_CASES.update({
        f"{name}": f"lib.{name}(x, 1, out=e(0{', dtype=lib.long' if name.startswith('arg') else ''}))",
        f"{name} of all": f"lib.{name}(x, out=e(3))",
        f"{name} keepdim into long": f"lib.{name}(x, 0, keepdim=True, out=e(0, dtype=lib.long))",
        f"{name} into float64": f"lib.{name}(x, 1, out=e(0, dtype=lib.float64))",
        f"{name} of an input that requires grad": f"lib.{name}(x.requires_grad_(), 1, out=e(0, dtype=lib.long))",
    })
for name in ("cummax", "cummin"):
    UNARY_REDUCTION_CASES.update({
        f"{name}": f"lib.{name}(x, 1, out=(e(0), e(0, dtype=lib.long)))",
        f"{name}, values of the wrong dtype": f"lib.{name}(x, 1, out=(e(0, dtype=lib.float64), e(0, dtype=lib.long)))",
        f"{name}, indices of the wrong dtype": f"lib.{name}(x, 1, out=(e(0), e(0)))",
        f"{name} resized": f"lib.{name}(x, 0, out=(e(2), e(2, dtype=lib.long)))",
        f"{name} of an input that requires grad":
            f"lib.{name}(x.requires_grad_(), 0, out=(e(0), e(0, dtype=lib.long)))",
    })
# normal draws into out itself (its dtype, its memory order) after resizing it to its own sizes
# broadcast with the inputs'
UNARY_REDUCTION_CASES.update({f"normal {what}": f"(lib.manual_seed(0), lib.normal({program}))[1]" for what, program in {
    "(tensor, float)": "x, 2.0, out=e(2, 3)",
    "(tensor, float) into float64": "x, 2.0, out=e(2, 3, dtype=lib.float64)",
    "(tensor, float) into an out that broadcasts": "x, 2.0, out=e(3)",
    "(tensor, float) into an empty out": "x, 2.0, out=e(0)",
    "(tensor, float) into a transposed out": "x, 2.0, out=e(3, 2).t()",
    "(float, tensor)": "1.0, g, out=e(0)",
    "(float, tensor) into float64": "1.0, g, out=e(2, 3, dtype=lib.float64)",
    "(tensor, tensor)": "x, g, out=e(0)",
    "(tensor, tensor) resized": "x, g, out=e(4)",
    "(float, float)": "1.0, 2.0, (2, 3), out=e(0)",
    "(float, float) resized": "1.0, 2.0, (2, 3), out=e(4)",
    "(float, float) into float64": "1.0, 2.0, (2, 3), out=e(0, dtype=lib.float64)",
    "of an input that requires grad": "x.requires_grad_(), 2.0, out=e(2, 3)",
    "with a negative std": "x, -1.0, out=e(2, 3)",
}.items()})
# A product written into one of its own inputs: torch does not refuse it, and BLAS reads the
# inputs while it writes, in an order that follows the BLAS library and the CPU. Only the outcome
# without the values is compared (error, or out returned, sizes, strides, dtype, version bumps).
ALIASED_PRODUCTS = {
    "mm into its first input": "(lambda y: lib.mm(x, y, out=x))(x + 1)",
    "mm into its second input": "(lambda y: lib.mm(y, x, out=x))(x.t() + 1)",
    "mm of an input with itself into it": "(lambda s: lib.mm(s, s, out=s))(x[:, :2].contiguous())",
    "mm into a transposed view of an input": "(lambda s: lib.mm(s, s + 1, out=s.t()))(x[:, :2].contiguous())",
    "mm into a strided view of an input": "lib.mm(m[:2, :2], m[:2, :2], out=m[::2, ::2])",
    "mv into its vector": "(lambda v: lib.mv(x[:, :2], v, out=v))(lib.arange(2.0))",
    "matmul into its input": "(lambda s: lib.matmul(s, s, out=s))(x[:, :2].contiguous())",
}


@pytest.mark.parametrize("program", [*CASES.values(), *UNARY_REDUCTION_CASES.values()],
                         ids=[*CASES, *UNARY_REDUCTION_CASES])
def test_out_variant_as_torch(program):
    program = program.replace("NAN", "float('nan')").replace("INF", "float('inf')")
    expected, got = _run(torch, program), _run(internals, program)
    if expected[0] != "error":
        # the values, as lists
        torch.testing.assert_close(got[-1], expected[-1], rtol=1e-6, atol=1e-6, equal_nan=True)
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


@pytest.mark.parametrize("program", list(ALIASED_PRODUCTS.values()), ids=list(ALIASED_PRODUCTS))
def test_product_into_its_input_runs_as_torch(program):
    expected, got = _run(torch, program), _run(internals, program)
    if expected[0] != "error":
        expected, got = expected[:-1], got[:-1]
    assert got == expected


# ------------------------------------------------------------------------------ OpInfo samples
def _adapter(name, kwargs=()):
    return Adapter(getattr(internals, name), kwargs=kwargs)


ADAPTERS = {name: _adapter(name) for name in ("reciprocal", "tan", "erf", "angle", "sign", "floor", "ceil",
                                              "trunc", "frac", "bitwise_not")}     # fix: an alias of trunc there
ADAPTERS.update({f"round{variant}": _adapter("round", ("decimals",)) for variant in
                 ("", ".decimals_0", ".decimals_3", ".decimals_neg_3")})
ADAPTERS.update({name: _adapter(name, ("dim", "keepdim")) for name in ("amax", "amin", "argmax", "argmin")})
ADAPTERS.update({name: _adapter(name, ("dim",)) for name in ("cummax", "cummin")})
ADAPTERS["nan_to_num"] = _adapter("nan_to_num", ("nan", "posinf", "neginf"))


OPINFO_CASES = opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples_into_out(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name], compare=compare_into_empty_outs)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
@pytest.mark.parametrize("kwargs", [{}, {"nan": 1.5}, {"posinf": 2.0, "neginf": -3.0}], ids=str)
def test_nan_to_num_of_complex_as_torch(dtype, kwargs):
    """Complex inputs (OpInfo lists none): the real and imaginary parts replaced each, with the
    value type's largest finite values by default; transposed, the result keeps the layout."""
    parts = [math.nan, math.inf, -math.inf, 1.5, -0.0]
    values = torch.tensor([[complex(r, i) for i in parts] for r in parts], dtype=dtype)
    for x in (values, values.t(), values[::2, 1:]):
        ours = internals.from_torch(x)
        assert_same(internals.nan_to_num(ours, **kwargs), torch.nan_to_num(x, **kwargs), rtol=0, atol=0)
        assert_same(internals.nan_to_num_(ours.clone(), **kwargs), torch.nan_to_num_(x.clone(), **kwargs),
                    rtol=0, atol=0)


# ------------------------------------------------------------------------------ matmul(out=)
MATMUL_OUT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2)), ((4, 2, 3), (3, 2)),
                 ((4, 2, 3), (3,)), ((4, 3, 2), (2,)), ((4, 2, 3), (4, 3, 2)), ((3,), (4, 3, 2)),
                 ((2, 3), (4, 3, 2)), ((2, 4, 2, 3), (4, 3, 2))]
OUTS = {"empty": lambda lib, shape: lib.empty(0), "fitting": lambda lib, shape: lib.empty(shape),
        "resized": lambda lib, shape: lib.empty(7),
        "transposed": lambda lib, shape: lib.empty(shape[::-1]).permute(list(reversed(range(len(shape)))))}


@pytest.mark.parametrize("out_kind", list(OUTS))
@pytest.mark.parametrize("shapes", MATMUL_OUT_SHAPES, ids=str)
def test_matmul_out_logs_the_products_torch_calls(shapes, out_kind):
    """Every rank pair writes with the product's out= overload (``mm.out`` for 1-d x 2-d and the
    folded products, ``bmm.out`` for the batched ones) through ``out`` resized and reshaped; a
    reshape that copies is copied back (the folded path's copy fails to broadcast, as torch's)."""
    (a, b), results, values = shapes, [], []
    shape = tuple(torch.matmul(torch.ones(a), torch.ones(b)).shape)
    for lib in (torch, internals):
        x, y = lib.arange(float(math.prod(a))).reshape(a), lib.arange(float(math.prod(b))).reshape(b) / 3
        out, log = OUTS[out_kind](lib, shape), []
        with warnings.catch_warnings(record=True) as caught, logging_modes(log, log)[lib is internals]:
            warnings.simplefilter("always")
            try:
                r = lib.matmul(x, y, out=out)
                outcome = (r is out, tuple(r.shape), r.stride(), len(caught))
                values.append(r.to_torch() if lib is internals else r)
            except RuntimeError as exc:
                outcome = ("error", str(exc))
        results.append((outcome, log))
    assert results[1] == results[0]
    if values:      # sums of products, in the order of the BLAS kernel the CPU picks
        assert_within_ulps(values[1], values[0], PRODUCT_ULPS)
