"""``addmm``, ``addr``, ``mv``, ``F.linear`` (one ``addmm`` as torch's), ``matmul``'s folding,
``threshold_backward`` (relu's gradient) and ``detach`` as operators, against torch: OpInfo
samples (torch has none for detach), errors, gradients and grad_fn names. The operators a
dispatch mode logs for them are compared in ``test_op_log_parity.py``. Then
``linalg.matrix_power``/``matrix_power`` (repeated squaring): OpInfo samples and everyday programs."""
import warnings

import pytest
import torch
from helpers import (
    MATMUL_TOL,
    PRODUCT_ULPS,
    TORCH_DTYPES,
    Adapter,
    assert_same,
    check_opinfo_samples,
    fn,
    opinfo_cases,
    run_described,
    same_outcome,
)

import internals
from internals.testing import assert_within_ulps

ADAPTERS = {
    "addmm": Adapter(fn("addmm"), "addmm", kwargs=("beta", "alpha"), tol=MATMUL_TOL),
    "nn.functional.linear": Adapter(internals.nn.functional.linear, tol=MATMUL_TOL),
    "mv": Adapter(fn("mv"), "mv", tol=MATMUL_TOL),
    "addr": Adapter(fn("addr"), "addr", kwargs=("beta", "alpha")),
}
# matmul's OpInfo samples run in test_ops.py, in every dtype, with the same adapter and check.
# addmm and linear add the bias to the float32 product and round once in both libraries; torch's
# 16-bit mv follows another path.
EXCLUDED = {"mv": (torch.float16, torch.bfloat16)}
# linalg.matrix_power: repeated squaring, in torch's order
MATRIX_POWER_ADAPTERS = {
    "linalg.matrix_power": Adapter(internals.linalg.matrix_power, tol={torch.float32: (1e-5, 1e-5),
                                                                      torch.float64: (1e-12, 1e-12)}),
}
CASES = (opinfo_cases(ADAPTERS, TORCH_DTYPES, exclude=EXCLUDED)
         + opinfo_cases(MATRIX_POWER_ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool)))


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, {**ADAPTERS, **MATRIX_POWER_ADAPTERS}[name])


ERROR_CASES = {
    "mat1 not a matrix": lambda lib: lib.addmm(lib.ones(3), lib.ones(2), lib.ones(2, 3)),
    "mat2 not a matrix": lambda lib: lib.addmm(lib.ones(3), lib.ones(2, 2), lib.ones(2)),
    "shapes": lambda lib: lib.addmm(lib.ones(3), lib.ones(2, 3), lib.ones(2, 3)),
    "mat1 dtype": lambda lib: lib.addmm(lib.ones(4), lib.ones(2, 3, dtype=lib.float64), lib.ones(3, 4)),
    "self dtype": lambda lib: lib.addmm(lib.ones(4), lib.ones(2, 3, dtype=lib.float64),
                                        lib.ones(3, 4, dtype=lib.float64)),
    "self not broadcastable": lambda lib: lib.addmm(lib.ones(5), lib.ones(2, 3), lib.ones(3, 4)),
    "integer scalars truncate": lambda lib: lib.addmm(lib.ones(4, dtype=lib.int64), lib.ones(2, 3, dtype=lib.int64),
                                                      lib.ones(3, 4, dtype=lib.int64), beta=0.5, alpha=1.7),
    "beta 0 ignores nan": lambda lib: lib.addmm(lib.full((4,), float("nan")), lib.ones(2, 3), lib.ones(3, 4), beta=0),
    "addr vec1 not a vector": lambda lib: lib.addr(lib.ones(2, 3), lib.ones(2, 1), lib.ones(3)),
    "addr self not broadcastable": lambda lib: lib.addr(lib.ones(2, 4), lib.ones(2), lib.ones(3)),
    "addr integral float beta": lambda lib: lib.addr(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, dtype=lib.int64),
                                                     lib.ones(3, dtype=lib.int64), beta=1.5),
    "addr promotes": lambda lib: lib.addr(lib.ones(2, 3, dtype=lib.int32), lib.arange(2.), lib.arange(3,
                                                                                                   dtype=lib.int64)),
    "addr bools": lambda lib: lib.addr(lib.zeros(2, 3, dtype=lib.bool), lib.tensor([True, False]),
                                       lib.tensor([True, False, True]), alpha=2),
    "addr beta 0 ignores nan": lambda lib: lib.addr(lib.full((2, 1), float("nan")), lib.ones(2), lib.ones(3), beta=0),
    "addr follows self's layout": lambda lib: lib.addr(lib.ones(3, 2).t(), lib.ones(2), lib.arange(3.), alpha=3),
    "addr_ self's sizes": lambda lib: lib.ones(2, 4).addr_(lib.ones(2), lib.ones(3)),
    "addr_ a vector": lambda lib: lib.ones(3).addr_(lib.ones(2), lib.ones(3)),
    "addr_ transposed": lambda lib: lib.zeros(2, 3).t().addr_(lib.arange(3.), lib.ones(2), beta=2),
    "addr_ cannot cast": lambda lib: lib.zeros(2, 3, dtype=lib.int64).addr_(lib.ones(2), lib.ones(3)),
    "addr out cannot cast": lambda lib: lib.addr(lib.ones(2, 3), lib.ones(2), lib.ones(3),
                                                 out=lib.empty(0, dtype=lib.int64)),
    "addr out resized": lambda lib: lib.addr(lib.ones(2, 3), lib.ones(2), lib.ones(3), out=lib.empty(0)),
    "linear shapes": lambda lib: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 2)),
    "linear bias": lambda lib: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 3), lib.ones(5)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_and_corner_cases(case):
    same_outcome(ERROR_CASES[case], message=not case.startswith("linear"))


def _x(lib, *shape):
    g = torch.Generator().manual_seed(sum(shape))
    return lib.tensor(torch.randn(*shape, generator=g, dtype=torch.float64).tolist(), dtype=lib.float64,
                      requires_grad=True)


GRAD_CASES = {
    "addmm": lambda lib: lib.addmm(_x(lib, 4), _x(lib, 2, 3), _x(lib, 3, 4), beta=0.5, alpha=2),
    "addmm column-major": lambda lib: lib.addmm(_x(lib, 2, 1), _x(lib, 3, 2).t(), _x(lib, 4, 3).t()),
    "linear 2-d": lambda lib: lib.nn.functional.linear(_x(lib, 2, 3), _x(lib, 4, 3), _x(lib, 4)),
    "linear 3-d": lambda lib: lib.nn.functional.linear(_x(lib, 2, 5, 3), _x(lib, 4, 3), _x(lib, 4)),
    "linear 1-d": lambda lib: lib.nn.functional.linear(_x(lib, 3), _x(lib, 4, 3), _x(lib, 4)),
    "linear non-contiguous 3-d": lambda lib: lib.nn.functional.linear(_x(lib, 2, 3, 5).transpose(1, 2),
                                                                      _x(lib, 4, 3), _x(lib, 4)),
    "linear without bias": lambda lib: lib.nn.functional.linear(_x(lib, 2, 3), _x(lib, 4, 3)),
    "addr": lambda lib: lib.addr(_x(lib, 2, 3), _x(lib, 2), _x(lib, 3), beta=0.5, alpha=-2),
    "addr broadcast self": lambda lib: lib.addr(_x(lib, 3), _x(lib, 2), _x(lib, 3)),
    "addr_": lambda lib: _x(lib, 2, 3).clone().addr_(_x(lib, 2), _x(lib, 3), alpha=3),
    "relu": lambda lib: _x(lib, 2, 3).relu(),
    "mv": lambda lib: _x(lib, 2, 3).mv(_x(lib, 3)),
    "matmul folded": lambda lib: _x(lib, 2, 5, 3) @ _x(lib, 3, 4),
    "matmul folded by a vector": lambda lib: _x(lib, 2, 5, 3) @ _x(lib, 3),
    "matmul matrix by batch": lambda lib: _x(lib, 5, 3) @ _x(lib, 2, 3, 4),
    "matmul batched": lambda lib: _x(lib, 2, 1, 5, 3) @ _x(lib, 4, 3, 2),
    "reshape that copies": lambda lib: _x(lib, 3, 4).t().reshape(12),
}


@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradients_and_nodes(case):
    """Values, the result's grad_fn name, and every input's gradient equal torch's."""
    ours, theirs = GRAD_CASES[case](internals), GRAD_CASES[case](torch)
    assert_same(ours, theirs, rtol=1e-12, atol=1e-12, exact_layout=False)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    leaves_t = [n.variable for n, _ in _leaf_nodes(theirs.grad_fn)]
    leaves_o = [n.variable for n, _ in _leaf_nodes(ours.grad_fn)]
    (ours * ours).sum().backward()
    (theirs * theirs).sum().backward()
    for o, t in zip(leaves_o, leaves_t, strict=True):
        assert_same(o.grad, t.grad, rtol=1e-12, atol=1e-12, exact_layout=False)


def _leaf_nodes(node, seen=None):
    """The AccumulateGrad nodes below ``node``, in a fixed (depth-first, edge) order."""
    seen = [] if seen is None else seen
    for child, nr in node.next_functions:
        if child is None or any(child is s for s, _ in seen):
            continue
        if type(child).__name__ == "AccumulateGrad":
            seen.append((child, nr))
        else:
            _leaf_nodes(child, seen)
    return seen


def test_threshold_backward_is_relus_gradient_and_is_differentiable():
    """relu's backward is the ``threshold_backward`` operator (0 at or below the threshold, NaN
    outputs let the gradient through), and it has a derivative: double backward works."""
    for lib in (torch, internals):
        x = lib.tensor([-1.0, 0.0, 2.0, float("nan")], dtype=lib.float64, requires_grad=True)
        g = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
        (gx,) = lib.autograd.grad(x.relu(), x, g, create_graph=True)
        (gg,) = lib.autograd.grad(gx.sum(), g)
        if lib is torch:
            theirs = (gx, gg, gx.grad_fn.name())
        else:
            ours = (gx, gg, gx.grad_fn.name())
    assert_same(ours[0], theirs[0])
    assert_same(ours[1], theirs[1])
    assert ours[2] == theirs[2] == "ThresholdBackwardBackward0"


def test_detach_shares_data_and_version_but_is_no_view():
    for lib in (torch, internals):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        d = y.detach()
        d.add_(1)
        assert (d.requires_grad, d.grad_fn, d._base, d._is_view(), y._version) == (False, None, None, False, 1)
        assert d.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()


def test_addr_out_of_another_shape_is_resized_with_torchs_warning():
    """An out= holding elements of another shape is resized through resize_output, which warns."""
    texts = []
    for lib in (torch, internals):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.addr(lib.zeros(2, 3), lib.ones(2), lib.ones(3), out=lib.zeros(5))
        assert out.shape == (2, 3)
        texts.append([(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught])
    assert texts[1] == texts[0] and len(texts[0]) == 1


def test_addr_second_gradients_match_torch():
    """addr's first gradients (mv, t and mul nodes) are differentiable again, as torch's."""
    def run(lib):
        a, u, v = _x(lib, 2, 3), _x(lib, 2), _x(lib, 3)
        out = lib.addr(a, u, v, beta=2, alpha=0.5)
        grads = lib.autograd.grad((out * out).sum(), (a, u, v), create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), (a, u, v))
        return [out.grad_fn.name()] + [g.grad_fn.name() for g in grads], list(grads) + list(second)
    (names_o, ours), (names_t, theirs) = run(internals), run(torch)
    assert names_o == names_t
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t, rtol=1e-12, atol=1e-12, exact_layout=False)


# =============================================================================================
# matrix_power: NumPy's names and small compositions torch writes in C++ over other operators, each
# program's result described (values, shape, strides, offset, dtype, node, view or not), its
# warnings and errors
# =============================================================================================
G = "lib.ones(2, 2, requires_grad=True)"
NUMPY_NAME_PROGRAMS = [
    f"lib.matrix_power({G}, 0)", f"lib.matrix_power({G}, 1)", f"lib.matrix_power({G}, 2)", f"lib.matrix_power({G}, 3)",
    f"lib.matrix_power({G} * 0.5, 5)", f"lib.matrix_power({G} * 0.5, 12)",
    "lib.matrix_power(lib.tensor([[2., 1.], [1., 3.]], dtype=lib.float64), -2)",
    "lib.linalg.matrix_power(lib.tensor([[2., 1.], [1., 3.]]), 4)", "lib.matrix_power(lib.ones(2, 3), 2)",
    "lib.matrix_power(lib.ones(3), 2)", "lib.matrix_power(lib.ones(2, 2, dtype=lib.long), -1)",
    "lib.matrix_power(lib.ones(2, 2, dtype=lib.long), 0)", "lib.matrix_power(lib.ones(2, 2, dtype=lib.long), 7)",
    "lib.matrix_power(lib.ones(3, 2, 2), 3)", "lib.ones(2, 2).matrix_power(2)",
    "lib.matrix_power(lib.ones(2, 2), 2, out=lib.empty(0))",
    "lib.linalg.matrix_power(lib.ones(2, 2), 3, out=lib.empty(2, 2))", "lib.matrix_power(lib.ones(0, 2, 2), 3)",
]


# A negative power inverts the matrix with LAPACK's LU solve, whose roundings follow MKL's
# kernel for the CPU: those values are compared within ulps, the rest of the description exactly.
WITHIN_ULPS = {"lib.matrix_power(lib.tensor([[2., 1.], [1., 3.]], dtype=lib.float64), -2)": PRODUCT_ULPS}


@pytest.mark.parametrize("program", NUMPY_NAME_PROGRAMS)
def test_everyday_calls(program):
    ours, theirs = run_described(internals, program), run_described(torch, program)
    if program in WITHIN_ULPS:
        (ours_values, *ours_rest), ours_warnings = ours
        (their_values, *their_rest), their_warnings = theirs
        assert_within_ulps(ours_values, their_values, WITHIN_ULPS[program])
        ours, theirs = (ours_rest, ours_warnings), (their_rest, their_warnings)
    assert ours == theirs
