"""Activations a reader's own training script reaches for: ``F.hardtanh``/``nn.Hardtanh``,
``relu6``/``ReLU6``, ``elu``/``ELU``, ``selu``/``SELU``, ``celu``/``CELU``, ``softsign``,
``tanhshrink``, ``softmin`` and ``nn.Identity``; ``hardsigmoid``, ``hardswish``, ``mish``,
``softshrink``, ``hardshrink``, ``threshold``, ``prelu``/``PReLU``, ``glu``, ``Softplus``,
the channel dropouts (``dropout1d/2d/3d``), the in-place names (``relu_``, ``leaky_relu_``,
``selu_``, ``celu_``), the random leaky ReLU (``rrelu``/``RReLU``, its slopes drawn from torch's
stream), ``Softmax2d`` and the SELU dropouts (``alpha_dropout``/``AlphaDropout``,
``feature_alpha_dropout``/``FeatureAlphaDropout``), against torch.

As ``tests/aten/test_pointwise_special_functions.py``: PyTorch's OpInfo samples (as given and non-contiguous),
everyday calls compared for values, strides, dtypes, grad_fn names, warnings and error messages,
then gradients and nodes (twice differentiated) against torch's.
"""
import math
import warnings

import pytest
import torch
from helpers import (
    LIBM_ULPS,
    Adapter,
    assert_same,
    check_opinfo_samples,
    compare_gradients_and_nodes,
    opinfo_cases,
)
from helpers import run_everyday_call as _run

import internals

F = internals.nn.functional
# elu, selu and celu call expm1 (torch's float32 loop SLEEF's, internals the C library's), softmin
# exp, and the division in softsign follows the same single rounding in both: a last-bit
# difference on some inputs for the ones made of library math.
LAST_BIT = {torch.float32: (2.5e-7, 1e-7), torch.float64: (5e-16, 1e-15),
            torch.float16: (1e-3, 1e-5), torch.bfloat16: (8e-3, 1e-5)}
ADAPTERS = {
    "nn.functional.hardtanh": Adapter(F.hardtanh, kwargs=("min_val", "max_val", "inplace")),
    "nn.functional.relu6": Adapter(F.relu6, kwargs=("inplace",)),
    "nn.functional.elu": Adapter(F.elu, kwargs=("alpha", "inplace"), tol=LAST_BIT),
    "nn.functional.selu": Adapter(F.selu, kwargs=("inplace",), tol=LAST_BIT),
    "nn.functional.celu": Adapter(F.celu, kwargs=("alpha", "inplace"), tol=LAST_BIT),
    "nn.functional.softsign": Adapter(F.softsign),
    "nn.functional.tanhshrink": Adapter(F.tanhshrink, tol=LAST_BIT),
    "nn.functional.softmin": Adapter(F.softmin, kwargs=("dim", "dtype"), tol=LAST_BIT),
}
OPINFO_CASES = opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.float16, torch.bfloat16))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


X = "lib.tensor([[-2.0, -0.5, -0.0], [0.0, 1.5, 7.0]])"
SPECIAL = "lib.tensor([float('nan'), float('inf'), float('-inf'), -1e-30, 1e-30])"
EXACT_PROGRAMS = [
    f"lib.nn.functional.hardtanh({X})", f"lib.nn.functional.hardtanh({X}, -0.5, 2.0)",
    f"lib.nn.functional.hardtanh({SPECIAL})", f"lib.nn.functional.hardtanh({X}.t(), inplace=True)",
    f"lib.nn.functional.hardtanh_({X}, 0.0, 1.0)", "lib.nn.functional.hardtanh(lib.tensor([-3, 0, 5]), -1.5, 2.7)",
    "lib.nn.functional.hardtanh(lib.tensor([True]))", f"lib.nn.functional.hardtanh({X}, 2.0, 1.0)",
    "lib.nn.functional.hardtanh(lib.tensor([1, 5], dtype=lib.uint8), -1, 2)",
    f"lib.nn.functional.hardtanh({X}.requires_grad_())", f"lib.nn.functional.hardtanh({X}.double())",
    f"lib.nn.functional.hardtanh({X}.half())", f"lib.nn.functional.relu6({X})",
    f"lib.nn.functional.relu6({X}, inplace=True)", "lib.nn.functional.relu6(lib.tensor([-2, 3, 9]))",
    f"lib.nn.functional.relu6({X}.requires_grad_())", f"lib.nn.ReLU6()({X})", f"lib.nn.Hardtanh(-2.0, 0.5)({X})",
    "lib.nn.Hardtanh(1.0, 1.0)", f"lib.nn.Identity(3, k=4)({X})", f"lib.nn.Identity()({X}.t())",
    f"lib.nn.functional.softsign({X})", f"lib.nn.functional.softsign({X}.requires_grad_())",
    f"lib.nn.Softsign()({SPECIAL})", "lib.nn.functional.softsign(lib.tensor([1, -2]))",
    "lib.nn.functional.elu(lib.tensor([1, 2]))", "lib.selu(lib.tensor([1]))",
    "lib.nn.functional.celu(lib.tensor([1.0]), alpha=0)", "lib.celu(lib.tensor([1, 2]))",
]
CLOSE_PROGRAMS = [
    f"lib.nn.functional.elu({X})", f"lib.nn.functional.elu({X}, 0.5)", f"lib.nn.functional.elu({SPECIAL})",
    f"lib.nn.functional.elu({X}.t(), 2.0, inplace=True)", f"lib.nn.functional.elu_({X}, -0.3)",
    f"lib.nn.functional.elu({X}.requires_grad_())", f"lib.nn.functional.elu({X}.double(), alpha=1.7)",
    f"lib.nn.ELU(0.2)({X})", f"lib.nn.ELU(inplace=True)({X})",
    f"lib.nn.functional.selu({X})", f"lib.selu({X})", f"lib.selu_({X})", f"lib.nn.functional.selu({X}, True)",
    f"lib.nn.functional.selu({X}.requires_grad_())", f"lib.nn.SELU()({SPECIAL})",
    f"lib.nn.functional.celu({X})", f"lib.nn.functional.celu({X}, 0.3)", f"lib.celu({X}.double(), 0.3)",
    f"lib.celu_({X}, 2.5)", f"lib.nn.functional.celu({X}.requires_grad_(), 0.7)", f"lib.nn.CELU(0.3)({X})",
    f"lib.nn.functional.tanhshrink({X})", f"lib.nn.functional.tanhshrink({X}.requires_grad_())",
    f"lib.nn.Tanhshrink()({X})",
    f"lib.nn.functional.softmin({X}, 1)", f"lib.nn.functional.softmin({X}, dim=0, dtype=lib.float64)",
    f"lib.nn.functional.softmin({X})", f"lib.nn.functional.softmin({X}.requires_grad_(), -1)",
    f"lib.nn.Softmin(dim=1)({X})",
]


@pytest.mark.parametrize("program", EXACT_PROGRAMS)
def test_everyday_calls_exact(program):
    assert _run(internals, program) == _run(torch, program)


@pytest.mark.parametrize("program", CLOSE_PROGRAMS)
def test_everyday_calls_to_the_last_bit(program):
    (meta_i, messages_i), (meta_t, messages_t) = _run(internals, program), _run(torch, program)
    assert (meta_i[:3], meta_i[4], messages_i) == (meta_t[:3], meta_t[4], messages_t)
    rtol, atol = LAST_BIT[getattr(torch, meta_t[0])]
    torch.testing.assert_close([float(v) for v in meta_i[3]], [float(v) for v in meta_t[3]], rtol=rtol, atol=atol,
                               equal_nan=True)


GRAD_CASES = {
    "hardtanh": lambda lib, x, t: lib.nn.functional.hardtanh(x * t, -0.4, 1.0),
    "hardtanh in place": lambda lib, x, t: lib.nn.functional.hardtanh(x * t, inplace=True),
    "relu6": lambda lib, x, t: lib.nn.functional.relu6(x * t * 3),
    "elu": lambda lib, x, t: lib.nn.functional.elu(x * t, 0.7),
    "elu in place": lambda lib, x, t: lib.nn.functional.elu(x * t, 1.3, inplace=True),
    "selu": lambda lib, x, t: lib.nn.functional.selu(x * t),
    "selu in place": lambda lib, x, t: lib.selu_(x * t),
    "celu": lambda lib, x, t: lib.nn.functional.celu(x * t, 0.3),
    "celu in place": lambda lib, x, t: lib.celu_(x * t, 2.0),
    "softsign": lambda lib, x, t: lib.nn.functional.softsign(x * t),
    "tanhshrink": lambda lib, x, t: lib.nn.functional.tanhshrink(x * t),
    "softmin": lambda lib, x, t: lib.nn.functional.softmin(x * t, 1),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


def test_in_place_elu_with_a_negative_alpha_has_torchs_backward_error():
    errors = []
    for lib in (torch, internals):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = lib.nn.functional.elu(x * 1, -0.5, inplace=True)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_module_reprs_and_names():
    for make in (lambda nn: nn.Hardtanh(), lambda nn: nn.Hardtanh(-2.0, 3.0, inplace=True), lambda nn: nn.ReLU6(),
                 lambda nn: nn.ReLU6(True), lambda nn: nn.ELU(), lambda nn: nn.ELU(0.5, True), lambda nn: nn.CELU(2.0),
                 lambda nn: nn.SELU(True), lambda nn: nn.Softsign(), lambda nn: nn.Tanhshrink(),
                 lambda nn: nn.Softmin(1), lambda nn: nn.Identity(5)):
        assert repr(make(internals.nn)) == repr(make(torch.nn))
    assert issubclass(internals.nn.ReLU6, internals.nn.Hardtanh)
    for name in ("hardtanh", "hardtanh_", "relu6", "elu", "elu_", "selu", "celu", "softsign", "tanhshrink", "softmin"):
        assert name in internals.nn.functional.__all__ or hasattr(internals.nn.functional, name)


def test_a_tutorial_network_with_these_activations_trains_as_torchs():
    """A small MLP with each activation, three SGD steps on torch's weights: the same parameters."""
    def build(nn):
        return nn.Sequential(nn.Linear(4, 6), nn.ELU(), nn.Linear(6, 6), nn.Hardtanh(-0.5, 0.5), nn.Linear(6, 6),
                             nn.SELU(), nn.Linear(6, 6), nn.ReLU6(), nn.Identity(), nn.Linear(6, 6), nn.CELU(0.5),
                             nn.Linear(6, 3), nn.Softsign())
    torch.manual_seed(0)
    theirs = build(torch.nn)
    ours = build(internals.nn)
    ours.load_state_dict({k: internals.from_torch(v) for k, v in theirs.state_dict().items()})
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(1))
    for model, lib, xx in ((ours, internals, internals.from_torch(x)), (theirs, torch, x)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            model(xx).pow(2).sum().backward()
            opt.step()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        torch.testing.assert_close(torch.tensor(p.detach().tolist()), q.detach(), rtol=1e-5, atol=1e-6)


# ---- hardsigmoid, hardswish, mish, the shrinks, threshold, prelu, glu and the modules over them
# mish and glu call exp/log1p/tanh (torch's float32 loops SLEEF's, internals the C library's):
# a last-bit difference on some inputs. The 16-bit floats are left out for the compositions:
# torch computes each of these in float32 and rounds once, the operators here round after each step.
MORE_ADAPTERS = {
    "nn.functional.hardsigmoid": Adapter(F.hardsigmoid, kwargs=("inplace",)),
    "nn.functional.hardswish": Adapter(F.hardswish, kwargs=("inplace",)),
    "nn.functional.mish": Adapter(F.mish, kwargs=("inplace",), tol=LAST_BIT),
    "nn.functional.softshrink": Adapter(F.softshrink, kwargs=("lambd",)),
    "nn.functional.hardshrink": Adapter(F.hardshrink, kwargs=("lambd",)),
    "nn.functional.threshold": Adapter(F.threshold, kwargs=("inplace",)),
    "nn.functional.prelu": Adapter(F.prelu, kwargs=("weight",)),
    "nn.functional.glu": Adapter(F.glu, kwargs=("dim",), tol=LAST_BIT),
    "nn.functional.softplus": Adapter(F.softplus, kwargs=("beta", "threshold"), tol=LAST_BIT),
    "nn.functional.logsigmoid": Adapter(F.logsigmoid, tol=LAST_BIT),
}
MORE_OPINFO_CASES = opinfo_cases(MORE_ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.uint8))


@pytest.mark.parametrize("name, dtype", MORE_OPINFO_CASES)
def test_more_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, MORE_ADAPTERS[name])


EDGES = "lib.tensor([-3.0, 3.0, -0.5, 0.5, 0.0, -1e-30, float('nan'), float('inf'), float('-inf'), 2.9999])"
MORE_EXACT_PROGRAMS = [
    f"lib.nn.functional.hardsigmoid({EDGES})", f"lib.nn.functional.hardswish({EDGES})",
    f"lib.nn.functional.hardsigmoid({X}.t(), inplace=True)", f"lib.nn.functional.hardswish({X}.double(), True)",
    "lib.nn.functional.hardswish(lib.tensor([1, 2]))", "lib.nn.functional.hardsigmoid(lib.tensor([True]))",
    f"lib.nn.functional.softshrink({EDGES})", f"lib.nn.functional.softshrink({X}, 1.5)",
    f"lib.nn.functional.softshrink({X}, -0.5)", "lib.nn.functional.softshrink(lib.tensor([1, 2]))",
    f"lib.nn.functional.softshrink({X}.double(), float('nan'))", f"lib.nn.functional.softshrink({X}.half(), 1e5)",
    "lib.nn.functional.softshrink(lib.tensor([1, 2]), -1.0)",
    f"lib.nn.functional.hardshrink({EDGES})", f"lib.nn.functional.hardshrink({X}.t(), 0.1)",
    f"{X}.hardshrink(1.5)", "lib.hardshrink(lib.tensor([1, 2]))",
    f"lib.nn.functional.threshold({EDGES}, 0.5, -7.0)", f"lib.nn.functional.threshold({X}, 0.0, 9.5, True)",
    "lib.nn.functional.threshold(lib.tensor([1, 5, -2]), 1, 7.9)", "lib.threshold(lib.tensor([True]), 0, 1)",
    f"lib.threshold_({X}.t(), 1.0, 2.0)",
    f"lib.nn.functional.prelu({X}, lib.tensor([0.25]))", f"lib.nn.functional.prelu({X}, lib.tensor([0.1, 0.2]))",
    f"lib.nn.functional.prelu({X}.t(), lib.tensor([0.1, 0.2, 0.3]))",
    f"lib.nn.functional.prelu({X}, lib.tensor([0.1, 0.2, 0.3]))",
    f"lib.nn.functional.prelu({X}, lib.tensor([[0.1, 0.2]]))",
    f"lib.nn.functional.prelu({X}, lib.tensor([0.1], dtype=lib.float64))",
    "lib.nn.functional.prelu(lib.tensor(2.0), lib.tensor([0.1, 0.2]))", f"{X}.prelu(lib.tensor(0.5))",
    f"lib.nn.PReLU()({X})", f"lib.nn.PReLU(2, init=0.5)({X})",
    f"lib.nn.functional.glu({X}.t())", f"lib.nn.functional.glu({X}, 0)", f"lib.nn.functional.glu({X})",
    "lib.nn.functional.glu(lib.tensor(1.0))", "lib.nn.functional.glu(lib.tensor([1, 2]))",
    f"lib.nn.Threshold(0.1, 20)({X})", f"lib.nn.Softshrink(0.3)({X})", f"lib.nn.Hardshrink()({X})",
    f"lib.nn.Hardswish()({X})", f"lib.nn.Hardsigmoid(inplace=True)({X})",
]
MORE_CLOSE_PROGRAMS = [
    f"lib.nn.functional.mish({X})", f"lib.nn.functional.mish({EDGES})", f"lib.nn.functional.mish({X}.t(), True)",
    f"lib.nn.functional.mish({X}.double())", f"lib.nn.functional.mish({X}.requires_grad_())",
    f"lib.nn.Mish()({X})", f"lib.nn.GLU(0)({X})", f"lib.nn.functional.glu({X}.double(), 0)",
    f"lib.nn.Softplus(2.0, 5.0)({X})", f"lib.nn.LogSigmoid()({X})",
]


@pytest.mark.parametrize("program", MORE_EXACT_PROGRAMS)
def test_more_everyday_calls_exact(program):
    assert _run(internals, program) == _run(torch, program)


@pytest.mark.parametrize("program", MORE_CLOSE_PROGRAMS)
def test_more_everyday_calls_to_the_last_bit(program):
    test_everyday_calls_to_the_last_bit(program)


MORE_GRAD_CASES = {
    "hardsigmoid": lambda lib, x, t: lib.nn.functional.hardsigmoid(x * 3 - t),
    "hardswish": lambda lib, x, t: lib.nn.functional.hardswish(x * 3 - t),
    "hardswish in place": lambda lib, x, t: lib.nn.functional.hardswish(x * t * 2, inplace=True),
    "mish": lambda lib, x, t: lib.nn.functional.mish(x * t),
    "mish in place": lambda lib, x, t: lib.nn.functional.mish(x * t, inplace=True),
    "softshrink": lambda lib, x, t: lib.nn.functional.softshrink(x * t, 0.3),
    "hardshrink": lambda lib, x, t: lib.nn.functional.hardshrink(x * t, 0.3),
    "threshold": lambda lib, x, t: lib.nn.functional.threshold(x * t, 0.2, -1.0),
    "threshold in place": lambda lib, x, t: lib.nn.functional.threshold(x * t, 0.2, -1.0, inplace=True),
    "prelu": lambda lib, x, t: lib.nn.functional.prelu(x * t, t[0]),
    "glu": lambda lib, x, t: lib.nn.functional.glu(lib.cat([x, t], 1) * 2, 1),
    "softplus": lambda lib, x, t: lib.nn.functional.softplus(x * t, 2.0, 1.0),
}


@pytest.mark.parametrize("name", list(MORE_GRAD_CASES))
def test_more_gradients_and_nodes(name):
    if name == "hardsigmoid":   # torch gives hardsigmoid_backward no derivative: the second order refuses
        for lib in (torch, internals):
            x = lib.tensor([0.5, -4.0], dtype=lib.float64, requires_grad=True)
            (g,) = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
            with pytest.raises(RuntimeError, match="derivative for aten::hardsigmoid_backward is not implemented"):
                g.sum().backward()
        return
    compare_gradients_and_nodes(MORE_GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


def test_prelu_weight_gradient_and_second_order_nodes():
    """The weight's gradient is summed back to its shape; the second-order node is torch's."""
    results = []
    for lib in (torch, internals):
        x = lib.tensor([[-2.0, 0.5, -0.25], [1.0, -3.0, 0.0]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.2, 0.4, -0.1], dtype=lib.float64, requires_grad=True)
        gx, gw = lib.autograd.grad((lib.nn.functional.prelu(x, w) ** 2).sum(), (x, w), create_graph=True)
        ggx, ggw = lib.autograd.grad((gx * gx).sum() + gw.sum(), (x, w))
        results.append([gx.grad_fn.name(), *(t.detach().tolist() for t in (gx, gw, ggx, ggw))])
    assert results[0] == results[1]


def test_more_module_reprs_and_state():
    for make in (lambda nn: nn.Softplus(), lambda nn: nn.Softplus(2, 5), lambda nn: nn.Mish(), lambda nn: nn.Mish(True),
                 lambda nn: nn.Hardswish(True), lambda nn: nn.Hardsigmoid(), lambda nn: nn.Softshrink(0.3),
                 lambda nn: nn.Hardshrink(), lambda nn: nn.Threshold(0.1, 20, True), lambda nn: nn.PReLU(3),
                 lambda nn: nn.GLU(), lambda nn: nn.GLU(1), lambda nn: nn.Dropout1d(0.2), lambda nn: nn.Dropout2d(),
                 lambda nn: nn.Dropout3d(0.1, True)):
        assert repr(make(internals.nn)) == repr(make(torch.nn))
    theirs, ours = torch.nn.PReLU(4, init=0.1), internals.nn.PReLU(4, init=0.1)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert ours.weight.tolist() == theirs.weight.tolist()
    assert not isinstance(internals.nn.Dropout2d(), internals.nn.Dropout)    # siblings, as in torch


DROPOUT_SHAPES = {"dropout1d": [(3, 8, 5), (8, 5)], "dropout2d": [(3, 8, 4, 4), (8, 4, 4), (8, 4)],
                  "dropout3d": [(3, 8, 2, 2, 2), (8, 2, 2, 2), (8, 2, 3)]}


@pytest.mark.parametrize("name, shape", [(n, s) for n, shapes in DROPOUT_SHAPES.items() for s in shapes])
def test_channel_dropout_draws_torchs_masks(name, shape):
    """The same seed zeroes the same channels (a mask of one draw per channel), with torch's
    scaling, warnings, node names and gradients."""
    results = []
    for lib in (torch, internals):
        x = lib.arange(float(math.prod(shape))).reshape(shape).requires_grad_()
        lib.manual_seed(7)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = getattr(lib.nn.functional, name)(x, 0.4)
        y.sum().backward()
        results.append((y.tolist(), type(y.grad_fn).__name__, x.grad.tolist(), [str(w.message) for w in caught]))
    assert results[0] == results[1]


@pytest.mark.parametrize("program", [
    "lib.nn.functional.dropout1d(lib.ones(2, 3, 4), 1.5)", "lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5))",
    "lib.nn.functional.dropout2d(lib.ones(2, 3, 4), 0.0)",
    "lib.nn.functional.dropout1d(lib.ones(2, 3), training=False)",
    "lib.nn.functional.dropout2d(lib.ones(2, 3, 4, 4), 1.0)", "lib.nn.Dropout1d(-0.1)",
    "lib.nn.functional.dropout3d(lib.ones(1, 2, 1, 1, 1), 0.5, inplace=True)",
])
def test_channel_dropout_everyday_calls(program):
    seeded = f"[lib.manual_seed(0), {program}][1]"
    assert _run(internals, seeded) == _run(torch, seeded)


def test_a_network_with_the_new_activations_trains_as_torchs():
    """An MLP through each new activation (PReLU's weight learned), three SGD steps from torch's weights."""
    def build(nn):
        return nn.Sequential(nn.Linear(4, 6), nn.Hardswish(), nn.Linear(6, 6), nn.PReLU(), nn.Linear(6, 8),
                             nn.GLU(), nn.Linear(4, 6), nn.Mish(), nn.Linear(6, 6), nn.Softshrink(0.1),
                             nn.Linear(6, 6), nn.Hardsigmoid(), nn.Linear(6, 6), nn.Threshold(0.05, 0.0),
                             nn.Linear(6, 6), nn.Softplus(), nn.Linear(6, 3), nn.Hardshrink(0.01))
    torch.manual_seed(0)
    theirs = build(torch.nn)
    ours = build(internals.nn)
    ours.load_state_dict({k: internals.from_torch(v) for k, v in theirs.state_dict().items()})
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(1))
    for model, lib, xx in ((ours, internals, internals.from_torch(x)), (theirs, torch, x)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            model(xx).pow(2).sum().backward()
            opt.step()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        torch.testing.assert_close(torch.tensor(p.detach().tolist()), q.detach(), rtol=1e-5, atol=1e-6)


def test_log_sigmoid_of_a_transposed_input_is_contiguous_as_torch():
    """``log_sigmoid_forward`` writes contiguous outputs (not a TensorIterator's layout)."""
    values = torch.randn(3, 4, dtype=torch.float64)
    theirs = torch.nn.functional.logsigmoid(values.t())
    ours = internals.nn.functional.logsigmoid(internals.from_torch(values).t())
    assert ours.stride() == theirs.stride()
    torch.testing.assert_close(ours.to_torch(), theirs)     # library math: within torch's tolerance


# Activations whose formula is plain arithmetic and clamps (plus elu's expm1, exact once rounded
# to 16 bits on these inputs): torch computes them in float32 and rounds once, so the bits agree.
REDUCED_FLOAT_ACTIVATIONS = ("selu", "elu", "celu", "hardsigmoid", "hardswish")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", REDUCED_FLOAT_ACTIVATIONS)
def test_reduced_float_activations_round_once_as_torch(name, dtype):
    """Composed of float16 operators, each step would round: 1 ulp off on about a tenth of inputs."""
    values = (torch.randn(4000, generator=torch.Generator().manual_seed(3)) * 4).to(dtype)
    grad = torch.randn(4000, generator=torch.Generator().manual_seed(4)).to(dtype)
    theirs_x = values.clone().requires_grad_()
    ours_x = internals.from_torch(values).requires_grad_()
    theirs = getattr(torch.nn.functional, name)(theirs_x)
    ours = getattr(F, name)(ours_x)
    theirs.backward(grad)
    ours.backward(internals.from_torch(grad))
    assert ours.to_torch().dtype == dtype and torch.equal(ours.to_torch(), theirs)
    assert torch.equal(ours_x.grad.to_torch(), theirs_x.grad)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_float_log_softmax_rounds_the_row_sum_as_torch(dtype):
    """Along the last dim torch keeps each row's sum of exponentials and its log in the input's
    dtype; computed wholly in float32 a tenth of the outputs were 1 ulp off."""
    values = (torch.randn(64, 100, generator=torch.Generator().manual_seed(5)) * 4).to(dtype)
    theirs = torch.nn.functional.log_softmax(values, dim=-1)
    ours = F.log_softmax(internals.from_torch(values), dim=-1)
    assert ours.to_torch().dtype == dtype
    assert torch.equal(ours.to_torch(), theirs)


# ---- the in-place functional names, the random leaky ReLU, Softmax2d and the SELU dropouts
IN_PLACE_GRAD_CASES = {
    "relu_": lambda lib, x, t: lib.nn.functional.relu_(x * t),
    "leaky_relu_": lambda lib, x, t: lib.nn.functional.leaky_relu_(x * t, 0.2),
    "selu_": lambda lib, x, t: lib.nn.functional.selu_(x * t),
    "celu_": lambda lib, x, t: lib.nn.functional.celu_(x * t, 0.5),
    "rrelu in eval": lambda lib, x, t: lib.nn.functional.rrelu(x * t, 0.1, 0.3),
    "rrelu_ in eval": lambda lib, x, t: lib.nn.functional.rrelu_(x * t, 0.1, 0.3),
}


@pytest.mark.parametrize("name", list(IN_PLACE_GRAD_CASES))
def test_in_place_names_and_rrelu_gradients_and_nodes(name):
    compare_gradients_and_nodes(IN_PLACE_GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


def _rrelu_training(lib, dtype, inplace):
    """A transposed input (its elements visited in row-major order, as torch's loop visits its
    contiguous copy), seeded: the values, the node, both gradients and the generator's next draw."""
    lib.manual_seed(11)
    x = (lib.arange(24, dtype=dtype).reshape(4, 6) - 11.5).t().requires_grad_()
    y = lib.nn.functional.rrelu(x * 1 if inplace else x, 0.1, 0.4, training=True, inplace=inplace)
    g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    gg, = lib.autograd.grad(g.sum(), x)
    return y, g, gg, type(y.grad_fn).__name__, lib.rand(3)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_in_training_draws_torchs_slopes(dtype, inplace):
    ours, theirs = _rrelu_training(internals, getattr(internals, dtype), inplace), \
        _rrelu_training(torch, getattr(torch, dtype), inplace)
    for mine, their in zip(ours[:3], theirs[:3]):
        assert_same(mine, their, rtol=0, atol=0)
    assert ours[3] == theirs[3]
    assert_same(ours[4], theirs[4], rtol=0, atol=0)


@pytest.mark.parametrize("program", [
    "lib.nn.functional.rrelu(lib.tensor([-3.0, -0.0, 0.5, float('nan')]), 0.2, 0.6)",
    "lib.rrelu(lib.tensor([[-1.0, 2.0], [-4.0, 0.0]]), training=True)",
    "lib.nn.functional.rrelu(lib.tensor([-1.0, 2.0]), 0.5, 0.1)",
    "lib.rrelu(lib.tensor([1, -2]), training=True)", "lib.nn.functional.rrelu(lib.tensor([1, -2]))",
    "lib.rrelu(lib.ones(2, dtype=lib.float16), training=True)",
    "lib.rrelu(lib.tensor([-1.0, 2.0], dtype=lib.bfloat16), training=True)",
    "lib.nn.RReLU(0.2, 0.3, inplace=True)(lib.tensor([-1.0, 2.0]))",
    "lib.nn.Softmax2d()(lib.ones(2, 3))",
    "lib.nn.functional.alpha_dropout(lib.ones(3), 1.5)",
    "lib.nn.functional.feature_alpha_dropout(lib.ones(3), 0.5, True)",
    "lib.alpha_dropout(lib.ones(3), 1.5, True)",
    "lib.nn.functional.alpha_dropout(lib.arange(6.0).reshape(2, 3), 1.0, True)",
    "lib.nn.functional.alpha_dropout(lib.arange(6.0).reshape(2, 3), 0.0, True)",
    "lib.nn.functional.feature_alpha_dropout(lib.arange(6.0).reshape(2, 3), 0.5)",
    "lib.nn.AlphaDropout(-0.5)",
])
def test_random_activation_and_alpha_dropout_everyday_calls(program):
    seeded = f"[lib.manual_seed(0), {program}][1]"
    assert _run(internals, seeded) == _run(torch, seeded)


@pytest.mark.parametrize("name, shape", [("alpha_dropout", (4, 5)), ("feature_alpha_dropout", (3, 4, 2, 2)),
                                         ("feature_alpha_dropout", (3, 4))])
@pytest.mark.parametrize("inplace", [False, True])
def test_alpha_dropout_draws_torchs_masks(name, shape, inplace):
    """The same seed drops the same elements (or channels), scaled and shifted by torch's
    constants: the same bits, node names and gradients."""
    results = []
    for lib in (torch, internals):
        x = (lib.arange(float(math.prod(shape))).reshape(shape) / 3).requires_grad_()
        lib.manual_seed(4)
        y = getattr(lib.nn.functional, name)(x * 1 if inplace else x, 0.3, True, inplace)
        y.backward(lib.ones_like(y) / 4)
        results.append((y.tolist(), type(y.grad_fn).__name__, x.grad.tolist(), lib.rand(2).tolist()))
    assert results[0] == results[1]


def test_new_modules_train_and_evaluate_as_torchs():
    results = []
    for lib in (torch, internals):
        x = lib.arange(2 * 3 * 2 * 2, dtype=lib.float64).reshape(2, 3, 2, 2) / 5 - 1
        mods = [lib.nn.RReLU(0.1, 0.2), lib.nn.Softmax2d(), lib.nn.AlphaDropout(0.4), lib.nn.FeatureAlphaDropout(0.2)]
        lib.manual_seed(2)
        train = [m(x).tolist() for m in mods]
        evaluate = [m.eval()(x).tolist() for m in mods[::2]]
        results.append((train, evaluate, [repr(m) for m in mods], lib.nn.Softmax2d()(x[0]).tolist()))
    (train_t, eval_t, reprs_t, unbatched_t), (train_i, eval_i, reprs_i, unbatched_i) = results
    assert reprs_i == reprs_t and eval_i == eval_t
    assert train_i[0::2] == train_t[0::2]       # rrelu and alpha dropout: the same operations, the same bits
    for ours, theirs in ((train_i[1], train_t[1]), (unbatched_i, unbatched_t)):    # a softmax: exp within ulps
        assert_same(internals.tensor(ours, dtype=internals.float64), torch.tensor(theirs, dtype=torch.float64),
                    ulps=LIBM_ULPS)
    assert train_i[3] == train_t[3]
