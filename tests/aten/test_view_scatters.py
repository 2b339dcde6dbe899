"""``select_scatter``, ``slice_scatter``, ``diagonal_scatter`` and ``as_strided_scatter``: a copy
of ``self`` with one view of it replaced by ``src`` (``TensorShape.cpp``), the functional inverses
of views that functionalization writes. PyTorch's OpInfo samples, then everyday calls and
errors, then gradients and node names, compared as take_along_dim's tests in ``tests/aten/test_indexing.py``
compares them."""

import pytest
import torch
from helpers import Adapter, check_opinfo_samples, compare_gradients_and_nodes, opinfo_cases
from helpers import run_everyday_call as _run

import internals

ADAPTERS = {
    "select_scatter": Adapter(internals.select_scatter, "select_scatter"),
    "slice_scatter": Adapter(internals.slice_scatter, "slice_scatter", kwargs=("dim", "start", "end", "step")),
    "diagonal_scatter": Adapter(internals.diagonal_scatter, "diagonal_scatter", kwargs=("offset", "dim1", "dim2")),
    "as_strided_scatter": Adapter(internals.as_strided_scatter, "as_strided_scatter", kwargs=("storage_offset",)),
}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool)))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


X = "lib.arange(12.).reshape(3, 4)"
PROGRAMS = [
    f"lib.select_scatter({X}, lib.ones(3), 1, 0)", f"lib.select_scatter({X}, lib.ones(4), 0, -1)",
    f"{X}.t().select_scatter(lib.ones(4), 1, 2)", f"lib.select_scatter({X}, lib.ones(3, dtype=lib.int64), 1, 3)",
    f"lib.slice_scatter({X}, lib.ones(2, 4), 0, 1)", f"lib.slice_scatter({X}, lib.ones(3, 2), 1, 0, 4, 2)",
    f"lib.slice_scatter({X}, lib.ones(3, 4))", f"{X}[:, 1:].slice_scatter(lib.ones(1, 3), start=2)",
    f"lib.diagonal_scatter({X}, lib.ones(3))", f"lib.diagonal_scatter({X}, lib.ones(2), 2)",
    f"lib.diagonal_scatter({X}, lib.ones(2), -1)", f"{X}.t().diagonal_scatter(lib.ones(3), dim1=1, dim2=0)",
    f"lib.as_strided_scatter({X}, lib.ones(2, 2), (2, 2), (4, 1), 1)",
    f"lib.as_strided_scatter({X}[1:], lib.ones(2), (2,), (1,))",
    f"lib.as_strided_scatter({X}.t(), lib.ones(3), (3,), (5,))",
    # errors: a src of the wrong shape, an index or a dim out of range
    f"lib.select_scatter({X}, lib.ones(4), 1, 0)", f"lib.select_scatter({X}, lib.ones(3), 1, 4)",
    f"lib.slice_scatter({X}, lib.ones(3, 4), 0, 1)", f"lib.slice_scatter({X}, lib.ones(3, 4), 2)",
    f"lib.diagonal_scatter({X}, lib.ones(4))", f"lib.as_strided_scatter({X}, lib.ones(3), (2,), (1,))",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


@pytest.mark.parametrize("build", [
    lambda lib, x, t: lib.select_scatter(x * t, (x * 3)[:, 1], 1, 2),
    lambda lib, x, t: lib.slice_scatter(x * t, t[1:] ** 2, 0, 1),
    lambda lib, x, t: lib.diagonal_scatter(x * t, x.diagonal(1) * t[0, :2], 1),
    lambda lib, x, t: lib.as_strided_scatter(x * t, (x * x)[0, :2], (2,), (3,), 1),
], ids=["select", "slice", "diagonal", "as_strided"])
def test_gradients_and_nodes(build):
    compare_gradients_and_nodes(build, allow_unused=True)
