"""Out= for operators that had none -- the remaining
elementwise unary ops, ``nan_to_num`` (complex inputs too), ``amax``/``amin``,
``argmax``/``argmin``, ``cummax``/``cummin`` and ``normal``'s four overloads -- plus ``mm`` into
an ``out`` that is one of its inputs, and ``matmul(out=)`` of every rank logging the products
torch's ``_matmul_impl`` calls.

As ``tests/aten/test_out_variants.py``: each program runs in torch and in internals and the results
are compared (``out`` itself returned, values, dtype, sizes, strides, version bumps, warnings,
error class and message); PyTorch's OpInfo samples then run through each out= overload.
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
from helpers import run_out_variant as _run

import internals
from internals.testing import assert_within_ulps

UNARY = ["reciprocal", "tan", "erf", "angle", "sign", "floor", "ceil", "trunc", "frac", "fix", "round",
         "nan_to_num"]
# unary_op's rule (out must have the input's dtype) and unary_float_op's (cast to a wider out)
CASES = {f"{name} {what}": program.format(name=name) for name in UNARY for what, program in {
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
CASES.update({
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
    CASES.update({
        f"{name}": f"lib.{name}(x, 1, out=e(0{', dtype=lib.long' if name.startswith('arg') else ''}))",
        f"{name} of all": f"lib.{name}(x, out=e(3))",
        f"{name} keepdim into long": f"lib.{name}(x, 0, keepdim=True, out=e(0, dtype=lib.long))",
        f"{name} into float64": f"lib.{name}(x, 1, out=e(0, dtype=lib.float64))",
        f"{name} of an input that requires grad": f"lib.{name}(x.requires_grad_(), 1, out=e(0, dtype=lib.long))",
    })
for name in ("cummax", "cummin"):
    CASES.update({
        f"{name}": f"lib.{name}(x, 1, out=(e(0), e(0, dtype=lib.long)))",
        f"{name}, values of the wrong dtype": f"lib.{name}(x, 1, out=(e(0, dtype=lib.float64), e(0, dtype=lib.long)))",
        f"{name}, indices of the wrong dtype": f"lib.{name}(x, 1, out=(e(0), e(0)))",
        f"{name} resized": f"lib.{name}(x, 0, out=(e(2), e(2, dtype=lib.long)))",
        f"{name} of an input that requires grad":
            f"lib.{name}(x.requires_grad_(), 0, out=(e(0), e(0, dtype=lib.long)))",
    })
# normal draws into out itself (its dtype, its memory order) after resizing it to its own sizes
# broadcast with the inputs'
CASES.update({f"normal {what}": f"(lib.manual_seed(0), lib.normal({program}))[1]" for what, program in {
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


@pytest.mark.parametrize("program", list(CASES.values()), ids=list(CASES))
def test_out_variant_as_torch(program):
    program = program.replace("NAN", "float('nan')").replace("INF", "float('inf')")
    expected, got = _run(torch, program), _run(internals, program)
    if expected[0] != "error":
        torch.testing.assert_close(got[-1], expected[-1], rtol=1e-6, atol=1e-6, equal_nan=True)
        expected, got = expected[:-1], got[:-1]
    assert got == expected


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
MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2)), ((4, 2, 3), (3, 2)),
                 ((4, 2, 3), (3,)), ((4, 3, 2), (2,)), ((4, 2, 3), (4, 3, 2)), ((3,), (4, 3, 2)),
                 ((2, 3), (4, 3, 2)), ((2, 4, 2, 3), (4, 3, 2))]
OUTS = {"empty": lambda lib, shape: lib.empty(0), "fitting": lambda lib, shape: lib.empty(shape),
        "resized": lambda lib, shape: lib.empty(7),
        "transposed": lambda lib, shape: lib.empty(shape[::-1]).permute(list(reversed(range(len(shape)))))}


@pytest.mark.parametrize("out_kind", list(OUTS))
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
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
