"""The everyday API beside the snippets -- the matrix products with an ``out`` (or in-place
``self``) that shares memory with an operand, the in-place ``addmm_``, ``addmv_``, ``baddbmm_``,
``addbmm_`` and ``addbmm``, compared with torch: values (exact, -0.0 and NaN included), shapes,
strides, dtypes, grad_fn names, gradients (twice) and error messages.

With an output that is also an operand torch neither refuses the call nor defines its values:
BLAS reads the operands while it writes, in an order that follows the BLAS library and the CPU
(``mm(a, b, out=a)`` of ``a = arange(4.).reshape(2, 2)`` leaves zeros on one AVX-512 Xeon and
``[3., 3., 7., 7.]`` on another, whatever the instruction set MKL is told to use). Those calls are
compared without their values: the same error, or the same dtypes, sizes, strides and grad_fn
names for every tensor the program made.
"""
import warnings

import pytest
import torch
from helpers import compare_gradients_and_nodes
from helpers import describe_sample as _describe

import internals

SETUP = ("a = lib.arange(1., 5.).reshape(2, 2); b = lib.ones(2, 2); n = lib.arange(1., 10.).reshape(3, 3); "
         "c = lib.arange(1., 9.).reshape(2, 2, 2); d = lib.ones(2, 2, 2); v = lib.arange(1., 3.); m = lib.ones(2, 2); ")
ALIASED = [
    "lib.mm(a, b, out=a)", "lib.mm(b, a, out=a)", "lib.mm(a, a, out=a)", "lib.mm(a, a, out=a.t())",
    "lib.addmm(a, b, b, out=a)", "lib.addmm(b, a, b, out=a)", "lib.addmm(b, b, a, out=a)",
    "lib.addmm(a, a, a, out=a)", "lib.addmm(a, a, b, beta=0, out=a)", "lib.addmm(a, a, a, beta=2, out=a)",
    "a.addmm_(a, a, beta=0.5, alpha=2)", "a.addmm_(a, b)", "b.addmm_(a, a)", "n.t().addmm_(n, n)",
    "n[:, :2].addmm_(n[:, 1:], n[1:, 1:])",
    "lib.bmm(c, d, out=c)", "lib.bmm(d, c, out=c)", "lib.baddbmm(c, d, d, out=c)", "lib.baddbmm(d, c, d, out=c)",
    "lib.baddbmm(d, d, c, out=c)", "c.baddbmm_(c, d)", "c.baddbmm_(d, c, beta=0)", "c.baddbmm_(c, c, alpha=-1)",
    "lib.mv(m, v, out=v)", "lib.addmv(v, m, lib.ones(2), out=v)", "lib.addmv(lib.ones(2), m, v, out=v)",
    "lib.addmv(v, m, v, out=v)", "v.addmv_(m, v, beta=2)", "lib.addmv_(v, m, v)",
    "lib.addbmm(a, a.expand(3, 2, 2), lib.ones(3, 2, 2), out=a)", "a.addbmm_(a[None], lib.ones(1, 2, 2))",
    "a.addbmm_(c, c, beta=0)",
    "n.addmm_(n, lib.ones(3, 3))", "n.addmm_(n.t(), n)", "n.addmm_(n, n.t())",
]


def _aliased(lib, program):
    """Every tensor of the setup after the program ran, without its values (torch's are the
    BLAS library's accident, the one written into among them), or the program's error."""
    env = {"lib": lib}
    exec(SETUP, env)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            eval(program, env)
        except Exception as exc:     # noqa: BLE001 -- the class and message are what is compared
            return type(exc).__name__, str(exc)
    dtype, shape, stride, _, grad_fn = zip(*(_describe(env[name]) for name in "abncdvm"))
    return dtype, shape, stride, grad_fn


@pytest.mark.parametrize("program", ALIASED)
def test_products_into_an_operand_run_as_torchs(program):
    assert _aliased(internals, program) == _aliased(torch, program)


PROGRAMS = [
    "lib.addbmm(lib.ones(2, 2), lib.arange(12.).reshape(2, 2, 3), lib.ones(2, 3, 2), beta=0.5, alpha=2)",
    "lib.addbmm(lib.ones(2, 1), lib.ones(2, 2, 3), lib.ones(2, 3, 2))",
    "lib.ones(2, 2).addbmm(lib.ones(0, 2, 3), lib.ones(0, 3, 2), beta=2)",
    "lib.addbmm(lib.ones(2, 2, dtype=lib.long), lib.ones(2, 2, 3, dtype=lib.long), lib.ones(2, 3, 2, dtype=lib.long))",
    "lib.addbmm(lib.full((2, 2), float('nan')), lib.ones(2, 2, 3), lib.ones(2, 3, 2), beta=0)",
    "lib.addbmm(lib.ones(2, 2), lib.ones(2, 2, 3), lib.ones(3, 3, 2))",
    "lib.addbmm(lib.ones(2, 2), lib.ones(2, 2, 3), lib.ones(2, 2, 2))",
    "lib.addbmm(lib.ones(2, 2), lib.ones(2, 3), lib.ones(2, 3, 2))",
    "lib.addbmm(lib.ones(2, 2), lib.ones(2, 2, 3), lib.ones(2, 3))",
    "lib.addbmm(lib.ones(3, 2), lib.ones(2, 2, 3), lib.ones(2, 3, 2))",
    "lib.addbmm(lib.ones(2, 2, dtype=lib.long), lib.ones(1, 2, 2, dtype=lib.long), lib.ones(1, 2, 2, dtype=lib.long), "
    "alpha=0.5)",
    "lib.ones(2, 1).addmm_(lib.ones(2, 3), lib.ones(3, 2))", "lib.ones(2).addmv_(lib.ones(3, 3), lib.ones(3))",
    "lib.ones(1, 2, 2).baddbmm_(lib.ones(2, 2, 3), lib.ones(2, 3, 2))",
    "lib.ones(2, 1).addbmm_(lib.ones(2, 2, 3), lib.ones(2, 3, 2))",
    "lib.addbmm(lib.ones(2, 2), lib.ones(2, 2, 3, 1), lib.ones(2, 3, 2))",
    "lib.addbmm(lib.ones(2, 2, dtype=lib.long), lib.ones(2, 2, 3), lib.ones(2, 3, 2))",
    "lib.addbmm(lib.ones(2, 2), lib.ones(2, 2, 3, dtype=lib.long), lib.ones(2, 3, 2))",
    "lib.ones(2, 2).addmm_(lib.ones(2, 3), lib.ones(3, 2), beta=0, alpha=3)",
    "lib.ones(2, 2, dtype=lib.long).addmm_(lib.ones(2, 3), lib.ones(3, 2))",
    "lib.zeros(2).addmv_(lib.arange(6.).reshape(2, 3), lib.ones(3), alpha=-1)",
    "lib.addmv(lib.ones(2), lib.ones(2, 2), lib.ones(2), out=lib.empty(0))",
    "lib.baddbmm(lib.ones(2, 2), lib.ones(1, 2, 2), lib.ones(1, 2, 2), out=lib.empty(0, dtype=lib.float64))",
    "lib.addbmm(lib.ones(2, 2), lib.ones(1, 2, 2), lib.ones(1, 2, 2), out=lib.empty(2, 2).t())",
    "lib.ones(2, 2, requires_grad=True).addmm_(lib.ones(2, 2), lib.ones(2, 2))",
]


def _result(lib, program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = eval(program, {"lib": lib})
        except Exception as exc:     # noqa: BLE001 -- the class and message are what is compared
            return type(exc).__name__, str(exc)
    return _describe(result), [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _result(internals, program) == _result(torch, program)


GRAD_CASES = {
    "addmm_": lambda lib, x, t: (x[:, :2] * t[:, 1:]).addmm_(x, t.t(), beta=0.5, alpha=2),
    "addmv_": lambda lib, x, t: (x[0] * t[1]).addmv_(t.t(), x[1, :2], beta=3),
    "baddbmm_": lambda lib, x, t: (x * t).unsqueeze(0).baddbmm_(x.unsqueeze(0), (x.t() @ t).unsqueeze(0), alpha=0.5),
    "addbmm": lambda lib, x, t: lib.addbmm(x[:, :2], lib.stack([x, t]), lib.stack([t.t(), x.t()]), beta=2),
    "addbmm_": lambda lib, x, t: (x * t)[:, :2].addbmm_(lib.stack([x * x, t]), lib.stack([t.t(), x.t()]), alpha=-1),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, allow_unused=True)


def test_addbmm_on_cuda():
    """The CUDA path (simulated here) gives the CPU values, which torch's CPU gives."""
    def build(lib, device):
        b1 = lib.arange(24.0, device=device).reshape(2, 3, 4)
        return lib.addbmm(lib.ones(3, 3, device=device), b1, b1.transpose(1, 2), beta=2)
    ours = build(internals, "cuda")
    assert ours.device.type == "cuda" and _describe(ours.cpu()) == _describe(build(torch, "cpu"))


LEGACY = [
    "lib.Tensor(2, 'x')", "lib.Tensor([1, 2], 3)", "lib.Tensor(2, 3.5)", "lib.Tensor(None)", "lib.Tensor(dtype=1)",
    "lib.Tensor(2, foo=1)", "lib.Tensor(1, [2])", "lib.Tensor('a', 'b')", "lib.Tensor(lib.ones(2), 3)",
    "lib.FloatTensor('abc')", "lib.LongTensor({1: 2})", "lib.FloatTensor(2, device='cpu').shape",
    "lib.DoubleTensor([1, 2], device='cpu')", "lib.IntTensor(lib.Size([2, 0]))", "lib.Tensor(())",
    "lib.BoolTensor((1, 0))", "lib.Tensor(2.5)", "lib.Tensor(object())",
]


def _legacy(lib, program):
    try:
        result = eval(program, {"lib": lib})
    except Exception as exc:     # noqa: BLE001 -- the class and message are what is compared
        return type(exc).__name__, str(exc)
    return _describe(result) if isinstance(result, lib.Tensor) else repr(result).replace("internals", "torch")


@pytest.mark.parametrize("program", LEGACY)
def test_legacy_constructor_errors_list_torchs_signatures(program):
    assert _legacy(internals, program) == _legacy(torch, program)


@pytest.mark.parametrize("matrix", [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[2.0, 1.0], [1.0, 3.0]],
                                    [[[2.0, 1.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]]]])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_det_gradient_at_a_singular_matrix_is_finite(matrix, dtype):
    """With no higher derivative wanted torch solves with the forward's LU factors, a zero pivot
    replaced by epsilon: det 0 times a finite matrix (zeros, their signs included)."""
    grads = []
    for lib in (torch, internals):
        for a in (lib.tensor(matrix, dtype=getattr(lib, dtype)), lib.tensor(matrix, dtype=getattr(lib, dtype)).mT):
            a.requires_grad_()
            lib.det(a).sum().backward()
            grads.append(_describe(a.grad))
    assert grads[2:] == grads[:2]


@pytest.mark.xfail(strict=True, reason="torch solves LU X = det * I (zeros stay +0.0); internals scales the "
                                       "inverse by det, so a zero times a negative det is -0.0")
def test_det_gradient_signs_of_zeros():
    grads = []
    for lib in (torch, internals):
        a = lib.tensor([[0.0, 1.0], [1.0, 0.0]], requires_grad=True)
        lib.det(a).backward()
        grads.append(_describe(a.grad))
    assert grads[0] == grads[1]
