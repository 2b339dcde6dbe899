"""``nansum`` and ``nanmean`` against torch: PyTorch's OpInfo samples (as given and
non-contiguous), everyday calls (values, strides, dtypes, grad_fn names, warnings and errors),
gradients (twice), finite differences and the CUDA kernels.

Tests ``internals.aten.native.reduce_ops`` (aten/src/ATen/native/ReduceOps.cpp).
"""
import pytest
import torch
from helpers import (
    OPINFO_BY_NAME,
    Adapter,
    assert_same,
    check_opinfo_samples,
    compare_call,
    compare_gradients_and_nodes,
    opinfo_cases,
)
from helpers import run_everyday_call as _run

import internals

NAN = "lib.tensor([[1.0, float('nan'), 3.0], [float('nan'), 2.0, 5.0]])"
ADAPTERS = {
    "nansum": Adapter(internals.nansum, "nansum", kwargs=("dim", "keepdim", "dtype")),
    "nanmean": Adapter(internals.nanmean, "nanmean", kwargs=("dim", "keepdim", "dtype")),
}
OPINFO_CASES = opinfo_cases(list(ADAPTERS), (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    adapter = ADAPTERS[OPINFO_BY_NAME[name].name]
    check_opinfo_samples(name, dtype, adapter, compare=compare_call)


PROGRAMS = [
    f"lib.nansum({NAN})",
    f"{NAN}.nansum(0)",
    f"{NAN}.nansum(dim=1, keepdim=True)",
    f"{NAN}.t().nansum(1)",
    f"lib.nansum({NAN}, dtype=lib.float64)",
    f"lib.nansum({NAN}, 1, out=lib.empty(2))",
    "lib.nansum(lib.tensor([1, 2, 3]))",
    "lib.nansum(lib.tensor([True, True]))",
    "lib.nansum(lib.tensor([1j]))",
    f"lib.nansum({NAN}, 2)",
    "lib.nansum(lib.tensor([float('inf'), -1.0]))",
    f"lib.nanmean({NAN})",
    f"{NAN}.nanmean(1)",
    f"{NAN}.nanmean(0, keepdim=True)",
    "lib.nanmean(lib.tensor([1, 2]))",
    f"lib.nanmean({NAN}.requires_grad_(), 1)",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


GRAD_CASES = {
    "nansum": lambda lib, x, t: lib.where(x > 2, lib.tensor(float("nan"), dtype=lib.float64), x * t).nansum(1),
    "nanmean": lambda lib, x, t: lib.where(x > 2, lib.tensor(float("nan"), dtype=lib.float64), x * t).nanmean(0),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    """compare_gradients_and_nodes's comparison; t[0, 0] is 0.3 here, and a second derivative may not reach x."""
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


GRADCHECKS = {
    "nansum": lambda x: x.nansum(0),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck(name):
    x = internals.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(GRADCHECKS[name], (x,))


CUDA_PROGRAMS = {
    "nansum": lambda lib, d: lib.tensor([[1.0, float("nan")], [2.0, 3.0]], device=d).nansum(0),
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels_match_the_cpu_ones(name):
    """The CUDA kernels (simulated here) give the CPU kernels' values, which torch's CPU gives."""
    build = CUDA_PROGRAMS[name]
    ours = build(internals, "cuda")
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), build(torch, "cpu"), rtol=0, atol=0)
