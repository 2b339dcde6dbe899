"""``F.one_hot`` against torch: PyTorch's OpInfo samples (as given and non-contiguous) and everyday
calls (values, strides, dtypes, errors).

Tests ``internals.aten.native.onehot`` (aten/src/ATen/native/Onehot.cpp).
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

F = internals.nn.functional
ADAPTERS = {
    "nn.functional.one_hot": Adapter(F.one_hot, kwargs=("num_classes",)),
}
OPINFO_CASES = opinfo_cases(list(ADAPTERS), (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    adapter = ADAPTERS[OPINFO_BY_NAME[name].name]
    check_opinfo_samples(name, dtype, adapter, compare=compare_call)


PROGRAMS = [
    "lib.nn.functional.one_hot(lib.tensor([[0, 2], [1, 1]]))",
    "lib.nn.functional.one_hot(lib.tensor([0, 2]), 4)",
    "lib.nn.functional.one_hot(lib.tensor([1.0]))",
    "lib.nn.functional.one_hot(lib.tensor([-1]))",
    "lib.nn.functional.one_hot(lib.tensor([3]), 2)",
    "lib.nn.functional.one_hot(lib.tensor([], dtype=lib.long))",
    "lib.nn.functional.one_hot(lib.tensor([], dtype=lib.long), 3)",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)
