"""``unique`` along a dim (``unique_dim``) against torch: PyTorch's OpInfo samples (as given and
non-contiguous) and everyday calls (values, strides, dtypes, grad_fn names, warnings and errors).
(``unique_consecutive``: ``test_sorting.py``.)

Tests ``internals.aten.native.sorting``'s unique (aten/src/ATen/native/Unique.cpp).
"""
import pytest
import torch
from helpers import (
    OPINFO_BY_NAME,
    Adapter,
    check_opinfo_samples,
    compare_call,
    opinfo_cases,
)
from helpers import run_everyday_call as _run

import internals

ADAPTERS = {
    "unique": Adapter(internals.unique, kwargs=("sorted", "return_inverse", "return_counts", "dim")),
}
OPINFO_CASES = opinfo_cases(list(ADAPTERS), (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    adapter = ADAPTERS[OPINFO_BY_NAME[name].name]
    check_opinfo_samples(name, dtype, adapter, compare=compare_call)


PROGRAMS = [
    "lib.unique(lib.tensor([[1, 2], [3, 4], [1, 2], [0, 9]]), dim=0)",
    "lib.tensor([[1, 2], [3, 4], [1, 2]]).unique(dim=0, sorted=False, return_counts=True)",
    "lib.unique(lib.tensor([[1.0, 2.0], [1.0, 2.0]]).requires_grad_(), dim=-1)",
    "lib.unique(lib.tensor(3), dim=0)",
    "lib.unique(lib.ones(2, 2), dim=2)",
    "lib.unique(lib.zeros(0, 3), dim=0)",
    "lib.unique(lib.zeros(0, 3), dim=1)",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)
