"""A graph break at a read of a tensor (``if`` on a tensor, ``.item()``): the code before and
after it is compiled, as torch.compile compiles a graph and a resume function
(``_dynamo/resume_execution.py``). Compared with torch.compile on a counting backend: graphs
per call, break reasons, values, the arguments written, gradients."""
import numpy as np
import torch
from torch._dynamo.testing import CompileCounter

import internals
from internals._dynamo import explain


def branch(x):
    y = x.sin()
    if y.sum() > 0:
        return y.cos() + 1
    return y.exp() - 1


def _pair(values):
    a = np.asarray(values, dtype=np.float32)
    return internals.tensor(a), torch.tensor(a)


def _same(got, want):
    np.testing.assert_allclose(got.detach().to_torch().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_an_if_on_a_tensor_compiles_the_graph_before_and_the_branch_taken():
    torch._dynamo.reset()
    theirs = torch._dynamo.explain(branch)(torch.ones(3))
    ours = explain(branch)(internals.ones(3))
    assert (ours.graph_count, ours.graph_break_count) == (theirs.graph_count, theirs.graph_break_count) == (2, 1)
    assert [r.reason for r in ours.break_reasons] == [r.reason for r in theirs.break_reasons]
    assert [s.line for s in ours.break_reasons[0].user_stack] == ["if y.sum() > 0:"]
    # the first graph ends at the comparison, and returns it and the tensor alive there
    first = ours.graphs[0]
    assert [str(n.target) for n in first.graph.nodes if n.op == "call_function"] == \
        ["aten.sin.default", "aten.sum.default", "aten.gt.Scalar"]
    assert len(next(n for n in first.graph.nodes if n.op == "output").args[0]) == 2


def test_each_branch_is_compiled_once_as_torch_compiles_its_resume_functions():
    torch._dynamo.reset()
    counter = CompileCounter()
    theirs = torch.compile(branch, backend=counter)
    ours = internals.compile(branch)
    for values in ([1, 2, 3], [-1, -2, -3], [2, 1, 0.5], [1, 1, 1, 1]):
        x_i, x_t = _pair(values)
        _same(ours(x_i), theirs(x_t))
        assert len(ours.graphs) == counter.frame_count      # 2, 3 (the other branch), 3, 5 (a new size)
    assert counter.frame_count == 5


def test_a_read_value_is_a_constant_of_the_graph_after_it():
    def scale(x):
        y = x * 2
        return y + y.sum().item()
    torch._dynamo.reset()
    counter = CompileCounter()
    theirs = torch.compile(scale, backend=counter)
    ours = internals.compile(scale)
    for values in ([1, 1, 1], [-1, -1, -1]):      # a second value: a second graph after the read
        x_i, x_t = _pair(values)
        _same(ours(x_i), theirs(x_t))
        assert len(ours.graphs) == counter.frame_count
    assert "add.Tensor(arg0_1, -6.0)" in ours.graphs[-1].code


def test_an_argument_written_on_both_sides_of_a_break_is_written_as_in_eager():
    def write(x, limit):
        x.add_(1)
        if x.sum() > limit:
            x.mul_(2)
        return x
    torch._dynamo.reset()
    theirs = torch.compile(write, backend=CompileCounter())
    ours = internals.compile(write)
    for limit in (0.0, 100.0):
        x_i, x_t = _pair([1, 2, 3])
        out = ours(x_i, limit)
        theirs(x_t, limit)
        assert out is x_i
        _same(x_i, x_t)


def test_gradients_flow_through_the_graphs_on_both_sides_of_a_break():
    torch._dynamo.reset()
    theirs = torch.compile(branch, backend="aot_eager")
    ours = internals.compile(branch)
    for values in ([1, 2, 3], [-1, -2, -3]):
        x_i, x_t = _pair(values)
        x_i.requires_grad_(), x_t.requires_grad_()
        out_i, out_t = ours(x_i), theirs(x_t)
        assert type(out_i.grad_fn).__name__ == type(out_t.grad_fn).__name__ == "CompiledFunctionBackward"
        out_i.sum().backward()
        out_t.sum().backward()
        _same(x_i.grad, x_t.grad)
    assert len(ours.graphs) == 3
