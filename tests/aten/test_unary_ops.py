"""Unary operators (``aten/native/unary_ops.py``), declared structured as torch's
``UnaryOps.cpp`` declares them: a meta step (checks and the TensorIterator) and an impl step (the
loop) per family, out= the primary kernel, the functional and in-place kernels derived from it,
and the YAML marked exactly where torch 2.13's ``native_functions.yaml`` marks it. Then
``nan_to_num``: OpInfo samples, everyday calls and its gradient; and the rounding functions
``floor``, ``ceil``, ``trunc``, ``frac``, ``fix``; NumPy's names ``negative`` and ``absolute``;
``rsqrt`` and ``log1p`` (at the end).
"""

import math

import pytest
import torch
from helpers import (
    OPINFO_BY_NAME,
    TORCH_DTYPES,
    TORCH_NATIVE_FUNCTIONS,
    Adapter,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    assert_same,
    check_opinfo_samples,
    compare_call,
    compare_gradients_and_nodes,
    error_text,
    native_entries,
    opinfo_cases,
    run_described,
    run_everyday_call,
    same_error,
)
from helpers import run as _run

import internals
from internals.aten import dispatcher
from internals.aten.native import unary_ops
from internals.c10.dispatch_key import DispatchKey

INF, NAN = float("inf"), float("nan")
UNARY = ("neg", "reciprocal", "exp", "log", "sqrt", "sigmoid", "tanh", "sin", "cos", "tan", "erf", "rsqrt",
         "log1p", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log2", "log10", "expm1",
         "exp2", "lgamma", "erfinv", "digamma", "signbit", "sign", "sgn", "floor",
         "ceil", "trunc", "frac", "round", "bitwise_not")



def _marks(entry):
    return entry.get("structured", False), entry.get("structured_delegate")


def test_structured_marks_are_torchs():
    """Every entry marked structured (or delegating) here is marked so in torch, and every entry
    of the unary families carries torch's marks."""
    ours, theirs = native_entries(), native_entries(TORCH_NATIVE_FUNCTIONS)
    unary = [name for name in ours if name.split(".")[0].rstrip("_") in UNARY]
    assert len(unary) >= 3 * len(UNARY) - 5      # signbit has no in-place form
    for name, entry in ours.items():
        if any(_marks(entry)) or name in unary:
            assert _marks(entry) == _marks(theirs[name]), name


@pytest.mark.parametrize("name", ["sin", "exp_", "neg", "round.decimals", "round_", "signbit", "sgn_", "reciprocal",
                                  "reciprocal_", "bitwise_not_"])
def test_derived_kernels_run_the_declared_meta_and_impl(name):
    entry = native_entries()[name]
    out_kernel = dispatcher.find(entry["structured_delegate"]).table[DispatchKey.CPU][0].fn
    derived = dispatcher.find(name).table[DispatchKey.CPU][0].fn
    assert derived.__wrapped__ is out_kernel.meta
    assert derived.__module__ == out_kernel.meta.__module__ == unary_ops.__name__
    assert out_kernel.meta.__name__.startswith("meta_") and out_kernel.impl.__name__.startswith("impl_")



OUT_CASES = {
    "integers computed as floats, resized": lambda L: L.sin(L.tensor([[1, 2], [3, 4]]).t(), out=L.empty(0)),
    "resized, warns": lambda L: L.exp(L.tensor([1., 2.]), out=L.empty(3)),
    "float into a wider out": lambda L: L.exp(L.tensor([1., 2.]), out=L.empty(0, dtype=L.float64)),
    "kept strides": lambda L: L.neg(L.ones(2, 3), out=L.empty(3, 2).t()),
    "complex sqrt": lambda L: L.sqrt(L.tensor([-4 + 0j, 3 + 4j]), out=L.empty(0, dtype=L.complex64)),
    "integer floor copies": lambda L: L.floor(L.tensor([-3, 7]), out=L.empty(0, dtype=L.int64)),
    "round to decimals": lambda L: L.round(L.tensor([1.2345, -2.5]), decimals=2, out=L.empty(0)),
    "round to tens": lambda L: L.round(L.tensor([125., -251.]), decimals=-1, out=L.empty(0)),
    "bool sign": lambda L: L.sign(L.tensor([True, False]), out=L.empty(0, dtype=L.bool)),
    "complex sgn": lambda L: L.sgn(L.tensor([3 + 4j, 0j]), out=L.empty(0, dtype=L.complex64)),
    "signbit of -0.0": lambda L: L.signbit(L.tensor([-0., 1., -2.]), out=L.empty(0, dtype=L.bool)),
    "reciprocal of integers": lambda L: L.reciprocal(L.tensor([2, 4]), out=L.empty(0, dtype=L.float64)),
    "bitwise not of bools": lambda L: L.bitwise_not(L.tensor([True, False]), out=L.empty(0, dtype=L.bool)),
    "out is self": lambda L: (lambda x: L.tanh(x, out=x))(L.arange(4.)),
    "isposinf of the specials": lambda L: L.isposinf(L.tensor([1., INF, -INF, NAN, -0.]), out=L.empty(0, dtype=L.bool)),
    "isneginf of the specials": lambda L: L.isneginf(L.tensor([1., INF, -INF, NAN, -0.]).half(),
                                                     out=L.empty(0, dtype=L.bool)),
    "isposinf of integers": lambda L: L.isposinf(L.tensor([[1, -2], [3, 4]]).t(), out=L.empty(0, dtype=L.bool)),
    "isneginf of bools": lambda L: L.isneginf(L.tensor([True, False]), out=L.empty(0, dtype=L.bool)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variant_matches_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


ERROR_CASES = {
    "unsafe cast": lambda L: L.sin(L.tensor([1.]), out=L.empty(1, dtype=L.int64)),
    "unary op keeps the dtype": lambda L: L.neg(L.tensor([1.]), out=L.empty(1, dtype=L.float64)),
    "bool negation": lambda L: L.neg(L.tensor([True]), out=L.empty(1, dtype=L.float32)),
    "out dtype before the loop's": lambda L: L.frac(L.tensor([1]), out=L.empty(1)),
    "frac of integers": lambda L: L.frac(L.tensor([1]), out=L.empty(1, dtype=L.int64)),
    "floor of bool": lambda L: L.floor(L.tensor([True]), out=L.empty(1, dtype=L.bool)),
    "floor of complex": lambda L: L.floor(L.tensor([1j]), out=L.empty(1)),
    "sign of complex": lambda L: L.sign(L.tensor([1j]), out=L.empty(1)),
    "signbit into float": lambda L: L.signbit(L.tensor([1.]), out=L.empty(1)),
    "isposinf into float": lambda L: L.isposinf(L.tensor([1.]), out=L.empty(1)),
    "isneginf of complex": lambda L: L.isneginf(L.tensor([1j])),
    "round bool": lambda L: L.tensor([True]).round_(),
    "round integer decimals": lambda L: L.round(L.tensor([1]), decimals=1),
    "in place cannot cast": lambda L: L.tensor([1, 2]).exp_(),
    "reciprocal in place of integers": lambda L: L.tensor([1, 2]).reciprocal_(),
    "reciprocal out= of an input that requires grad": lambda L: L.reciprocal(L.ones(2, requires_grad=True),
                                                                           out=L.empty(2)),
    "reciprocal in place on a leaf that requires grad": lambda L: L.ones(2, requires_grad=True).reciprocal_(),
    "partial overlap": lambda L: (lambda x: L.exp(x[:4], out=x[1:5]))(L.arange(6.)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


def test_functional_and_in_place_forms_match_torch():
    def forms(L):
        x = L.arange(-3., 3.).reshape(2, 3).t()
        return [x.sin(), x.clone().neg_(), x.floor(), x.clone().round_(decimals=1), x.signbit(), x.sgn(),
                L.tensor([3, -1]).exp(), x.clone().sigmoid_(), x.reciprocal(),
                x.clone().reciprocal_(), L.reciprocal_(x.clone()), L.tensor([2., 4.], dtype=L.float16).reciprocal_()]
    for ours, theirs in zip(forms(internals), forms(torch)):
        assert_same(ours, theirs)


def test_reciprocal_in_place_gradient_matches_torch():
    def run(L):
        x = L.tensor([[1., 2.], [-4., 0.5]], requires_grad=True)
        y = (x * 1).reciprocal_()
        node = y.grad_fn.name()
        (x * 1).t().reciprocal_().backward(L.tensor([[1., 2.], [3., 4.]]))    # through a view
        return node, y.detach(), x.grad
    (our_node, *ours), (their_node, *theirs) = run(internals), run(torch)
    assert our_node == their_node == "ReciprocalBackward0"
    for o, t in zip(ours, theirs):
        assert_same(o, t)


FAKE_PROGRAMS = {
    "float op": lambda L, x: L.sin(x.t()),
    "in place": lambda L, x: x.neg_(),
    "out resized": lambda L, x: L.exp(x, out=L.empty(0, dtype=L.float64)),
    "bool result": lambda L, x: L.signbit(x.t()),
    "decimals": lambda L, x: L.round(x, decimals=2, out=L.empty(3, 4).t()),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program])


# ---- nan_to_num: not structured in torch, an out= kernel of its own (``nan_to_num_out``) that
# the functional (into ``empty_like``) and in-place (into the input) kernels run
def test_nan_to_num_out_overload_names_its_own_kernel():
    entry = native_entries()["nan_to_num.out"]
    assert entry["dispatch"] == {"CPU, CUDA": "nan_to_num_out"} and "out_rules" not in entry
    assert dispatcher.find("nan_to_num.out").table[DispatchKey.CPU][0].fn is unary_ops.nan_to_num_out


def _specials(L, dtype=None):
    nan, inf = float("nan"), float("inf")
    return L.tensor([[nan, inf, -inf], [1.5, -0.0, 3e38]], dtype=dtype or L.float32).t()


NAN_TO_NUM_OUT_CASES = {
    "defaults": lambda L: L.nan_to_num(_specials(L), out=L.empty(0)),
    "replacements given": lambda L: L.nan_to_num(_specials(L), 1., 2., -3., out=L.empty(0)),
    "resized, laid out as the input": lambda L: L.nan_to_num(_specials(L), out=L.empty(5)),
    "an out of the right sizes keeps its strides": lambda L: L.nan_to_num(_specials(L), out=L.empty(3, 2)),
    "float64": lambda L: L.nan_to_num(_specials(L, L.float64), posinf=1e300, out=L.empty(0, dtype=L.float64)),
    "float16: the dtype's largest": lambda L: L.nan_to_num(_specials(L, L.float16), out=L.empty(0, dtype=L.float16)),
    "a replacement rounded to bfloat16": lambda L: L.nan_to_num(
        _specials(L, L.bfloat16), nan=0.1, out=L.empty(0, dtype=L.bfloat16)),
    "integers are copied, resized contiguous": lambda L: L.nan_to_num(
        L.tensor([[1, 2], [3, 4]]).t(), out=L.empty(5, dtype=L.long)),
    "bool": lambda L: L.nan_to_num(L.tensor([True, False]), out=L.empty(0, dtype=L.bool)),
    "complex, each part": lambda L: L.nan_to_num(L.tensor([complex(float("nan"), float("inf")), 1 - 2j]), neginf=-1.,
                                                 out=L.empty(0, dtype=L.complex64)),
    "out is the input": lambda L: (lambda x: L.nan_to_num(x, out=x))(_specials(L)),
}


@pytest.mark.parametrize("case", NAN_TO_NUM_OUT_CASES)
def test_nan_to_num_out_variant_matches_torch(case):
    assert_out_variant_matches_torch(NAN_TO_NUM_OUT_CASES[case])


NAN_TO_NUM_ERRORS = {
    "out of another float dtype": lambda L: L.nan_to_num(_specials(L), out=L.empty(0, dtype=L.float64)),
    "integers into float": lambda L: L.nan_to_num(L.tensor([1, 2]), out=L.empty(0)),
    "partial overlap": lambda L: (lambda x: L.nan_to_num(x[:4], out=x[1:5]))(L.arange(6.)),
    "integers, partial overlap": lambda L: (lambda x: L.nan_to_num(x[:4], out=x[1:5]))(L.arange(6)),
    "an input that requires grad": lambda L: L.nan_to_num(_specials(L).requires_grad_(), out=L.empty(0)),
    "an out that requires grad": lambda L: L.nan_to_num(_specials(L), out=L.empty(0, requires_grad=True)),
}


@pytest.mark.parametrize("case", NAN_TO_NUM_ERRORS)
def test_nan_to_num_errors_match_torch(case):
    same_error(NAN_TO_NUM_ERRORS[case])


def test_nan_to_num_functional_in_place_and_gradient_match_torch():
    def forms(L):
        x = _specials(L).requires_grad_()
        y = L.nan_to_num(x, posinf=7.)
        y.backward(L.arange(1., 7.).reshape(3, 2))
        z = _specials(L).clone()
        return [y.detach(), L.nan_to_num_(z), z, L.nan_to_num(L.tensor([[5, 6]]).t()), x.grad], type(y.grad_fn).__name__
    (ours, our_node), (theirs, their_node) = forms(internals), forms(torch)
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t)
    assert our_node == their_node


# ---- expm1: one double-precision function serves the CPU loop, its overloads and the CUDA
# kernel (the simulator runs it in Python); at the edges (overflow, underflow, -0.0, infinities,
# NaN) each gives torch's values
EXPM1_EDGES = [float("-inf"), -1000., -40., -1e-30, -0., 0., 1e-30, 1., 88.7, 709.78, 709.79, 1000., float("inf"),
               float("nan")]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_expm1_at_the_edges_matches_torch(dtype, device):
    ours = internals.expm1(internals.tensor(EXPM1_EDGES, dtype=getattr(internals, dtype), device=device))
    theirs = torch.expm1(torch.tensor(EXPM1_EDGES, dtype=getattr(torch, dtype)))
    assert_same(ours.cpu(), theirs, ulps=1)      # SLEEF's or libm's, by the CPU path: within one ulp


# ---- logit: not structured in torch, an out= kernel of its own (``logit_out``) with the unary
# float iterator's rules: a float result, cast into any ``out`` that can hold it
LOGIT_OUT_CASES = {
    "into a wider out": lambda L: L.logit(L.tensor([0.2, 0.5]), out=L.empty(0, dtype=L.float64)),
    "into a narrower float": lambda L: L.logit(L.tensor([0.2, 0.5]), 0.1, out=L.empty(0, dtype=L.float16)),
    "integers computed as floats": lambda L: L.logit(L.tensor([0, 1]), out=L.empty(0)),
    "resized, warns": lambda L: L.logit(L.tensor([0.2, 0.5]), out=L.empty(5)),
    "float16 into float16, resized": lambda L: L.logit(L.tensor([0.2, 0.7], dtype=L.float16), 0.25,
                                                       out=L.empty(3, dtype=L.float16)),
}


@pytest.mark.parametrize("case", LOGIT_OUT_CASES)
def test_logit_out_variant_matches_torch(case):
    assert dispatcher.find("logit.out").table[DispatchKey.CPU][0].fn is unary_ops.logit_out
    assert_out_variant_matches_torch(LOGIT_OUT_CASES[case])


def test_logit_out_refuses_what_torch_refuses():
    same_error(lambda L: L.logit(L.tensor([0, 1]), out=L.empty(0, dtype=L.long)))
    same_error(lambda L: L.logit(L.tensor([0.5], requires_grad=True), out=L.empty(0)))


# =============================================================================================
# nan_to_num: OpInfo samples (no complex nan_to_num here) and everyday calls
# =============================================================================================
NAN_TO_NUM_ADAPTERS = {
    "nan_to_num": Adapter(internals.nan_to_num, "nan_to_num", kwargs=("nan", "posinf", "neginf")),
}




def _same(program, **env):
    assert _run(internals, program, **env) == _run(torch, program, **env)


# ---------------------------------------------------------------------------------- nan_to_num
SPECIAL = "lib.tensor([[1., NAN, 3.], [INF, -INF, 0.5]])"
NAN_TO_NUM = [
    f"lib.nan_to_num({SPECIAL})", f"{SPECIAL}.nan_to_num(1., 2., -3.)",
    f"lib.nan_to_num({SPECIAL}.double(), posinf=1e300)", f"lib.nan_to_num({SPECIAL}.half())",
    f"lib.nan_to_num({SPECIAL}.bfloat16())", "lib.nan_to_num(lib.arange(3))",
    f"{SPECIAL}.nan_to_num_(posinf=1e40)", f"lib.nan_to_num({SPECIAL}.t(), nan=-1.)",
    "lib.nan_to_num(lib.tensor([True, False]))", f"lib.nan_to_num({SPECIAL}, neginf=-7)",
]


@pytest.mark.parametrize("program", NAN_TO_NUM)
def test_nan_to_num(program):
    _same(program)


def test_nan_to_num_gradient_is_zero_where_not_finite():
    grads = []
    for lib in (internals, torch):
        x = lib.tensor([1.0, NAN, INF, -INF, 2.0], requires_grad=True)
        y = lib.nan_to_num(x)
        assert type(y.grad_fn).__name__ == "NanToNumBackward0"
        y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
    x = internals.tensor([0.5, 1.5, -2.0], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(internals.nan_to_num, (x,))


# =============================================================================================
# floor, ceil, trunc, frac and fix: every float dtype, integers and their errors, gradients, and
# the layout of their integer results
# =============================================================================================
ROUNDING_DEVICES = ["cpu", "cuda"]


ROUNDING = ["floor", "ceil", "trunc", "frac", "fix"]
ROUNDED_VALUES = [-2.5, -0.5, -0.0, 0.0, 0.3, 1.5, 2.7, -1e20, 3e15 + 0.5, INF, -INF, NAN]


@pytest.mark.parametrize("device", ROUNDING_DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", ROUNDING)
def test_rounding_functions(name, dtype, device):
    """Values (signed zeros: ceil(-0.5) is -0.0), dtype, strides of a transposed input, and the
    in-place variant returning its input."""
    xt = torch.tensor(ROUNDED_VALUES, dtype=dtype).reshape(3, 4)
    x = internals.from_torch(xt).to(device)
    for ours, theirs in ((x, xt), (x.t(), xt.t()), (x[:, ::2], xt[:, ::2])):
        assert_same(getattr(internals, name)(ours), getattr(torch, name)(theirs), rtol=0, atol=0)
        assert_same(getattr(ours, name)(), getattr(theirs, name)(), rtol=0, atol=0)
        signs = getattr(ours, name)().cpu().to(internals.float64).reshape(-1).tolist()
        expected = getattr(theirs, name)().double().reshape(-1).tolist()
        assert [math.copysign(1, v) for v in signs if v == v] == [math.copysign(1, v) for v in expected if v == v]
    y, yt = x.clone(), xt.clone()
    assert getattr(y, name + "_")() is y
    getattr(torch, name + "_")(yt)
    assert_same(y, yt, rtol=0, atol=0)


@pytest.mark.parametrize("name", ROUNDING)
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.int32, torch.bool, torch.complex64])
def test_rounding_functions_of_integers_and_their_errors(name, dtype):
    """An integer tensor is its own floor (a copy; itself in place); frac refuses integers; bool
    and complex are refused with torch's messages."""
    xt = torch.tensor([[1, 0, 3]]).to(dtype).t()
    x = internals.from_torch(xt)
    try:
        theirs = getattr(torch, name)(xt)
    except (NotImplementedError, RuntimeError):
        error_text(lambda: getattr(internals, name)(x), lambda: getattr(torch, name)(xt))
        return error_text(lambda: getattr(x, name + "_")(), lambda: getattr(xt, name + "_")())
    ours = getattr(internals, name)(x)
    assert_same(ours, theirs, rtol=0, atol=0)
    assert ours.data_ptr() != x.data_ptr()
    assert getattr(x, name + "_")() is x


@pytest.mark.parametrize("name", ROUNDING)
def test_rounding_functions_gradients(name):
    """floor, ceil and trunc pass no gradient (zeros); frac passes it through; torch's node names."""
    xt = torch.tensor([1.5, -2.25, 0.75], dtype=torch.float64, requires_grad=True)
    x = internals.from_torch(xt.detach()).requires_grad_()
    out, out_t = getattr(x, name)(), getattr(xt, name)()
    assert type(out.grad_fn).__name__ == type(out_t.grad_fn).__name__
    (out * internals.tensor([1.0, 2.0, 3.0], dtype=internals.float64)).sum().backward()
    (out_t * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    assert_same(x.grad, xt.grad, rtol=0, atol=0)
    assert internals.autograd.gradcheck(lambda t: getattr(t, name)() * t, (x.detach().requires_grad_(),))


@pytest.mark.parametrize("name", ["round", "floor", "ceil", "trunc"])
def test_integer_results_are_laid_out_by_tensor_iterator(name):
    """An integer input is copied into the output TensorIterator lays out (dense strides of the
    input's order), not cloned with the input's own strides: a (3, 1) view of strides (1, 3)
    gives strides (1, 1), as torch's."""
    xt = torch.tensor([[1, 0, 3]]).t()
    assert_same(getattr(internals, name)(internals.from_torch(xt)), getattr(torch, name)(xt), rtol=0, atol=0)
    xt = torch.arange(12).reshape(3, 4)[:, ::2].t()
    assert_same(getattr(internals, name)(internals.from_torch(xt)), getattr(torch, name)(xt), rtol=0, atol=0)
    if name == "round":        # sign of a bool tensor is the same kind of copy
        xt = torch.tensor([[True, False, True]]).t()
        assert_same(internals.sign(internals.from_torch(xt)), torch.sign(xt), rtol=0, atol=0)


# =============================================================================================
# negative and absolute: NumPy's names and small compositions torch writes in C++ over other operators, each
# program's result described (values, shape, strides, offset, dtype, node, view or not), its
# warnings and errors
# =============================================================================================
X = "lib.arange(12.).reshape(3, 4)"
G = "lib.ones(2, 2, requires_grad=True)"
NUMPY_NAME_PROGRAMS = [
    f"lib.negative({X})", f"{X}.negative_()", f"lib.negative({X}, out=lib.empty(0))", f"lib.absolute(-{X})",
    f"(-{X}).absolute_()", f"lib.absolute({X}, out=lib.empty(1))", "lib.negative(lib.tensor([True]))",
    "lib.absolute(lib.tensor([True]))", f"lib.negative({G})", f"lib.absolute({G})",
]


# =============================================================================================
# rsqrt and log1p:
# PyTorch's OpInfo samples (as given and non-contiguous), then everyday calls compared for values,
# strides, dtypes, grad_fn names, gradients (twice where torch differentiates twice), warnings and
# error messages
# =============================================================================================
# log1p: torch's CPU loop calls SLEEF's log1p (1-ulp), internals the C library's: a last-bit
# difference on some inputs.
LAST_BIT = {torch.float32: (2.5e-7, 1e-7), torch.float64: (5e-16, 1e-15)}
RSQRT_LOG1P_ADAPTERS = {
    "rsqrt": Adapter(internals.rsqrt, "rsqrt"),
    "log1p": Adapter(internals.log1p, "log1p", tol=LAST_BIT),
}

RSQRT_LOG1P_PROGRAMS = [
    "lib.rsqrt(lib.tensor([0.25, 1.0, 4.0, 0.0, -1.0]))",
    "lib.tensor([1, 4, 9]).rsqrt()",
    "lib.tensor([4.0, 16.0]).rsqrt_()",
    "lib.rsqrt(lib.tensor([1.0, 4.0]), out=lib.empty(2))",
    "lib.rsqrt(lib.tensor([1.0, 4.0]), out=lib.empty(2, dtype=lib.int64))",
    "lib.rsqrt(lib.tensor([True, False]))",
    "lib.tensor([1, 2]).rsqrt_()",
    "lib.log1p(lib.tensor([0.0, -1.0, -2.0, 1e-10, 3.0]))",
    "lib.tensor([0, 1, 2]).log1p()",
    "lib.tensor([1.0, 2.0]).log1p_()",
    "lib.log1p(lib.arange(4.0), out=lib.empty(0))",
]


GRAD_CASES = {
    "rsqrt": lambda lib, x, t: (x.abs() + 0.5).rsqrt() * t,
    "log1p": lambda lib, x, t: (x.abs() * t).log1p(),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    """compare_gradients_and_nodes's comparison; t[0, 0] is 0.3 here, and a second derivative may not reach x."""
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


GRADCHECKS = {
    "rsqrt": lambda x: (x.abs() + 0.5).rsqrt(),
    "log1p": lambda x: x.abs().log1p(),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck(name):
    x = internals.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(GRADCHECKS[name], (x,))


CUDA_PROGRAMS = {
    "rsqrt": lambda lib, d: lib.arange(1.0, 7.0, device=d).reshape(2, 3).t().rsqrt(),
    "log1p": lambda lib, d: lib.arange(6.0, device=d).log1p(),
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels_match_the_cpu_ones(name):
    """The CUDA kernels (simulated here) give the CPU kernels' values, which torch's CPU gives."""
    build = CUDA_PROGRAMS[name]
    ours = build(internals, "cuda")
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), build(torch, "cpu"), rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------
# The checks nan_to_num, rsqrt and log1p share (OpInfo samples), and those of the everyday programs
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, dtype", opinfo_cases(NAN_TO_NUM_ADAPTERS, TORCH_DTYPES,
                                                     exclude={"nan_to_num": [d for d in TORCH_DTYPES if d.is_complex]})
                         + opinfo_cases(list(RSQRT_LOG1P_ADAPTERS),
                                        (torch.float32, torch.float64, torch.int64, torch.bool)))
def test_opinfo_samples(name, dtype):
    if name in RSQRT_LOG1P_ADAPTERS:        # compared as torch's call, whatever it returns
        check_opinfo_samples(name, dtype, RSQRT_LOG1P_ADAPTERS[OPINFO_BY_NAME[name].name], compare=compare_call)
        return
    check_opinfo_samples(name, dtype, NAN_TO_NUM_ADAPTERS[name])


@pytest.mark.parametrize("program", NUMPY_NAME_PROGRAMS + RSQRT_LOG1P_PROGRAMS)
def test_everyday_calls(program):
    """NumPy's names described with their offset and whether they are views, rsqrt's and log1p's
    programs exactly."""
    run = run_described if program in NUMPY_NAME_PROGRAMS else run_everyday_call
    assert run(internals, program) == run(torch, program)
