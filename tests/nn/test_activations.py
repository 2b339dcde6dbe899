"""Activations a reader's own training script reaches for: ``F.hardtanh``/``nn.Hardtanh``,
``relu6``/``ReLU6``, ``elu``/``ELU``, ``selu``/``SELU``, ``celu``/``CELU``, ``softsign``,
``tanhshrink``, ``softmin`` and ``nn.Identity``, against torch.

As ``tests/aten/test_pointwise_special_functions.py``: PyTorch's OpInfo samples (as given and non-contiguous),
everyday calls compared for values, strides, dtypes, grad_fn names, warnings and error messages,
then gradients and nodes (twice differentiated) against torch's.
"""
import warnings

import pytest
import torch
from helpers import Adapter, compare_call, compare_gradients_and_nodes, run_opinfo_samples
from helpers import run_everyday_call as _run
from torch.testing._internal.common_methods_invocations import op_db

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
OPINFOS = {op.name: op for op in op_db if op.name in ADAPTERS and not op.variant_test_name}
assert set(OPINFOS) == set(ADAPTERS), f"not in op_db: {set(ADAPTERS) - set(OPINFOS)}"
OPINFO_DTYPES = (torch.float32, torch.float64, torch.int64, torch.float16, torch.bfloat16)
OPINFO_CASES = [pytest.param(name, dtype, id=f"{name}-{str(dtype)[6:]}") for name, op in OPINFOS.items()
                for dtype in OPINFO_DTYPES if dtype in op.supported_dtypes("cpu")]


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ran, skipped, reasons = run_opinfo_samples(name, OPINFOS[name], ADAPTERS[name], dtype, compare=compare_call)
    assert ran > 0 and skipped == 0, f"{name} {dtype}: {ran} ran, {skipped} skipped for {sorted(reasons)}"


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
