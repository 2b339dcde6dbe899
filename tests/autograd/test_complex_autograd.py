"""Complex autograd against torch: the conjugate Wirtinger convention, real <-> complex boundaries.

torch's convention (docs/source/notes/autograd.rst, "Complex Autograd"): for a real loss L of a
complex z, ``z.grad`` is dL/dRe z + i dL/dIm z, twice the conjugate Wirtinger derivative
dL/d(conj z). A holomorphic f passes a gradient back as ``grad * f'(z).conj()``; a real input
of a complex formula keeps the real part (``handle_r_to_c``). Each case builds the same program
in both libraries from complex128 inputs, reduces it to a real loss, and compares the node
names, the first gradients and the gradients of those (create_graph=True) where torch's first
gradient is itself differentiable. Values are compared within COMPLEX_ULPS: complex products and
library functions fuse multiply-adds on some CPUs.
"""
import math

import pytest
import torch
from helpers import COMPLEX_ULPS, assert_same, assert_same_error

import internals

Z = [[1 + 2j, -0.5 + 0.3j], [0.7 - 1.1j, 2 - 0.4j]]
W = [[0.3 + 0.2j, 1.5 - 0.3j], [-0.7 + 0.1j, 1.2 + 0.9j]]
R = [[0.8, -1.3], [0.4, 2.1]]

# name -> (program over (lib, z, w), the inputs that require grad: 'z', 'w' complex, 'r' real)
CASES = {
    "add": (lambda L, z, w, r: z + w * 2, "zw"),
    "add_alpha_complex": (lambda L, z, w, r: L.add(z, w, alpha=1 - 2j), "zw"),
    "sub": (lambda L, z, w, r: z - w, "zw"),
    "rsub_scalar": (lambda L, z, w, r: 3 - z, "z"),
    "mul": (lambda L, z, w, r: z * w, "zw"),
    "mul_complex_scalar": (lambda L, z, w, r: z * (2 - 1j), "z"),
    "div": (lambda L, z, w, r: z / w, "zw"),
    "div_complex_scalar": (lambda L, z, w, r: z / (0.5 + 2j), "z"),
    "neg": (lambda L, z, w, r: -z, "z"),
    "conj_view": (lambda L, z, w, r: z.conj() * w, "zw"),
    "conj_physical": (lambda L, z, w, r: z.conj_physical() * w, "zw"),
    "abs": (lambda L, z, w, r: z.abs(), "z"),
    "angle": (lambda L, z, w, r: z.angle(), "z"),
    "sgn": (lambda L, z, w, r: z.sgn() * w, "zw"),
    "real": (lambda L, z, w, r: z.real * 2, "z"),
    "imag": (lambda L, z, w, r: z.imag * 3, "z"),
    "view_as_real": (lambda L, z, w, r: L.view_as_real(z) * L.tensor([1.0, 2.0], dtype=L.float64), "z"),
    "view_as_complex": (lambda L, z, w, r: L.view_as_complex(L.view_as_real(z) * 2), "z"),
    "exp": (lambda L, z, w, r: z.exp(), "z"),
    "log": (lambda L, z, w, r: z.log(), "z"),
    "sqrt": (lambda L, z, w, r: z.sqrt(), "z"),
    "reciprocal": (lambda L, z, w, r: z.reciprocal(), "z"),
    "sin": (lambda L, z, w, r: z.sin(), "z"),
    "cos": (lambda L, z, w, r: z.cos(), "z"),
    "tanh": (lambda L, z, w, r: z.tanh(), "z"),
    "sigmoid": (lambda L, z, w, r: z.sigmoid(), "z"),
    "tan": (lambda L, z, w, r: z.tan(), "z"),
    "rsqrt": (lambda L, z, w, r: z.rsqrt(), "z"),
    "log1p": (lambda L, z, w, r: z.log1p(), "z"),
    "expm1": (lambda L, z, w, r: z.expm1(), "z"),
    "sinh": (lambda L, z, w, r: z.sinh(), "z"),
    "cosh": (lambda L, z, w, r: z.cosh(), "z"),
    "asin": (lambda L, z, w, r: z.asin(), "z"),
    "acos": (lambda L, z, w, r: z.acos(), "z"),
    "atan": (lambda L, z, w, r: z.atan(), "z"),
    "asinh": (lambda L, z, w, r: z.asinh(), "z"),
    "acosh": (lambda L, z, w, r: z.acosh(), "z"),
    "atanh": (lambda L, z, w, r: z.atanh(), "z"),
    "log2": (lambda L, z, w, r: z.log2(), "z"),
    "log10": (lambda L, z, w, r: z.log10(), "z"),
    "exp2": (lambda L, z, w, r: z.exp2(), "z"),
    "pow_tensor": (lambda L, z, w, r: z.pow(w), "zw"),
    "pow_scalar": (lambda L, z, w, r: z ** 2.5, "z"),
    "square": (lambda L, z, w, r: z.square(), "z"),
    "sum_dim": (lambda L, z, w, r: (z * w).sum(0), "zw"),
    "mean": (lambda L, z, w, r: (z * w).mean(), "zw"),
    "prod": (lambda L, z, w, r: z.prod(), "z"),
    "cumsum": (lambda L, z, w, r: z.cumsum(0), "z"),
    "matmul": (lambda L, z, w, r: z @ w, "zw"),
    "mm_column_major": (lambda L, z, w, r: z.t().mm(w), "zw"),
    "bmm": (lambda L, z, w, r: z.unsqueeze(0).bmm(w.unsqueeze(0)), "zw"),
    "mv": (lambda L, z, w, r: z.mv(w[0]), "zw"),
    "dot": (lambda L, z, w, r: z[0].dot(w[0]), "zw"),
    "vdot": (lambda L, z, w, r: z[1].vdot(w[1]), "zw"),
    "addmm_complex_alpha": (lambda L, z, w, r: L.addmm(z, z, w, beta=0.5j, alpha=2 - 1j), "zw"),
    "outer": (lambda L, z, w, r: L.outer(z[0], w[0]), "zw"),
    "where": (lambda L, z, w, r: L.where(z.real > 0, z, w), "zw"),
    "cat_flip_diagonal": (lambda L, z, w, r: L.cat([z, w]).flip(0).diagonal(), "zw"),
    "vector_norm": (lambda L, z, w, r: L.linalg.vector_norm(z), "z"),
    "det": (lambda L, z, w, r: L.linalg.det(z), "z"),
    # real -> complex: a real input's gradient is the real part (handle_r_to_c)
    "real_times_complex": (lambda L, z, w, r: r * w, "rw"),
    "real_plus_complex": (lambda L, z, w, r: r + w, "rw"),
    "real_over_complex": (lambda L, z, w, r: r / w, "rw"),
    "real_pow_complex": (lambda L, z, w, r: r.abs().pow(w), "rw"),
    "real_to_complex": (lambda L, z, w, r: r.to(L.complex128) * w, "rw"),
    "complex_from_parts": (lambda L, z, w, r: L.complex(r, r * r), "r"),
    "polar": (lambda L, z, w, r: L.polar(r.abs(), r * 2), "r"),
    "real_view_as_complex": (lambda L, z, w, r: L.view_as_complex(L.stack([r, r.exp()], -1)), "r"),
    # complex -> real
    "complex_times_its_real": (lambda L, z, w, r: z * z.real, "z"),
    "abs_of_product": (lambda L, z, w, r: (z * w).abs().log_softmax(0), "zw"),
}


def _build(lib, name):
    program, wants = CASES[name]
    z = lib.tensor(Z, dtype=lib.complex128, requires_grad="z" in wants)
    w = lib.tensor(W, dtype=lib.complex128, requires_grad="w" in wants)
    r = lib.tensor(R, dtype=lib.float64, requires_grad="r" in wants)
    inputs = [t for t, key in ((z, "z"), (w, "w"), (r, "r")) if key in wants]
    return program(lib, z, w, r), inputs


def _real_loss(out):
    """A real loss that depends on both parts of a complex output (and is not rotation invariant)."""
    if out.is_complex():
        return (out.real * 1.5 - out.imag * 0.5 + out.abs() ** 2).sum()
    return (out * out).sum()


def _gradients(lib, name):
    out, inputs = _build(lib, name)
    firsts = lib.autograd.grad(_real_loss(out), inputs, create_graph=True)
    seconds = None
    if all(g.requires_grad for g in firsts):
        seconds = lib.autograd.grad(sum(_real_loss(g) for g in firsts), inputs, allow_unused=True)
    # the first gradients' nodes too: the backward formula's last operation, as torch's C++ calls it
    # (``grad * result.conj() * M_LN2`` ends in mul.Scalar, MulBackward1)
    nodes = [type(out.grad_fn).__name__] + [type(g.grad_fn).__name__ for g in firsts]
    return nodes, out, firsts, seconds


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch_once_and_twice(name):
    node_t, out_t, firsts_t, seconds_t = _gradients(torch, name)
    node_i, out_i, firsts_i, seconds_i = _gradients(internals, name)
    assert node_i == node_t
    assert_same(out_i, out_t, ulps=COMPLEX_ULPS)
    for ours, theirs in zip(firsts_i, firsts_t):
        assert_same(ours, theirs, ulps=COMPLEX_ULPS)
    assert (seconds_i is None) == (seconds_t is None)
    for ours, theirs in zip(seconds_i or (), seconds_t or ()):
        if theirs is None:
            assert ours is None
        else:
            assert_same(ours, theirs, ulps=COMPLEX_ULPS)


@pytest.mark.parametrize("name", ["mul", "div", "exp", "sgn", "angle", "pow_tensor", "matmul", "real_times_complex",
                                  "complex_from_parts", "view_as_real"])
def test_gradcheck_on_complex_inputs(name):
    """internals' gradcheck treats a complex number as two real coordinates, as torch's does."""
    program, wants = CASES[name]

    def run(*inputs):
        given = dict(zip(wants, inputs))
        defaults = {"z": internals.tensor(Z, dtype=internals.complex128),
                    "w": internals.tensor(W, dtype=internals.complex128),
                    "r": internals.tensor(R, dtype=internals.float64)}
        defaults.update(given)
        return program(internals, defaults["z"], defaults["w"], defaults["r"])

    _, inputs = _build(internals, name)
    assert internals.autograd.gradcheck(run, tuple(inputs))


def test_gradcheck_catches_a_wrong_complex_gradient():
    """A function whose backward forgets the conjugate fails the check (so the check can fail)."""
    class NoConj(internals.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            return grad * 2 * z          # torch's convention needs (2 z).conj()

    z = internals.tensor(Z, dtype=internals.complex128, requires_grad=True)
    assert not internals.autograd.gradcheck(NoConj.apply, (z,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):      # GradcheckError, as torch's
        internals.autograd.gradcheck(NoConj.apply, (z,))


@pytest.mark.parametrize("make", [
    lambda L: L.tensor(1 + 2j, dtype=L.complex128, requires_grad=True) * 2,
    lambda L: (L.tensor(Z, dtype=L.complex64, requires_grad=True) * 2).sum(),
])
def test_backward_of_a_complex_scalar_needs_a_gradient(make):
    """A complex loss has no direction of steepest ascent: torch asks for grad_outputs."""
    def run(lib):
        return make(lib).backward()
    ours, theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
    assert str(ours).replace("internals.", "torch.") == str(theirs)


def test_backward_of_a_complex_non_scalar_names_the_shape_first():
    ours, theirs = assert_same_error(lambda: (internals.tensor(Z, requires_grad=True) * 2).backward(),
                                     lambda: (torch.tensor(Z, requires_grad=True) * 2).backward())
    assert str(ours) == str(theirs)


def test_complex_tensors_can_require_grad_and_integers_cannot():
    for lib in (internals, torch):
        assert lib.zeros(2, dtype=lib.complex64, requires_grad=True).requires_grad
        assert lib.ones(2, dtype=lib.complex128).requires_grad_().requires_grad
    ours, theirs = assert_same_error(lambda: internals.zeros(2, dtype=internals.int64, requires_grad=True),
                                     lambda: torch.zeros(2, dtype=torch.int64, requires_grad=True))
    assert str(ours) == str(theirs)


def test_grad_accumulates_in_the_leaf_s_complex_dtype():
    zi = internals.tensor(Z, dtype=internals.complex64, requires_grad=True)
    zt = torch.tensor(Z, dtype=torch.complex64, requires_grad=True)
    for z in (zi, zt):
        (z * z.conj()).real.sum().backward()
        z.abs().pow(2).sum().backward()
    assert_same(zi.grad, zt.grad, ulps=COMPLEX_ULPS)
    assert math.isclose(zi.grad[0, 0].item().real, 4.0)      # |z|^2 twice: 2 * 2 * Re z


# ---- operators torch lists as differentiable at complex outputs, and those it refuses
def _z(lib):
    return lib.tensor(Z, dtype=lib.complex128, requires_grad=True)


def _r(lib):
    return lib.tensor([R, R], dtype=lib.float64, requires_grad=True).permute(1, 2, 0).contiguous()


COMPLEX_OUTPUTS = {
    # on torch's list: a graph through them
    "view_as_complex": lambda L: L.view_as_complex(_r(L)),
    "view_as_real_copy": lambda L: L.view_as_real_copy(_z(L)),
    "unsafe_split": lambda L: L.unsafe_split(_z(L), 1)[1],
    "unsafe_chunk": lambda L: L.unsafe_chunk(_z(L), 2, 1)[0],
    "complex": lambda L: L.complex(_r(L)[..., 0], _r(L)[..., 1]),
    "polar": lambda L: L.polar(_r(L)[..., 0].abs(), _r(L)[..., 1]),
    "cumprod": lambda L: _z(L).cumprod(1),
    "index_put": lambda L: _z(L).index_put((L.tensor([0]),), _z(L)[1]),
    "in_place_zero": lambda L: _z(L).clone().zero_(),
    "in_place_normal": lambda L: _z(L).clone().normal_(generator=L.Generator().manual_seed(0)),
    # a Tensor[] result is not checked by torch's kernels either
    "split_copy": lambda L: L.split_copy(_z(L), 1)[0],
    "unsafe_split_with_sizes": lambda L: L.unsafe_split_with_sizes(_z(L), [1, 1])[1],
    # off the list: refused
    "view_as_complex_copy": lambda L: L.view_as_complex_copy(_r(L)),
    "select_copy": lambda L: L.select_copy(_z(L), 0, 1),
    "slice_copy": lambda L: L.slice_copy(_z(L), 1, 0, 1),
    "select_scatter": lambda L: L.select_scatter(_z(L), _z(L)[0], 0, 0),
    "slice_scatter": lambda L: L.slice_scatter(_z(L), _z(L)[:1], 0, 0, 1),
    "nan_to_num": lambda L: _z(L).nan_to_num(),
    "lift_fresh_copy": lambda L: L.ops.aten.lift_fresh_copy(_z(L)),
    "neg_view_copy": lambda L: L.ops.aten._neg_view_copy(_z(L)),
    "to_sparse": lambda L: _z(L).to_sparse(),
    "to_sparse_csr": lambda L: _z(L).to_sparse_csr(),
    "scatter_reduce": lambda L: _z(L).scatter_reduce(0, L.zeros(2, 2, dtype=L.int64), _z(L), "sum"),
    "embedding": lambda L: L.nn.functional.embedding(L.tensor([1, 0]), _z(L)),
    "pack_padded_sequence": lambda L: L.nn.utils.rnn.pack_padded_sequence(_z(L), [2, 1]).data,
    "no_grad_needed": lambda L: L.select_copy(_z(L).detach(), 0, 1),
}


@pytest.mark.parametrize("name", COMPLEX_OUTPUTS)
def test_complex_outputs_as_torch_allows_them(name):
    """torch's kernels refuse a complex output that requires grad unless the operator is on its
    list (GRADIENT_IMPLEMENTED_FOR_COMPLEX): the same error, or the same values and node."""
    def run(lib):
        try:
            out = COMPLEX_OUTPUTS[name](lib)
        except RuntimeError as exc:
            return str(exc)
        return out
    ours, theirs = run(internals), run(torch)
    if isinstance(theirs, str):
        assert ours == theirs and "does not support automatic differentiation" in theirs
        return
    assert not isinstance(ours, str), ours
    assert (ours.grad_fn and ours.grad_fn.name()) == (theirs.grad_fn and theirs.grad_fn.name())
    if ours.layout == internals.strided:
        assert_same(ours.detach(), theirs.detach(), ulps=COMPLEX_ULPS)
