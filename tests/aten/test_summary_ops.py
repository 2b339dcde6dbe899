"""``bincount`` against torch: everyday calls with and without weights and minlength, and torch's
errors.

Tests ``internals.aten.native.summary_ops`` (aten/src/ATen/native/SummaryOps.cpp).
"""
import pytest
import torch
from helpers import run_everyday_call as _run

import internals

PROGRAMS = [
    "lib.bincount(lib.tensor([2, 0, 1, 2]))",
    "lib.tensor([2, 0, 1, 2]).bincount(minlength=5)",
    "lib.bincount(lib.tensor([2, 0, 1, 2]), weights=lib.tensor([1.0, 2.0, 3.0, 4.0]))",
    "lib.bincount(lib.tensor([2, 0, 1, 2]), weights=lib.tensor([1, 2, 3, 4]))",
    "lib.bincount(lib.tensor([1, 1], dtype=lib.uint8))",
    "lib.bincount(lib.tensor([], dtype=lib.long))",
    "lib.bincount(lib.tensor([[1]]))",
    "lib.bincount(lib.tensor([-1]))",
    "lib.bincount(lib.tensor([1.0]))",
    "lib.bincount(lib.tensor([1]), minlength=-1)",
    "lib.bincount(lib.tensor([1, 2]), weights=lib.ones(3))",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)
