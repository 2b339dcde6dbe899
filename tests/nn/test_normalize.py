"""``F.normalize`` against torch: PyTorch's OpInfo samples (as given and non-contiguous), everyday
calls and gradients (twice).

Tests ``internals.nn.functional.normalize`` (torch/nn/functional.py).
"""
import pytest
import torch
from helpers import (
    OPINFO_BY_NAME,
    Adapter,
    check_opinfo_samples,
    compare_call,
    compare_gradients_and_nodes,
    opinfo_cases,
)
from helpers import run_everyday_call as _run

import internals

F = internals.nn.functional
# log1p: torch's CPU loop calls SLEEF's log1p (1-ulp), internals the C library's: a last-bit
# difference on some inputs.
LAST_BIT = {torch.float32: (2.5e-7, 1e-7), torch.float64: (5e-16, 1e-15)}
ADAPTERS = {
    "nn.functional.normalize": Adapter(F.normalize, kwargs=("p", "dim", "eps"), tol=LAST_BIT),
}
OPINFO_CASES = opinfo_cases(list(ADAPTERS), (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    adapter = ADAPTERS[OPINFO_BY_NAME[name].name]
    check_opinfo_samples(name, dtype, adapter, compare=compare_call)


PROGRAMS = [
    "lib.nn.functional.normalize(lib.tensor([[3.0, 4.0], [0.0, 0.0]]))",
    "lib.nn.functional.normalize(lib.tensor([[3.0, 4.0], [1.0, 1.0]]), dim=0, p=1)",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


GRAD_CASES = {
    "normalize": lambda lib, x, t: lib.nn.functional.normalize(x * t, dim=1),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    """compare_gradients_and_nodes's comparison; t[0, 0] is 0.3 here, and a second derivative may not reach x."""
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)
