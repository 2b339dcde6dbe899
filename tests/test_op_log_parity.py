"""Every frontend entry goes through the dispatcher: a logging ``TorchDispatchMode`` sees the same
operators, in the same order, in both libraries, for a corpus of everyday programs."""
import pytest
import torch
from conftest import logging_modes

import internals


def _programs(lib):
    """name -> (setup, program): setup builds the inputs outside the mode, the program runs inside."""
    def ones(*shape, grad=False):
        return lambda: lib.ones(*shape, requires_grad=grad)

    def linear(*shape, bias=True):
        def setup():
            lib.manual_seed(0)
            return lib.nn.Linear(3, 4, bias=bias), lib.ones(*shape)
        return setup

    return {
        "select": (ones(3, 4), lambda x: x[0]),
        "slice": (ones(5, 4), lambda x: x[1:3]),
        "unsqueeze by None": (ones(3, 4), lambda x: x[None]),
        "select then expand": (ones(3, 4), lambda x: x[0].expand(2, 4)),
        "to float64": (ones(3), lambda x: x.to(lib.float64)),
        "double": (ones(3), lambda x: x.double()),
        "float of float64": (lambda: lib.ones(3, dtype=lib.float64), lambda x: x.float()),
        "to same dtype": (ones(3), lambda x: x.to(lib.float32)),
        "in-place add and mul": (ones(3), lambda x: x.add_(1).mul_(2)),
        "views": (ones(2, 3), lambda x: x.t().transpose(0, 1).view(6).reshape(3, 2)),
        "reductions": (ones(2, 3), lambda x: (x.sum(), x.sum(0), x.mean(1), x.amax(0))),
        "elementwise": (ones(2, 3), lambda x: (x + 1) * x - x.exp()),
        "linear": (linear(2, 3), lambda args: args[0](args[1])),
        "linear, 3-d input": (linear(2, 5, 3), lambda args: args[0](args[1])),
        "linear, 1-d input": (linear(3), lambda args: args[0](args[1])),
        "linear, non-contiguous 3-d input": (lambda: (lib.nn.Linear(3, 4), lib.ones(2, 3, 5).transpose(1, 2)),
                                             lambda args: args[0](args[1])),
        "matmul 3-d by matrix": (ones(2, 5, 3), lambda x: x @ lib.ones(3, 4)),
        "matmul 3-d by a matrix that requires grad": (ones(2, 5, 3), lambda x: x @ lib.ones(3, 4, requires_grad=True)),
        "matmul batched": (ones(2, 5, 3), lambda x: x @ lib.ones(2, 3, 4)),
        "matmul vector by batch": (ones(3), lambda x: x @ lib.ones(2, 3, 4)),
        "reshape that copies": (ones(3, 4), lambda x: x.t().reshape(12)),
        "einsum matmul": (ones(2, 3), lambda x: lib.einsum("ij,jk->ik", x, lib.ones(3, 4))),
        "einsum output transposed": (ones(2, 3), lambda x: lib.einsum("ab,bc->ca", x, lib.ones(3, 4))),
        "einsum trace": (ones(3, 3), lambda x: lib.einsum("ii", x)),
        "einsum bilinear": (ones(2, 3), lambda x: lib.einsum("bn,anm,bm->ba", x, lib.ones(4, 3, 5), lib.ones(2, 5))),
        "linear without bias": (linear(2, 3, bias=False), lambda args: args[0](args[1])),
        "linear backward": (linear(2, 3), lambda args: args[0](args[1]).sum().backward()),
        "exp and sigmoid with grad": (ones(2, 3, grad=True), lambda x: x.exp().sigmoid()),
        "detach": (ones(2, 3, grad=True), lambda x: (x * 2).detach()),
        "relu with grad": (ones(2, 3, grad=True), lambda x: lib.nn.ReLU()(x)),
        "relu backward": (ones(2, 3, grad=True), lambda x: lib.nn.ReLU()(x * 2).sum().backward()),
        "to float64 with grad": (ones(3, grad=True), lambda x: x.double()),
        "slice with grad": (ones(5, 4, grad=True), lambda x: x[1:4:2, None][0]),
        "item": (ones(1), lambda x: x.item()),
        "float, int, bool and complex of a tensor": (ones(1), lambda x: (float(x), int(x), bool(x), complex(x))),
        "a loss printed with a format": (ones(3, grad=True), lambda x: f"{(x * 2).sum():.3f}"),
        "a comparison in an if": (ones(2), lambda x: 1 if x.sum() > 0 else 2),
        "an index tensor": (lambda: lib.tensor(1), lambda i: [1, 2, 3][i]),
        "item of a cuda tensor": (lambda: lib.ones(2).cuda() if lib is internals else lib.ones(2),
                                  lambda x: x[1].item()),
    }


@pytest.mark.parametrize("name", list(_programs(torch)))
def test_same_operators_logged(name):
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    setup_t, program_t = _programs(torch)[name]
    setup_i, program_i = _programs(internals)[name]
    args_t, args_i = setup_t(), setup_i()
    with mode_t:
        program_t(args_t)
    with mode_i:
        program_i(args_i)
    assert log_i == log_t


@pytest.mark.parametrize("convert", [lambda x: x.double(), lambda x: x[1:3], lambda x: x[0], lambda x: x[:, None][::2]])
def test_dispatched_conversions_and_indexing_record_torchs_nodes(convert):
    """``_to_copy``, ``slice.Tensor``, ``select.int`` and ``unsqueeze`` carry torch's grad_fn and gradient."""
    t = torch.arange(12.0).reshape(4, 3).requires_grad_()
    o = internals.from_torch(t.detach()).requires_grad_()
    rt, ro = convert(t), convert(o)
    assert type(ro.grad_fn).__name__ == type(rt.grad_fn).__name__
    assert (ro.shape, ro.stride(), ro.storage_offset()) == (rt.shape, rt.stride(), rt.storage_offset())
    (rt * rt).sum().backward()
    (ro * ro).sum().backward()
    torch.testing.assert_close(o.grad.to_torch(), t.grad)
