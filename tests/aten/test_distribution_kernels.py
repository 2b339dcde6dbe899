"""``normal``'s four overloads against torch: from one seed the same values (internals draws
from the generator as torch's does), and zero gradients of the mean and std.

Tests ``internals.aten.native.distributions`` and ``internals.aten.native.cpu.distribution_kernels``
(aten/src/ATen/native/Distributions.cpp, cpu/DistributionKernels.cpp).
"""
import pytest
import torch
from helpers import run as _run

import internals


def _same(program, **env):
    assert _run(internals, program, **env) == _run(torch, program, **env)


# ---------------------------------------------------------------------------------- normal
NORMAL = [
    "lib.normal(lib.arange(4.), 2.)", "lib.normal(lib.arange(20.).reshape(4, 5).t(), 0.5)",
    "lib.normal(1., lib.arange(20.))", "lib.normal(lib.arange(3.).reshape(3, 1), lib.ones(4))",
    "lib.normal(lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64))",
    "lib.normal(2., 3., (2, 3))", "lib.normal(2., 3., size=(20,), dtype=lib.float64)",
    "lib.normal(0., 1., (5,), generator=lib.Generator().manual_seed(3))",
    "lib.normal(lib.zeros(17), 1., generator=lib.Generator().manual_seed(3))",
    "lib.normal(lib.arange(3.), -1.)", "lib.normal(lib.arange(3.), -lib.ones(3))",
    "lib.normal(-1., -lib.ones(3))", "lib.normal(lib.arange(3), 1.)",
    "(lambda m: (m, lib.normal(m, 1.)))(lib.zeros(3, requires_grad=True))[1]",
    "(lambda s: lib.normal(1., s))(lib.ones(3, requires_grad=True))",
    "(lambda m: lib.normal(m, lib.ones(3)))(lib.zeros(3, requires_grad=True))",
]


@pytest.mark.parametrize("program", NORMAL)
def test_normal_draws_torchs_values(program):
    """Seeded the same, both draw the same values (the standard draw is ``normal_``'s), and give
    the same grad_fn (NormalBackward1/2/3)."""
    results = []
    for lib in (internals, torch):
        lib.manual_seed(0)
        results.append(_run(lib, program))
    assert results[0] == results[1]


@pytest.mark.parametrize("overload", ["mean", "std", "both"])
def test_normal_gradients_are_zero(overload):
    grads = []
    for lib in (internals, torch):
        m, s = lib.zeros(3, requires_grad=True), lib.ones(3, requires_grad=True)
        args = {"mean": (m, 1.0), "std": (0.0, s), "both": (m, s)}[overload]
        lib.normal(*args).sum().backward()
        grads.append([None if t.grad is None else t.grad.tolist() for t in (m, s)])
    assert grads[0] == grads[1]
