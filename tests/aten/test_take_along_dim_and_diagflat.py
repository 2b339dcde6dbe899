"""``take_along_dim`` and ``diagflat``, CompositeImplicitAutograd in torch (a
``gather`` after broadcasting; a ``diag`` of the flattened input), so their graphs hold the nodes
of the operators they decompose into. PyTorch's OpInfo samples, then everyday calls compared as
``tests/aten/test_inverse_pooling_pad_one_hot.py`` compares them (values, strides, dtypes, nodes, errors)."""

import pytest
import torch
from helpers import Adapter, check_opinfo_samples, compare_gradients_and_nodes, opinfo_cases
from helpers import run_everyday_call as _run

import internals

ADAPTERS = {
    "take_along_dim": Adapter(internals.take_along_dim, "take_along_dim", kwargs=("dim",)),
    "diagflat": Adapter(internals.diagflat, "diagflat", kwargs=("offset",)),
}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool)))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


X = "lib.arange(12.).reshape(3, 4)"
PROGRAMS = [
    f"lib.take_along_dim({X}, lib.tensor([[0], [2], [1]]), 1)", f"lib.take_along_dim({X}, lib.tensor([3, 0]))",
    f"lib.take_along_dim({X}, lib.tensor([[1, 0, 2, 0]]), 0)", f"{X}.take_along_dim(lib.tensor([[1, 0]]), dim=-1)",
    f"lib.take_along_dim({X}.t(), lib.tensor([[2, 0, 1]]), 0)",
    f"lib.take_along_dim({X}.requires_grad_(), lib.tensor([[0], [2], [1]]), 1)",
    "lib.take_along_dim(lib.arange(24.).reshape(2, 3, 4), lib.tensor([[[1]], [[2]]]), 2)",
    "lib.take_along_dim(lib.arange(24.).reshape(2, 3, 4), lib.arange(24.).reshape(2, 3, 4).argmax(1, True), 1)",
    f"lib.take_along_dim({X}, lib.tensor([1]), 1)", f"lib.take_along_dim({X}, lib.tensor([[1]], dtype=lib.int32), 1)",
    f"lib.take_along_dim({X}, lib.tensor([[1]]), 3)", f"lib.take_along_dim({X}, lib.tensor([15]))",
    f"lib.take_along_dim({X}, lib.tensor([[-1], [5], [-9]]), 1)", f"lib.take_along_dim({X}, lib.tensor([-1]))",
    "lib.take_along_dim(lib.zeros(3, 0), lib.tensor([[1]]), 1)",
    "lib.take_along_dim(lib.zeros(3, 2), lib.zeros(3, 0, dtype=lib.long), 1)",
    f"lib.take_along_dim({X}, lib.tensor([[1, 2]]), 1)",
    f"lib.take_along_dim({X}, lib.tensor([[1]]), 1, out=lib.empty(0))",
    "lib.diagflat(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), 1)", "lib.diagflat(lib.tensor(3.0))",
    "lib.diagflat(lib.tensor([[1, 2]]).t(), -1)", "lib.tensor([1, 2, 3]).diagflat(offset=2)",
    "lib.diagflat(lib.zeros(0))", "lib.diagflat(lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t().requires_grad_())",
    "lib.diagflat(lib.tensor([True, False]))",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


@pytest.mark.parametrize("build", [
    lambda lib, x, t: lib.take_along_dim(x * t, lib.tensor([[2, 2], [0, 1]]), 1),
    lambda lib, x, t: lib.take_along_dim(x * t, lib.tensor([5, 0, 5])),
    lambda lib, x, t: lib.take_along_dim(x.t() * t.t(), lib.tensor([[1, 0]]), 0),
    lambda lib, x, t: lib.diagflat(x * t, -1),
    lambda lib, x, t: lib.diagflat((x * t).t(), 2),
])
def test_gradients_and_nodes(build):
    compare_gradients_and_nodes(build, allow_unused=True)


def test_graph_holds_the_decomposition():
    names = []
    for lib in (torch, internals):
        x = lib.arange(12.0).reshape(3, 4).requires_grad_()
        y = lib.take_along_dim(x.t(), lib.tensor([[0, 2, 1]]), 0)
        z = lib.diagflat(x.t(), 1)
        names.append([(type(n).__name__, [type(m).__name__ for m, _ in n.next_functions])
                      for n in (y.grad_fn, z.grad_fn, z.grad_fn.next_functions[0][0])])
    assert names[0] == names[1]


def test_cuda_matches_cpu():
    x = internals.arange(24.0).reshape(2, 3, 4)
    i = internals.tensor([[[3, 0]], [[1, 1]]])
    for f in (lambda t, i: internals.take_along_dim(t, i, 2), lambda t, i: internals.diagflat(t[0], 1)):
        assert f(x.cuda(), i.cuda()).cpu().tolist() == f(x, i).tolist()


def test_devices_must_match():
    """torch's ``checkDevice`` message (TensorAdvancedIndexing.cpp; torch here has no CUDA)."""
    index = internals.zeros(2, 1, dtype=internals.long, device="cuda")
    with pytest.raises(RuntimeError, match=r"^Expected tensor to have cpu Device, but got tensor with cuda:0 Device "
                                           r"\(while checking arguments for torch.take_along_dim\(\):\)$"):
        internals.take_along_dim(internals.ones(2, 2), index, 1)
