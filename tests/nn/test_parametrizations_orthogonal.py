"""``nn.utils.parametrizations.orthogonal`` against torch: the three maps (matrix exponential,
Cayley, Householder), with and without the dynamic trivialization, on square, tall, wide and
batched weights. From the same seed the layer's weight, its state dict, the gradients of the
stored tensors and the parameters after optimizer steps equal torch's; assigning a weight goes
through ``right_inverse`` as torch's does; the errors are torch's.

Tolerance: float64, ``TOL`` absolute and relative; the maps run matrix products, LU solves and
LAPACK's QR, whose last bits follow the CPU's BLAS and LAPACK.
"""
import importlib

import pytest
import torch
from helpers import assert_same, same_error

import internals

TOL = dict(rtol=1e-10, atol=1e-12)


def PZ(lib):
    return importlib.import_module(f"{lib.__name__}.nn.utils.parametrizations")


class _Batched:
    """A module holding a batch of matrices (torch's orthogonal accepts any ``(..., m, n)``)."""

    @staticmethod
    def make(lib, shape):
        class Holder(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = lib.nn.Parameter(lib.randn(*shape, dtype=lib.float64))

            def forward(self, x):
                return (self.weight @ x).sum(0)
        return Holder()


def _layer(lib, shape):
    """A seeded layer whose weight has ``shape`` (a Linear, or a batch holder for 3 dims)."""
    lib.manual_seed(0)
    if len(shape) == 2:
        return lib.nn.Linear(shape[1], shape[0], dtype=lib.float64)
    return _Batched.make(lib, shape)


SHAPES = {"square": (4, 4), "tall": (5, 3), "wide": (3, 5), "batch": (2, 3, 3)}
MAPS = ["matrix_exp", "cayley", "householder"]


def _input(lib, shape, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape[-1], 2, dtype=torch.float64, generator=g)
    return internals.from_torch(x) if lib is internals else x


def _run(lib, shape, orthogonal_map, use_trivialization, steps=2):
    """Register, read the weight, then take optimizer steps: everything a training loop sees."""
    layer = _layer(lib, shape)
    PZ(lib).orthogonal(layer, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    seen = {"weight": layer.weight.detach().clone(), "node": type(layer.weight.grad_fn).__name__}
    optimizer = lib.optim.Adam(layer.parameters(), lr=0.05)
    for step in range(steps):
        optimizer.zero_grad()
        out = layer(_input(lib, shape)) if len(shape) == 3 else layer(_input(lib, shape).mT)
        (out * out).sum().backward()
        seen[f"grad {step}"] = layer.parametrizations.weight.original.grad.clone()
        optimizer.step()
    seen["weight after"] = layer.weight.detach().clone()
    seen["state"] = {k: v.detach().clone() for k, v in layer.state_dict().items()}
    return seen


@pytest.mark.parametrize("use_trivialization", [True, False], ids=["trivialization", "no trivialization"])
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("shape", SHAPES)
def test_training_matches_torch(shape, orthogonal_map, use_trivialization):
    ours, theirs = (_run(lib, SHAPES[shape], orthogonal_map, use_trivialization) for lib in (internals, torch))
    assert ours["node"] == theirs["node"]
    assert ours["state"].keys() == theirs["state"].keys()
    for key in ours["state"]:
        assert_same(ours["state"][key], theirs["state"][key], **TOL, exact_layout=False)
    for key in ("weight", "grad 0", "grad 1", "weight after"):
        assert_same(ours[key], theirs[key], **TOL, exact_layout=False)


@pytest.mark.parametrize("shape", SHAPES)
def test_weight_is_orthogonal_and_default_map(shape):
    """The default map (exp for a square weight, Householder otherwise) and an orthonormal result."""
    for lib in (internals, torch):
        layer = PZ(lib).orthogonal(_layer(lib, SHAPES[shape]))
        Q = layer.weight.detach()
        Q = Q if Q.shape[-2] >= Q.shape[-1] else Q.mT
        eye = lib.eye(Q.shape[-1], dtype=lib.float64)
        assert float((Q.mT @ Q - eye).abs().max()) < 1e-12
    names = [type(PZ(lib).orthogonal(_layer(lib, SHAPES[shape])).parametrizations.weight[0]).__name__
             for lib in (internals, torch)]
    assert names[0] == names[1]


@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("value", ["orthogonal", "not orthogonal"])
def test_assignment_goes_through_right_inverse(orthogonal_map, value):
    """Assigning a weight: an orthogonal one is kept, another is orthogonalized by a QR (the base
    of the trivialization); without trivialization only Householder can be assigned."""
    results = []
    for lib in (internals, torch):
        layer = PZ(lib).orthogonal(_layer(lib, (4, 3)), orthogonal_map=orthogonal_map)
        g = torch.Generator().manual_seed(4)
        new = torch.linalg.qr(torch.randn(4, 3, dtype=torch.float64, generator=g)).Q if value == "orthogonal" \
            else torch.randn(4, 3, dtype=torch.float64, generator=g)
        layer.weight = internals.from_torch(new) if lib is internals else new
        results.append((layer.weight.detach().clone(), layer.parametrizations.weight.original.detach().clone(),
                        layer.parametrizations.weight[0].base.clone()))
    for ours, theirs in zip(*results, strict=True):
        assert_same(ours, theirs, **TOL, exact_layout=False)


def test_householder_assignment_without_trivialization():
    results = []
    for lib in (internals, torch):
        layer = PZ(lib).orthogonal(_layer(lib, (5, 3)), orthogonal_map="householder", use_trivialization=False)
        g = torch.Generator().manual_seed(6)
        new = torch.randn(5, 3, dtype=torch.float64, generator=g)
        layer.weight = internals.from_torch(new) if lib is internals else new
        results.append((layer.weight.detach().clone(), layer.parametrizations.weight.original.detach().clone()))
    for ours, theirs in zip(*results, strict=True):
        assert_same(ours, theirs, **TOL, exact_layout=False)


def _assign(lib, orthogonal_map, shape=(3, 3)):
    layer = PZ(lib).orthogonal(_layer(lib, (3, 3)), orthogonal_map=orthogonal_map, use_trivialization=False)
    layer.weight = lib.eye(*shape, dtype=lib.float64)


ERROR_CASES = {
    "a vector": lambda lib: PZ(lib).orthogonal(lib.nn.Linear(3, 1, dtype=lib.float64), "bias"),
    "no such tensor": lambda lib: PZ(lib).orthogonal(lib.nn.Linear(3, 3), "weights"),
    "an unknown map": lambda lib: PZ(lib).orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr"),
    "assigning to the exponential map": lambda lib: _assign(lib, "matrix_exp"),
    "assigning to the Cayley map": lambda lib: _assign(lib, "cayley"),
    "assigning another shape": lambda lib: _assign(lib, "householder", (3, 2)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors(case):
    ours, theirs = [], []
    for lib, seen in ((internals, ours), (torch, theirs)):
        try:
            ERROR_CASES[case](lib)
        except Exception as exc:  # noqa: BLE001 -- the class and message are what is compared
            seen.append((type(exc).__name__, str(exc).replace("internals.", "torch.").replace("Size([", "Size([")))
    assert theirs and ours[0][0] == theirs[0][0]
    if case not in ("no such tensor", "assigning another shape"):     # these print the module or a Size
        assert ours == theirs


def _complex_buffer(lib):
    """A complex weight held as a buffer (internals has no complex autograd, so no complex Parameter)."""
    module = lib.nn.Module()
    module.register_buffer("weight", lib.ones(3, 2, dtype=lib.complex128))
    return module


def test_householder_refuses_complex_weights():
    same_error(lambda lib: PZ(lib).orthogonal(_complex_buffer(lib), orthogonal_map="householder"))
