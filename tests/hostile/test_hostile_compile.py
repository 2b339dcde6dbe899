"""Hostile uses of the tensors a compiled function holds (``internals/_dynamo``: closed-over
tensors and a module's buffers are inputs of the graph): the same tensor reached twice, a tensor
rebound from outside between calls, a trace that fails while the tensor is swapped out. Each
case's results and the tensors written are eager torch's, call by call."""
import numpy as np
import pytest
import torch

import internals


def _values(t):
    return (t.detach().to_torch() if isinstance(t, internals.Tensor) else t.detach()).numpy().tolist()


def _closed_over_and_passed(T, compile_fn):
    """A closed-over tensor written in place, then passed as the argument (or a view of it)."""
    g = T.zeros(3)

    def f(x):
        g.add_(1)
        return x * 2
    compiled = compile_fn(f)
    return [_values(compiled(T.ones(3))), _values(compiled(g)), _values(compiled(g[1:])), _values(g)]


def _rebound_from_outside(T, compile_fn):
    """A closed-over tensor and a module's buffer bound to tensors of another size and dtype
    between calls."""
    box = {"g": T.ones(3)}

    def f(x):
        return x * box["g"]
    m = T.nn.BatchNorm1d(3)
    compiled, module = compile_fn(f), compile_fn(m)
    out = [_values(compiled(T.ones(3)))]
    box["g"] = T.arange(3, dtype=T.float64)
    out.append(_values(compiled(T.ones(3))))
    out.append(_values(module(T.arange(6.0).reshape(2, 3))))
    m.running_mean = T.full((3,), 2.0)
    out.append(_values(module(T.arange(6.0).reshape(2, 3))))
    return out + [_values(m.running_mean), _values(m.running_var)]


def _fails_after_a_write(T, compile_fn):
    """A call whose trace fails after the function wrote its closed-over tensor: the error is
    raised, the tensor is the caller's real one afterwards, written as often as eager writes it
    (torch.compile refuses the call before running any of it: its tensor is written once less)."""
    g = T.zeros(3)

    def f(x):
        g.add_(1)
        return x @ x
    compiled = compile_fn(f)
    with pytest.raises(RuntimeError):
        compiled(T.ones(2, 3))
    assert type(g) is T.Tensor
    return [_values(compiled(T.ones(3))), _values(g)]


@pytest.mark.parametrize(("program", "as_torch_compile"), [
    (_closed_over_and_passed, True), (_rebound_from_outside, True), (_fails_after_a_write, False)])
def test_held_tensors_give_eagers_values(program, as_torch_compile):
    """Eager's values under internals.compile; under torch.compile too, where it gives them."""
    want = program(torch, lambda fn: fn)
    got = program(internals, internals.compile)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    if as_torch_compile:
        torch._dynamo.reset()
        for c, b in zip(program(torch, lambda fn: torch.compile(fn, backend="eager")), want, strict=True):
            np.testing.assert_allclose(c, b, rtol=1e-6)
