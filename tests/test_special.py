"""``internals.special`` (torch.special) against torch: the functions that rename operators
internals has (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ...), ``ndtr``, composed of
``erf``, as torch composes it, and the functions with kernels of their own: the modified Bessel
functions ``i0``, ``i0e``, ``i1``, ``i1e`` and ``sinc``.

PyTorch's OpInfo samples of each renamed operator run through the torch.special name (torch
lists those names as the OpInfo's aliases), at float32 and every other sample (``step=2``: the
name only adds a dispatcher hop over the loops ``tests/aten`` sweeps in full); then everyday calls
compared for values, strides, dtypes, grad_fn names and errors, and gradients twice.
"""

import numpy as np
import pytest
import torch
from helpers import (
    COMPLEX_ULPS,
    LIBM_ULPS,
    Adapter,
    assert_same,
    check_opinfo_samples,
    compare_gradients_and_nodes,
    opinfo_cases,
)
from helpers import run_everyday_call as _run

import internals

S = internals.special
# torch's float CPU loops call SLEEF's vectorized exp, expm1, exp2, log1p and lgamma (1-ulp
# bounds), internals the C library's: a last-bit difference on some inputs (as in
# tests/aten/test_pointwise_special_functions.py). digamma's float32 series is summed in another
# order; erfinv's Newton steps round differently near |y| -> 1.
# Half-precision results are float32 values rounded once: a float32 last bit rarely moves them.
LAST_BIT = {torch.float32: (3e-7, 1e-7), torch.float64: (1e-14, 1e-15), torch.float16: (1e-3, 0),
            torch.bfloat16: (8e-3, 0)}
ALIASES = {     # torch.special's name -> the OpInfo of the operator it renames
    "expit": "sigmoid", "erf": "erf", "erfinv": "erfinv", "gammaln": "lgamma", "digamma": "digamma",
    "psi": "digamma", "exp2": "exp2", "expm1": "expm1", "log1p": "log1p", "logit": "logit", "xlogy": "xlogy",
    "logsumexp": "logsumexp", "round": "round.decimals_3", "softmax": "softmax.with_dtype",
    "log_softmax": "log_softmax.with_dtype", "ndtr": "special.ndtr", "i0": "i0", "i0e": "special.i0e",
    "i1": "special.i1", "i1e": "special.i1e", "sinc": "sinc",
}
KWARGS = {"logit": ("eps",), "round": ("decimals",), "softmax": ("dtype",), "log_softmax": ("dtype",),
          "logsumexp": ("keepdim",)}
CASES = [pytest.param(name, case.values[1], id=f"{name}-{str(case.values[1])[6:]}")
         for name in ALIASES for case in opinfo_cases([ALIASES[name]], (torch.float32,))]


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples_through_the_special_name(name, dtype):
    adapter = Adapter(getattr(S, name), kwargs=KWARGS.get(name, ()), tol=LAST_BIT)
    check_opinfo_samples(ALIASES[name], dtype, adapter, step=2)


X = "lib.tensor([[-2.0, -0.5, -0.0], [0.0, 1.5, 3.0]])"
P = "lib.tensor([0.0, 0.25, 0.5, 1.0, 1.5, -0.1])"
PROGRAMS = [
    f"lib.special.ndtr({X})", "lib.special.ndtr(lib.tensor([-1, 0, 2]))", f"lib.special.ndtr({X}.t())",
    "lib.special.ndtr(lib.tensor([float('inf'), float('-inf'), float('nan'), -40.0]))",
    "lib.special.ndtr(lib.tensor([0.5], dtype=lib.float64), out=lib.empty(1, dtype=lib.float64))",
    f"lib.special.ndtr({X}.requires_grad_())", f"lib.special.expit({X}.requires_grad_())",
    "lib.special.expit(lib.tensor([1, 2]))", "lib.special.expit(lib.tensor([0.0]), out=lib.empty(1))",
    f"lib.special.gammaln({X}.requires_grad_())", f"lib.special.psi({X}.requires_grad_())",
    f"lib.special.erf({X}, out=lib.empty(0))", "lib.special.erfinv(lib.tensor([0.0, 0.5, 1.0, 2.0]))",
    "lib.special.exp2(lib.tensor([3, -1]))", f"lib.special.log1p({X}.requires_grad_())",
    f"lib.special.logit({P}, 0.1)", f"lib.special.logit({P}, eps=None)",
    f"lib.special.round({X}.requires_grad_(), decimals=1)", "lib.special.round(lib.tensor([1.25]), decimals=-1)",
    f"lib.special.xlogy({X}.requires_grad_(), 2)", f"lib.special.xlogy(2, {X}.requires_grad_())",
    f"lib.special.xlogy({X}, {X}.t().t())", "lib.special.xlogy(2, lib.tensor([3.0]), out=lib.empty(1))",
    f"lib.special.logsumexp({X}.requires_grad_(), 1)", f"lib.special.logsumexp({X}, (0, 1), keepdim=True)",
    f"lib.special.logsumexp({X}, 0, out=lib.empty(3))",
    f"lib.special.softmax({X}.requires_grad_(), 1)", f"lib.special.log_softmax({X}, 0, dtype=lib.float64)",
    # errors: torch's classes (complex inputs, a dim out of range, out= of a narrower dtype)
    "lib.special.ndtr(lib.tensor([1j]))", "lib.special.expit(lib.tensor([1.0]), out=lib.empty(1, dtype=lib.int64))",
    f"lib.special.softmax({X}, 2)", "lib.special.gammaln(lib.tensor([1j]))",
    # the modified Bessel functions: integers and bool computed in float32, half precision in
    # float32 and rounded, out= of another float dtype, a transposed input, the method and in-place
    # forms, grad_fn names; a complex input, an integer out= or in-place result refused
    "lib.i0(lib.tensor([[-3, 0], [2, 9]]))", "lib.special.i0e(lib.tensor([True, False]))",
    "lib.special.i1(lib.tensor([-1.5, 2.0], dtype=lib.float16))",
    "lib.special.i1e(lib.tensor([-1.5, 2.0], dtype=lib.bfloat16))",
    f"lib.special.i0({X}, out=lib.empty(2, 3, dtype=lib.float64))", f"lib.special.i1({X}.t())",
    f"{X}.i0()", f"{X}.i0_()", f"lib.i0_({X})", f"lib.special.i1e({X}.requires_grad_())",
    f"lib.special.i0e({X}.requires_grad_())", f"lib.i0({X}.requires_grad_())",
    "lib.special.i0(lib.tensor([1j]))", "lib.special.i0e(lib.tensor([1j]))", "lib.special.i1(lib.tensor([1j]))",
    "lib.special.i1e(lib.tensor([1.0]), out=lib.empty(1, dtype=lib.int64))", "lib.tensor([1, 2]).i0_()",
    # sinc: 1 at 0 (either sign), integers as float32, the method and in-place forms, out=, gradients
    "lib.special.sinc(lib.tensor([0.0, -0.0, 1.0, 0.5, 1e-30, float('inf'), float('nan')]))",
    "lib.sinc(lib.tensor([0, 1, -3]))",
    f"{X}.sinc()", f"{X}.sinc_()", f"lib.sinc({X}.requires_grad_())", "lib.tensor([1, 2]).sinc_()",
    f"lib.special.sinc({X}, out=lib.empty(2, 3, dtype=lib.float64))",
    "lib.sinc(lib.tensor([0.5, 2.0], dtype=lib.bfloat16))",
]
# Programs whose values come from SLEEF-backed loops in torch (see LAST_BIT); all else the same bits.
# The Bessel functions' e^|x| is the C library's exp, and their series follow the build's fused
# multiply-adds (see BESSEL_ULPS): the same bits here, within ulps elsewhere.
CLOSE = ("expit", "gammaln", "psi", "log1p", "logsumexp", "softmax", "logit", "xlogy", "exp2", "ndtr", "erf", "i0",
         "i1", "sinc")


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls_match_torch(program):
    ours, theirs = _run(internals, program), _run(torch, program)
    if theirs[0] == "error" or not any(name in program for name in CLOSE):
        assert ours == theirs
        return
    (meta_i, messages_i), (meta_t, messages_t) = ours, theirs
    assert (meta_i[:3], meta_i[4], messages_i) == (meta_t[:3], meta_t[4], messages_t)
    rtol, atol = LAST_BIT[getattr(torch, meta_t[0])]
    torch.testing.assert_close([float(v) for v in meta_i[3]], [float(v) for v in meta_t[3]], rtol=rtol, atol=atol,
                               equal_nan=True)


@pytest.mark.parametrize("build", [
    lambda lib, x, t: lib.special.i0(x) * t,
    lambda lib, x, t: lib.special.i0e(x) * t,
    lambda lib, x, t: lib.special.i1(x * t),
    lambda lib, x, t: lib.special.i1e(x) * t,
    lambda lib, x, t: lib.special.sinc(x * t),
    lambda lib, x, t: lib.special.ndtr(x) * t,
    lambda lib, x, t: lib.special.expit(x) * t,
    lambda lib, x, t: lib.special.xlogy(t, x.exp()),
    lambda lib, x, t: lib.special.logsumexp(x * t, 1),
    lambda lib, x, t: lib.special.log_softmax(x * t, 0),
], ids=["i0", "i0e", "i1", "i1e", "sinc", "ndtr", "expit", "xlogy", "logsumexp", "log_softmax"])
def test_gradients_twice_match_torch(build):
    compare_gradients_and_nodes(build)


def _node_tree(fn):
    """The backward graph below ``fn`` as nested (name, children), shared nodes repeated."""
    return None if fn is None else (type(fn).__name__, [_node_tree(n) for n, _ in fn.next_functions])


def test_sinc_second_gradient_near_zero_is_torchs():
    """Near 0 the three terms of sinc's backward that reach ``x * pi`` cancel, and only in the
    order torch's engine adds them (its nodes made in the order torch's C++ makes them) to
    torch's 0; built in another order they leave -pi**2."""
    results = []
    for lib in (internals, torch):
        x = lib.tensor([1e-20, 1e-10, 0.5, -2.0], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(lib.sinc(x).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        results.append((g.tolist(), gg.tolist(), _node_tree(g.grad_fn)))
    assert results[0] == results[1]


def test_every_name_is_torchs():
    assert set(S.__all__) <= set(dir(torch.special))


# ---- the modified Bessel functions over their whole range: both sides of the series' switch at
# |x| = 8, where e^|x| overflows float32 (88.7) and float64 (709.8), the signed zeros, infinities, NaN.
# torch evaluates Cephes' Chebyshev series (Math.h) in the input's dtype and internals the same
# series in the same order, fusing the multiply-adds where torch's build does: the bits agree
# here; on another CPU torch's exp (the C library's) may differ by its last bit, which the
# series' final products carry through unchanged, hence the library-math bound.
BESSEL_ULPS = LIBM_ULPS
BESSEL_EDGES = [0.0, -0.0, 1e-30, 0.5, -3.0, 7.999, 8.0, -8.0, 8.001, 20.0, 88.5, -90.0, 700.0, 710.0,
                float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e"])
def test_bessel_functions_match_torch_over_their_range(name, dtype):
    values = np.concatenate([np.random.default_rng(0).standard_normal(400) * 12, BESSEL_EDGES])
    theirs_x = torch.tensor(values, dtype=dtype)
    ours = getattr(internals.special, name)(internals.from_torch(theirs_x))
    assert_same(ours, getattr(torch.special, name)(theirs_x), ulps=BESSEL_ULPS)


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e"])
def test_bessel_gradients_at_and_near_zero_match_torch(name):
    """I1's and I1e's formulas divide by x: near 0 torch puts back the limit 1/2 (and the second
    gradient goes through that substitution); I0's and I0e's gradients are 0 there."""
    grads = []
    for lib in (torch, internals):
        x = lib.tensor([0.0, 1e-9, -1e-9, -1e-300, 2.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(lib.special, name)(x).sum(), x, create_graph=True)
        grads.append((g, lib.autograd.grad(g.sum(), x)[0], g.grad_fn.name()))
    (g_t, gg_t, node_t), (g_i, gg_i, node_i) = grads
    assert node_i == node_t
    assert_same(g_i, g_t, ulps=BESSEL_ULPS)
    assert_same(gg_i, gg_t, ulps=BESSEL_ULPS)


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_bessel_gradients_refuse_half_precision_as_torch(name):
    """torch's i1_backward and i1e_backward dispatch on float and double only."""
    errors = []
    for lib in (torch, internals):
        x = lib.tensor([1.0], dtype=lib.float16, requires_grad=True)
        with pytest.raises(NotImplementedError) as caught:
            getattr(lib.special, name)(x).sum().backward()
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.complex128])
def test_sinc_matches_torch(dtype):
    """sin(pi x) / (pi x) with pi x rounded to x's type first, as torch's kernel: the same bits
    here, within the library's sine elsewhere; complex values through c10's division (see
    ``COMPLEX_ULPS``). Its gradient is 0 where pi x^2 is 0, its second gradient NaN there."""
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.standard_normal(200) * 4, rng.uniform(-1e5, 1e5, 50),
                             [0.0, -0.0, 1.0, 1e-30, float("inf"), float("nan")]])
    if dtype.is_complex:
        values = np.array([complex(re, im) for re, im in zip(values, np.roll(values, 7))])
    theirs_x = torch.tensor(values, dtype=dtype)
    ulps = COMPLEX_ULPS if dtype.is_complex else LIBM_ULPS
    assert_same(internals.sinc(internals.from_torch(theirs_x)), torch.sinc(theirs_x), ulps=ulps)
    if not dtype.is_complex:
        grads = []
        for lib in (torch, internals):
            x = lib.tensor([0.0, -0.0, 1e-3, 0.5, -2.5], dtype=lib.float64, requires_grad=True)
            (g,) = lib.autograd.grad(lib.sinc(x).sum(), x, create_graph=True)
            grads.append((g, lib.autograd.grad(g.sum(), x)[0], g.grad_fn.name()))
        assert grads[0][2] == grads[1][2]
        assert_same(grads[1][0], grads[0][0], ulps=LIBM_ULPS)
        # the second gradient sums three terms of pi x near 1 that cancel to about (pi x)^2: the
        # order autograd adds them in moves the result by eps / (pi x)^2 relative, 3e-11 at 1e-3
        assert_same(grads[1][1], grads[0][1], rtol=1e-9, atol=0)
