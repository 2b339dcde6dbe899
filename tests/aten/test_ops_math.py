"""Differential tests of the math operators (elementwise math, bitwise and shift
operators, rounding divisions, clamp, lerp, reductions) against torch.

As ``tests/aten/test_ops.py``: PyTorch's own OpInfo samples, as given and made non-contiguous, with
values, dtypes, shapes, strides and exception classes compared; then the Python operators,
in-place forms, errors and gradients (gradcheck and torch's grad_fn names).
"""

import functools

import pytest
import torch
from helpers import (
    MATMUL_TOL,
    TORCH_DTYPES,
    Adapter,
    assert_same,
    check_opinfo_samples,
    compare_call,
    fn,
    opinfo_cases,
    same_outcome,
)

import internals

# erf, gelu, silu, softplus, tan in float16/bfloat16: torch's vectorised CPU loops use their own
# polynomial approximations in float32 (Sleef, or erf's own), internals calls the C library's,
# so float32 results may differ in the last bits and rounding to 16 bits may land one ulp apart.
ULP16 = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2), torch.float32: (2e-6, 1e-6)}
# Two-pass variance, log-sum-exp and norms against torch's one-pass (Welford) and vectorised sums.
REDUCE_TOL = {torch.float16: (2e-3, 1e-3), torch.bfloat16: (2e-2, 1e-2), torch.float32: (1e-5, 1e-5),
              torch.float64: (1e-12, 1e-12)}
REDUCE_KW = ("dim", "keepdim")
STAT_KW = ("dim", "keepdim", "unbiased", "correction")

ADAPTERS = {
    # unary
    "sin": Adapter(fn("sin"), "sin", tol=ULP16),
    "cos": Adapter(fn("cos"), "cos", tol=ULP16),
    "tan": Adapter(fn("tan"), "tan", tol=ULP16),
    "erf": Adapter(fn("erf"), "erf", tol=ULP16),
    "nn.functional.gelu": Adapter(internals.nn.functional.gelu, kwargs=("approximate",), tol=ULP16),
    "nn.functional.silu": Adapter(internals.nn.functional.silu, kwargs=("inplace",), tol=ULP16),
    "nn.functional.softplus": Adapter(internals.nn.functional.softplus, kwargs=("beta", "threshold"), tol=ULP16),
    "sign": Adapter(fn("sign"), "sign"),
    "round": Adapter(fn("round"), "round"),
    "round.decimals_0": Adapter(fn("round"), "round", kwargs=("decimals",)),
    "round.decimals_3": Adapter(fn("round"), "round", kwargs=("decimals",)),
    "round.decimals_neg_3": Adapter(fn("round"), "round", kwargs=("decimals",)),
    "isnan": Adapter(fn("isnan"), "isnan"),
    "isinf": Adapter(fn("isinf"), "isinf"),
    "isfinite": Adapter(fn("isfinite"), "isfinite"),
    "bitwise_not": Adapter(fn("bitwise_not"), "bitwise_not"),
    # binary
    "div.floor_rounding": Adapter(fn("div"), "div", kwargs=("rounding_mode",)),
    "div.trunc_rounding": Adapter(fn("div"), "div", kwargs=("rounding_mode",)),
    "floor_divide": Adapter(fn("floor_divide"), "floor_divide"),
    "remainder": Adapter(fn("remainder"), "remainder"),
    "__rmod__": Adapter(lambda x, other: other % x),
    "fmod": Adapter(fn("fmod"), "fmod"),
    "bitwise_and": Adapter(fn("bitwise_and"), "bitwise_and"),
    "bitwise_or": Adapter(fn("bitwise_or"), "bitwise_or"),
    "bitwise_xor": Adapter(fn("bitwise_xor"), "bitwise_xor"),
    "bitwise_left_shift": Adapter(fn("bitwise_left_shift"), "bitwise_left_shift"),
    "bitwise_right_shift": Adapter(fn("bitwise_right_shift"), "bitwise_right_shift"),
    "clamp": Adapter(fn("clamp"), "clamp"),
    "lerp": Adapter(fn("lerp"), "lerp", tol=ULP16),
    "__rpow__": Adapter(lambda x, other: other ** x),
    "isclose": Adapter(fn("isclose"), "isclose", kwargs=("rtol", "atol", "equal_nan")),
    "allclose": Adapter(fn("allclose"), "allclose", kwargs=("rtol", "atol", "equal_nan")),
    "equal": Adapter(fn("equal"), "equal"),
    # reductions
    "any": Adapter(fn("any"), "any", kwargs=REDUCE_KW),
    "all": Adapter(fn("all"), "all", kwargs=REDUCE_KW),
    "count_nonzero": Adapter(fn("count_nonzero"), "count_nonzero", kwargs=("dim",)),
    "var": Adapter(fn("var"), "var", kwargs=STAT_KW, tol=REDUCE_TOL),
    "var.unbiased": Adapter(fn("var"), "var", kwargs=STAT_KW, tol=REDUCE_TOL),
    "std": Adapter(fn("std"), "std", kwargs=STAT_KW, tol=REDUCE_TOL),
    "std.unbiased": Adapter(fn("std"), "std", kwargs=STAT_KW, tol=REDUCE_TOL),
    "var_mean": Adapter(fn("var_mean"), kwargs=STAT_KW, tol=REDUCE_TOL),
    "var_mean.unbiased": Adapter(fn("var_mean"), kwargs=STAT_KW, tol=REDUCE_TOL),
    "std_mean": Adapter(fn("std_mean"), kwargs=STAT_KW, tol=REDUCE_TOL),
    "std_mean.unbiased": Adapter(fn("std_mean"), kwargs=STAT_KW, tol=REDUCE_TOL),
    "logsumexp": Adapter(fn("logsumexp"), "logsumexp", tol=REDUCE_TOL),
    "linalg.vector_norm": Adapter(internals.linalg.vector_norm, kwargs=("ord", "dim", "keepdim", "dtype"),
                                  tol=REDUCE_TOL),
    "norm": Adapter(fn("norm"), "norm", kwargs=("p", "dim", "keepdim"), tol=REDUCE_TOL),
    "norm.inf": Adapter(fn("norm"), "norm", kwargs=("p", "dim", "keepdim"), tol=REDUCE_TOL),
    "norm.fro": Adapter(fn("norm"), "norm", kwargs=("p", "dim", "keepdim"), tol=REDUCE_TOL),
    # products: torch's BLAS sums in another order (see test_ops.MATMUL_TOL)
    "dot": Adapter(fn("dot"), "dot", tol=MATMUL_TOL),
    "outer": Adapter(fn("outer"), "outer"),
    "addmv": Adapter(fn("addmv"), "addmv", kwargs=("beta", "alpha"), tol=MATMUL_TOL),
    "baddbmm": Adapter(fn("baddbmm"), "baddbmm", kwargs=("beta", "alpha"), tol=MATMUL_TOL),
    # sorting and scans; the selections compare their indices by what they pick (see below)
    "sort": Adapter(fn("sort"), "sort", kwargs=("dim", "descending", "stable")),
    "argsort": Adapter(fn("argsort"), "argsort", kwargs=("dim", "descending", "stable")),
    "topk": Adapter(fn("topk"), "topk", kwargs=("dim", "largest", "sorted")),
    "kthvalue": Adapter(fn("kthvalue"), "kthvalue", kwargs=("dim", "keepdim")),
    "median": Adapter(fn("median"), "median", kwargs=("dim", "keepdim")),
    "mode": Adapter(fn("mode"), "mode", kwargs=("dim", "keepdim")),
    "cumsum": Adapter(fn("cumsum"), "cumsum", kwargs=("dim", "dtype"), tol=REDUCE_TOL),
    "cumprod": Adapter(fn("cumprod"), "cumprod", kwargs=("dim", "dtype"), tol=REDUCE_TOL),
}


# Among equal values, torch's topk/kthvalue/median/mode pick an index their partial sorts happen
# to leave (not specified); internals picks by a stable sort. Their values are compared exactly,
# their indices by what they select in the input.
TIES = ("topk", "kthvalue", "median", "mode")


def compare_selection(name, ours_fn, theirs_fn, sample, ours_sample, tol=None):
    (x, args, kwargs), (ours_x, ours_args, ours_kwargs) = sample, ours_sample
    try:
        theirs = theirs_fn(x, *args, **kwargs)
    except Exception as error:
        with pytest.raises(type(error)):
            ours_fn(ours_x, *ours_args, **ours_kwargs)
        return
    ours = ours_fn(ours_x, *ours_args, **ours_kwargs)
    if isinstance(theirs, torch.Tensor):         # median() of every element: no index
        assert_same(ours, theirs)
        return
    assert type(ours).__name__ == type(theirs).__name__
    assert_same(ours.values, theirs.values)
    indices = ours.indices.to_torch()
    assert indices.dtype == theirs.indices.dtype and indices.shape == theirs.indices.shape
    assert indices.stride() == theirs.indices.stride()
    if x.dim() == 0:
        assert indices.item() == 0
        return
    position = 1 if name in ("topk", "kthvalue") else 0      # where dim sits among the arguments
    dim = kwargs.get("dim", args[position] if len(args) > position else -1) % x.dim()
    keepdim = name == "topk" or kwargs.get("keepdim", args[position + 1] if len(args) > position + 1 else False)
    picked = torch.take_along_dim(x, indices if keepdim else indices.unsqueeze(dim), dim)
    picked = picked if keepdim else picked.squeeze(dim)
    torch.testing.assert_close(picked, theirs.values, equal_nan=True, rtol=0, atol=0)


# Left out, with the reason (known gaps):
# - sort/argsort of 8000 elements with many ties (bool, 8- and 16-bit types): torch's default
#   (unstable) sort orders equal keys its own way there; internals' sort is always stable;
# - div(rounding_mode="trunc") in bfloat16: torch rounds the quotient to bfloat16 before truncating;
# - lerp, baddbmm in 16-bit floats: torch rounds intermediate products to the 16-bit type;
# - addmv, baddbmm with integer dtypes: internals rejects a float beta/alpha that torch's
#   samples pass.
TIED_SORTS = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.float16, torch.bfloat16)
EXCLUDED = {"sort": TIED_SORTS, "argsort": TIED_SORTS, "div.trunc_rounding": (torch.bfloat16,),
            "lerp": (torch.float16, torch.bfloat16), "baddbmm": (torch.float16, torch.bfloat16),
            "addmv": tuple(d for d in TORCH_DTYPES if not d.is_floating_point)}
EXCLUDED["baddbmm"] += EXCLUDED["addmv"]


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, TORCH_DTYPES, exclude=EXCLUDED))
def test_opinfo_samples(name, dtype):
    compare = functools.partial(compare_selection, name) if name in TIES else compare_call
    check_opinfo_samples(name, dtype, ADAPTERS[name], compare=compare)


# =============================================================================================
# Python operators, in-place forms and errors
# =============================================================================================

def ints(lib):
    return lib.tensor([[7, -7, 5], [-3, 0, 12]])


def floats(lib):
    return lib.tensor([[1.5, -2.25, 0.5], [-0.75, 3.0, -5.5]])


OPERATOR_CASES = {
    "a // 2": lambda lib: ints(lib) // 2,
    "a // -2.5": lambda lib: floats(lib) // -2.5,
    "a % 3": lambda lib: ints(lib) % 3,
    "a % -0.7": lambda lib: floats(lib) % -0.7,
    "5 // a": lambda lib: 5 // lib.tensor([2, -3, 4]),
    "5 % a": lambda lib: 5 % lib.tensor([2, -3, 4]),
    "a & 6": lambda lib: ints(lib) & 6,
    "6 | a": lambda lib: 6 | ints(lib),
    "a ^ b": lambda lib: ints(lib) ^ lib.tensor([[-3, 0, 12], [7, -7, 5]]),
    "bool & bool": lambda lib: lib.tensor([True, False]) & lib.tensor([True, True]),
    "~a": lambda lib: ~ints(lib),
    "~mask": lambda lib: ~lib.tensor([True, False]),
    "a << 3": lambda lib: ints(lib) << 3,
    "a >> 1": lambda lib: ints(lib) >> 1,
    "1 << a": lambda lib: 1 << lib.tensor([0, 3, 62]),
    "int8 << 10": lambda lib: lib.tensor([1, -1], dtype=lib.int8) << 10,
    "int8 >> 10": lambda lib: lib.tensor([-8, 8], dtype=lib.int8) >> 10,
    "uint8 << -1": lambda lib: lib.tensor([1, 2], dtype=lib.uint8) << -1,
    "div floor": lambda lib: lib.div(ints(lib), lib.tensor([2, -2, 3]), rounding_mode="floor"),
    "div trunc": lambda lib: floats(lib).div(-0.5, rounding_mode="trunc"),
    "clamp tensor bounds": lambda lib: floats(lib).clamp(lib.tensor([0.0, -1.0, 0.0]), lib.tensor(1.0)),
    "clamp int by float": lambda lib: ints(lib).clamp(0.5, 6.5),
    "clip": lambda lib: floats(lib).clip(max=0),
    "round decimals": lambda lib: lib.tensor([1.25, 2.5, -0.125, 1234.5]).round(decimals=-1),
    "sign of -0.0 and nan": lambda lib: lib.tensor([-0.0, float("nan"), -3.0]).sign(),
    "isinf": lambda lib: lib.isinf(lib.tensor([1.0, float("inf"), -float("inf"), float("nan")])),
    "isfinite": lambda lib: lib.isfinite(lib.tensor([1.0, float("inf"), float("nan")])),
    "lerp tensor weight": lambda lib: lib.lerp(floats(lib), floats(lib) * 3, lib.tensor([0.25, 0.75, 1.0])),
    "any uint8": lambda lib: lib.tensor([[0, 3], [0, 0]], dtype=lib.uint8).any(1),
    "all of empty": lambda lib: lib.ones(0, 3).all(0),
    "count_nonzero dims": lambda lib: ints(lib).count_nonzero((0, 1)),
    "var correction 2": lambda lib: floats(lib).var(1, correction=2, keepdim=True),
    "logsumexp with inf": lambda lib: lib.tensor([[-float("inf"), -float("inf")], [float("inf"), 1.0]]).logsumexp(1),
    "vector_norm inf": lambda lib: lib.linalg.vector_norm(floats(lib), float("inf"), dim=1),
    "vector_norm 0": lambda lib: lib.linalg.vector_norm(floats(lib), 0),
    "norm fro": lambda lib: lib.norm(floats(lib), "fro"),
    "norm fro dims": lambda lib: floats(lib).reshape(1, 2, 3).norm("fro", (0, 2), keepdim=True),
    "norm fro dim": lambda lib: lib.norm(floats(lib), p="fro", dim=1),
    "norm fro dtype": lambda lib: floats(lib).norm("fro", dtype=lib.float64),
    "norm default": lambda lib: lib.norm(floats(lib), dim=0),
    "matrix_norm fro": lambda lib: lib.linalg.matrix_norm(floats(lib).reshape(1, 2, 3), dim=(2, 0)),
    "isclose equal_nan": lambda lib: lib.isclose(lib.tensor([float("nan"), 1.0]),
                                                 lib.tensor([float("nan"), 1.0 + 1e-9]), equal_nan=True),
    "einsum trace": lambda lib: lib.einsum("ii", floats(lib)[:, :2]),
    "einsum batch": lambda lib: lib.einsum("bij,bjk->bik", floats(lib).reshape(1, 2, 3), floats(lib).reshape(1, 3, 2)),
    "einsum ellipsis": lambda lib: lib.einsum("...j,j->...", floats(lib), lib.tensor([1.0, 2.0, 3.0])),
    "sort transposed": lambda lib: floats(lib).t().sort(0),
    "cumsum bool": lambda lib: lib.tensor([True, False, True]).cumsum(0),
}


@pytest.mark.parametrize("case", OPERATOR_CASES)
def test_operators(case):
    same_outcome(OPERATOR_CASES[case], rtol=1e-6, atol=1e-6)


def _in_place(op):
    def run(lib):
        a = ints(lib).clone()
        op(a)
        return a
    return run


def _ifloordiv(a):
    a //= 2


def _imod(a):
    a %= 4


def _iand(a):
    a &= 6


def _ior(a):
    a |= 1


def _ixor(a):
    a ^= 3


def _ilshift(a):
    a <<= 2


def _irshift(a):
    a >>= 1


def _ipow(a):
    a **= 2


@pytest.mark.parametrize("op", [_ifloordiv, _imod, _iand, _ior, _ixor, _ilshift, _irshift, _ipow])
def test_in_place_operators_keep_the_tensor(op):
    """``a //= 2`` and friends write into ``a`` itself (same storage), with torch's values."""
    same_outcome(_in_place(op))
    a = ints(internals)
    before = a.data_ptr()
    op(a)
    assert a.data_ptr() == before


def test_ipow_float_is_in_place():
    a = floats(internals)
    alias = a
    a **= 2
    assert a is alias
    assert_same(a, floats(torch) ** 2)


ERROR_CASES = {
    "int // 0": lambda lib: ints(lib) // 0,
    "int % zero tensor": lambda lib: ints(lib) % lib.zeros(3, dtype=lib.int64),
    "float & float": lambda lib: floats(lib) & floats(lib),
    "bool << bool": lambda lib: lib.tensor([True]) << lib.tensor([True]),
    "~float": lambda lib: ~floats(lib),
    "bool // bool": lambda lib: lib.tensor([True]) // lib.tensor([True]),
    "div bad mode": lambda lib: ints(lib).div(2, rounding_mode="round"),
    "int //= float": lambda lib: ints(lib).__ifloordiv__(2.5),
    "clamp no bounds": lambda lib: floats(lib).clamp(),
    "clamp_ int by float": lambda lib: ints(lib).clamp_(0, 1.5),
    "round int decimals": lambda lib: ints(lib).round(decimals=1),
    "gelu int": lambda lib: lib.nn.functional.gelu(ints(lib)),
    "gelu bad approximate": lambda lib: lib.nn.functional.gelu(floats(lib), approximate="fast"),
    "lerp dtypes": lambda lib: lib.lerp(floats(lib), floats(lib).double(), 0.5),
    "lerp int": lambda lib: lib.lerp(ints(lib), ints(lib), 0.5),
    "isclose dtypes": lambda lib: lib.isclose(ints(lib), floats(lib)),
    "var int": lambda lib: ints(lib).var(),
    "vector_norm int": lambda lib: lib.linalg.vector_norm(ints(lib)),
    "norm fro 3 dims": lambda lib: floats(lib).reshape(1, 2, 3).norm("fro", (0, 1, 2)),
    "norm nuc 3 dims": lambda lib: lib.norm(floats(lib).reshape(1, 2, 3), "nuc"),
    "norm bad string": lambda lib: lib.norm(floats(lib), "abc"),
    "matrix_norm 1-d": lambda lib: lib.linalg.matrix_norm(floats(lib)[0]),
    "matrix_norm same dims": lambda lib: lib.linalg.matrix_norm(floats(lib), dim=(1, -1)),
    "dot 2d": lambda lib: lib.dot(floats(lib), floats(lib)),
    "dot dtypes": lambda lib: lib.dot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    "dot sizes": lambda lib: lib.dot(lib.ones(3), lib.ones(2)),
    "outer 2d": lambda lib: lib.outer(floats(lib), lib.ones(2)),
    "baddbmm 2d": lambda lib: lib.baddbmm(lib.ones(1, 2, 2), lib.ones(2, 2), lib.ones(1, 2, 2)),
    "topk k too big": lambda lib: floats(lib).topk(4),
    "kthvalue k 0": lambda lib: floats(lib).kthvalue(0),
    "median empty dim": lambda lib: lib.ones(2, 0).median(1),
    "sort bad dim": lambda lib: floats(lib).sort(2),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors(case):
    same_outcome(ERROR_CASES[case], message=case not in MESSAGE_DIFFERS)


# torch's messages for these name internals' own argument positions or C++ checks differently.
MESSAGE_DIFFERS = ("dot 2d", "sort bad dim", "topk k too big", "clamp no bounds", "baddbmm 2d", "kthvalue k 0")


# =============================================================================================
# Gradients: torch's grad_fn names, and gradcheck in float64
# =============================================================================================

def _x(lib):
    return lib.tensor([[0.3, -1.2, 2.1], [1.7, -0.4, 0.9]], dtype=lib.float64, requires_grad=True)


GRAD_CASES = {
    # the first row's 2-norm (2.44) is over 2 and is scaled down, the second's (1.96) is not
    "renorm": lambda lib, x: x.renorm(2, 0, 2.0),
    "renorm p3 dim1": lambda lib, x: x.renorm(3, 1, 1.0),
    "sin": lambda lib, x: x.sin(),
    "cos": lambda lib, x: x.cos(),
    "tan": lambda lib, x: x.tan(),
    "erf": lambda lib, x: x.erf(),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "gelu tanh": lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x, beta=2, threshold=3),
    "remainder": lambda lib, x: x % 0.8,
    "fmod": lambda lib, x: lib.fmod(x, x.detach() + 3),
    "clamp": lambda lib, x: x.clamp(-1, 1),
    "clamp tensor": lambda lib, x: x.clamp(lib.zeros(3, dtype=lib.float64), None),
    "clamp tensor, bounds without grad": lambda lib, x: x.clamp(lib.zeros(3, dtype=lib.float64),
                                                                lib.ones(3, dtype=lib.float64)),
    "clip": lambda lib, x: x.clip(max=1.0),
    "lerp scalar": lambda lib, x: x.lerp(x * 2, 0.3),
    "var": lambda lib, x: x.var(1),
    "std": lambda lib, x: x.std(),
    "std_mean": lambda lib, x: lib.std_mean(x, 1)[0],
    "var_mean": lambda lib, x: lib.var_mean(x)[1],
    "logsumexp": lambda lib, x: x.logsumexp(1),
    "norm": lambda lib, x: x.norm(),
    "norm fro": lambda lib, x: x.norm("fro", dim=(0, 1)),
    "norm fro dim": lambda lib, x: lib.norm(x, "fro", 1, keepdim=True),
    "vector_norm 3": lambda lib, x: lib.linalg.vector_norm(x, 3, dim=0),
    "vector_norm inf": lambda lib, x: lib.linalg.vector_norm(x, float("inf")),
    "dot": lambda lib, x: lib.dot(x[0], x[1]),
    "addmv": lambda lib, x: lib.addmv(x[0, :2], x, x[1], beta=0.5, alpha=2),
    "baddbmm": lambda lib, x: lib.baddbmm(x[:, :2].unsqueeze(0), x.unsqueeze(0), x.t().unsqueeze(0), alpha=0.5),
    "sort": lambda lib, x: x.sort(1).values,
    "topk": lambda lib, x: x.topk(2, 0).values,
    "kthvalue": lambda lib, x: x.kthvalue(2, 1).values,
    "median": lambda lib, x: x.median(1).values,
    "cumsum": lambda lib, x: x.cumsum(1),
    "cumprod": lambda lib, x: x.cumprod(1),
    # x minus some of its own values: exact zeros where gradcheck still moves the input
    "cumprod one zero": lambda lib, x: (x - lib.tensor([[0, -1.2, 0], [0, 0, 0]], dtype=lib.float64)).cumprod(1),
    "cumprod zeros": lambda lib, x: (x - lib.tensor([[0.3, -1.2, 0], [1.7, 0, 0.9]], dtype=lib.float64)).cumprod(1),
    "cumprod zeros dim 0": lambda lib, x: (x - lib.tensor([[0.3, 0, 0], [1.7, 0, 0]], dtype=lib.float64)).cumprod(0),
    "einsum": lambda lib, x: lib.einsum("ij,kj->ik", x, x),
    "scatter_reduce amax": lambda lib, x: x.scatter_reduce(1, lib.tensor([[0, 0, 2], [1, 1, 1]]), x * 2, "amax"),
    "div floor": lambda lib, x: lib.div(x, x.detach() + 3, rounding_mode="floor"),
    "div trunc scalar": lambda lib, x: lib.ops.aten.div.Scalar_mode(x, 2.0, rounding_mode="trunc"),
    "fmod scalar": lambda lib, x: lib.fmod(x, 0.8),
    "remainder tensor": lambda lib, x: lib.remainder(x, lib.full((3,), 0.8, dtype=lib.float64)),
    "lerp tensor": lambda lib, x: x.lerp(x * 2, lib.full((3,), 0.3, dtype=lib.float64)),
    "median all": lambda lib, x: x.median(),
    "mode": lambda lib, x: x.mode(1).values,
    "round": lambda lib, x: x.round(),
    "round decimals": lambda lib, x: x.round(decimals=1),
    "sign": lambda lib, x: x.sign(),
    "sort stable": lambda lib, x: x.sort(stable=True, dim=1).values,
}


@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradients(case):
    f = GRAD_CASES[case]
    ours, theirs = f(internals, _x(internals)), f(torch, _x(torch))
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert internals.autograd.gradcheck(lambda x: f(internals, x), (_x(internals),))
    x_ours, x_theirs = _x(internals), _x(torch)
    f(internals, x_ours).sum().backward()
    f(torch, x_theirs).sum().backward()
    assert_same(x_ours.grad, x_theirs.grad, rtol=1e-10, atol=1e-12, exact_layout=False)


# clamp with tensor bounds: the bounds get gradients too (torch's clamp_backward_min_max). The
# bounds broadcast against x; in "crossed", min > max at one column, where clamp returns max.
CLAMP_BOUNDS = {
    "min and max": ([[0.0, -1.0, 0.5]], [[1.0], [0.2]]),
    "crossed": ([0.0, -1.0, 1.5], [1.0, 2.0, 1.0]),
    "min only": ([[0.0, -1.0, 0.5], [2.0, -1.0, 0.0]], None),
    "max only": (None, 0.5),
}


@pytest.mark.parametrize("case", CLAMP_BOUNDS)
@pytest.mark.parametrize("name", ["clamp", "clip"])
def test_clamp_tensor_bounds_gradients(case, name):
    def inputs(lib):
        return [_x(lib)] + [None if b is None else lib.tensor(b, dtype=lib.float64, requires_grad=True)
                            for b in CLAMP_BOUNDS[case]]

    def f(lib, x, lo, hi):
        return getattr(lib, name)(x, lo, hi)

    ours, theirs = inputs(internals), inputs(torch)
    out_ours, out_theirs = f(internals, *ours), f(torch, *theirs)
    assert out_ours.grad_fn.name() == out_theirs.grad_fn.name()
    out_ours.backward(internals.from_torch(torch.arange(6.0, dtype=torch.float64).reshape(2, 3)))
    out_theirs.backward(torch.arange(6.0, dtype=torch.float64).reshape(2, 3))
    for a, b in zip(ours, theirs):
        if b is not None:
            assert_same(a.grad, b.grad, exact_layout=False)
    given = tuple(t for t in inputs(internals) if t is not None)
    assert internals.autograd.gradcheck(lambda *ts: f(internals, *_fill_bounds(ts, CLAMP_BOUNDS[case])), given)


def _fill_bounds(tensors, bounds):
    """(x, min, max) from the tensors gradcheck moves, with None where the case has no bound."""
    it = iter(tensors)
    return [next(it)] + [None if b is None else next(it) for b in bounds]


# var_mean/std_mean: one node for both outputs, named as torch's; gradients from either or both
STAT_MEAN = {
    "std_mean": lambda lib, x: lib.std_mean(x),
    "var_mean dim": lambda lib, x: lib.var_mean(x, 1),
    "std_mean keepdim": lambda lib, x: lib.std_mean(x, dim=0, correction=0, keepdim=True),
    "var_mean unbiased": lambda lib, x: lib.var_mean(x, [0, 1], False),
}


@pytest.mark.parametrize("used", [(0,), (1,), (0, 1)], ids=["stat", "mean", "both"])
@pytest.mark.parametrize("case", STAT_MEAN)
def test_stat_mean_one_node(case, used):
    f = STAT_MEAN[case]
    x_ours, x_theirs = _x(internals), _x(torch)
    ours, theirs = f(internals, x_ours), f(torch, x_theirs)
    assert [t.grad_fn.name() for t in ours] == [t.grad_fn.name() for t in theirs]
    assert ours[0].grad_fn is ours[1].grad_fn and theirs[0].grad_fn is theirs[1].grad_fn
    sum(ours[i].sum() * (i + 2) for i in used).backward()
    sum(theirs[i].sum() * (i + 2) for i in used).backward()
    assert_same(x_ours.grad, x_theirs.grad, rtol=1e-10, atol=1e-12, exact_layout=False)
    assert internals.autograd.gradcheck(lambda x: [f(internals, x)[i] for i in used], (_x(internals),))


def test_nuclear_norm_sums_singular_values():
    """p='nuc' (torch.norm, Tensor.norm, linalg.matrix_norm): the sum of the singular values,
    LAPACK's on both sides (within its last bits), with torch's node and gradient. The input has
    full rank: at a zero singular value the gradient U·Vᵀ depends on which null-space vectors
    LAPACK returns, which follows the CPU (cos of an arange has rank 2)."""
    x = torch.randn(2, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    calls = (lambda lib, o: lib.norm(o[0], "nuc"), lambda lib, o: o.norm("nuc", dim=(0, 1)),
             lambda lib, o: lib.linalg.matrix_norm(o, "nuc", dim=(2, 0), keepdim=True))
    for call in calls:
        ours_x, theirs_x = internals.from_torch(x).requires_grad_(), x.clone().requires_grad_()
        ours, theirs = call(internals, ours_x), call(torch, theirs_x)
        assert_same(ours, theirs, rtol=1e-12, atol=1e-12)
        assert ours.grad_fn.name() == theirs.grad_fn.name()
        ours.sum().backward()
        theirs.sum().backward()
        assert_same(ours_x.grad, theirs_x.grad, rtol=1e-10, atol=1e-10)
