"""``make_fx(tracing_mode="symbolic")`` beside torch's: the inputs' sizes are symbols.

torch gives each input size a *backed* symbol (``s75``: a number drawn from the hash of the
size's source, ``input0.size()[0]``), equal sizes one symbol, and keeps 0 and 1 as numbers. A
size the program uses is read back with an ``aten.sym_size.int`` node, and the program's
arithmetic on sizes is recorded as Python operator nodes (``mul = sym_size_int * 2``), so the
graph serves inputs of other sizes. Every expected graph here is traced from torch at test time.
"""
import operator

import numpy as np
import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import internals
from internals.fx.experimental.proxy_tensor import make_fx

PROGRAMS = {
    "view by a size times 2": (lambda T: lambda x: x.view(x.shape[0] * 2, -1), [(4, 6)]),
    "new_zeros of a size": (lambda T: lambda x: x.new_zeros(x.shape[0]), [(4, 6)]),
    "ones of a size": (lambda T: lambda x: T.ones(x.shape[0]), [(4, 6)]),
    "new_empty of size arithmetic": (lambda T: lambda x: x.new_empty(x.shape[0] // 2, x.size(1) + 1), [(4, 6)]),
    "a mean by hand": (lambda T: lambda x: x.sum(1) / x.shape[1], [(4, 6)]),
    "expand by the sizes": (lambda T: lambda x: x.expand(3, *x.shape).mean(0), [(4, 6)]),
    "flatten of an unsqueeze": (lambda T: lambda x: x.unsqueeze(0).flatten(), [(4, 6)]),
    "reshape(-1)": (lambda T: lambda x: x.reshape(-1), [(4, 6)]),
    # not contiguous: the shape is inferred from the element count, read with a sym_numel node
    "reshape of a permute": (lambda T: lambda x: x.permute(2, 0, 1).reshape(4, -1), [(2, 3, 4)]),
    "add": (lambda T: lambda x, y: x + y, [(4, 6), (4, 6)]),
    "broadcast add": (lambda T: lambda x, y: x + y, [(4, 6), (6,)]),
    "matmul then sum": (lambda T: lambda x, y: (x @ y).sum(), [(4, 6), (6, 3)]),
    # dot's output metadata comes from its meta function: the operands hold no data
    "a product of two vectors": (lambda T: lambda x, y: x @ y, [(4,), (4,)]),
    "vdot": (lambda T: lambda x, y: T.vdot(x, y) * x, [(4,), (4,)]),
    "slice, t, mul": (lambda T: lambda x: x[1:].t() * 2, [(4, 6)]),
    "cat then softmax": (lambda T: lambda x, y: T.cat([x, y]).softmax(-1), [(4, 6), (2, 6)]),
    "view then add": (lambda T: lambda x: x.view(4, 3) + 1, [(12,)]),
    "sum along a dim": (lambda T: lambda x: x.sum(1, keepdim=True), [(3, 4)]),
    "where": (lambda T: lambda x, y: T.where(x > 0, x, y), [(3, 4), (3, 4)]),
    "linear": (lambda T: lambda x, w, b: T.nn.functional.linear(x, w, b), [(2, 3), (4, 3), (4,)]),
    "relu of a matmul chain": (lambda T: lambda a, b, c: T.relu(a @ b) @ c, [(2, 3), (3, 4), (4, 5)]),
    "stack": (lambda T: lambda x, y: T.stack([x, y]), [(3, 4), (3, 4)]),
    "a size of 1 stays a number": (lambda T: lambda x: x.view(x.shape[1], -1), [(1, 5)]),
    # a guard that does not pin the size (``s75 > 2``) leaves it a symbol; one that does
    # (``Eq(s96, 4)`` of the expand, ``Eq(s96 - 4, 1)`` of a split's last piece) makes it a number
    "an if on a size": (lambda T: lambda x: x * 2 if x.shape[0] > 2 else x + 1, [(4, 6)]),
    "expand to fixed sizes": (lambda T: lambda x: x.expand(2, 3, 4) + 1, [(3, 4)]),
    "split with a last piece of 1": (lambda T: lambda x: x.split(2, 1)[2] * 2, [(3, 5)]),
    # the product is recorded where flatten computes it, before the first size is read
    "flatten": (lambda T: lambda x: x.flatten(1), [(2, 3, 4)]),
    # a size read for a comparison only is dropped (a whole-dim slice of a symbol is recorded)
    "slices with steps": (lambda T: lambda x: x[:, ::2] - x[:, 1::2], [(3, 4)]),
}


def _inputs(T, shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [T.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]


def _source(value):
    if hasattr(value, "op"):
        return value.name
    if isinstance(value, (list, tuple)):
        return [_source(v) for v in value]
    return repr(value)


def _calls(gm):
    """(name, target, args) of every call in graph order (a Python operator as ``operator.mul``),
    and what the graph returns."""
    calls = []
    for n in gm.graph.nodes:
        if n.op == "call_function":
            target = f"operator.{n.target.__name__}" if getattr(n.target, "__module__", "") == "_operator" \
                else str(n.target).split("ops.", 1)[-1]
            calls.append((n.name, target, _source(list(n.args)), {k: _source(v) for k, v in n.kwargs.items()}))
    output = next(n for n in gm.graph.nodes if n.op == "output")
    return calls, _source(output.args[0])


def _placeholder_sizes(gm):
    return [[str(n) for n in node.meta["val"].shape] for node in gm.graph.nodes if node.op == "placeholder"]


def _traced(name):
    make, shapes = PROGRAMS[name]
    return {T: (torch_make_fx if T is torch else make_fx)(make(T), tracing_mode="symbolic")(*_inputs(T, shapes))
            for T in (torch, internals)}


@pytest.mark.parametrize("name", PROGRAMS)
def test_symbolic_trace_is_torchs(name):
    """torch's nodes, names and arguments; the inputs' sizes are torch's symbols."""
    traced = _traced(name)
    assert _calls(traced[internals]) == _calls(traced[torch])
    assert _placeholder_sizes(traced[internals]) == _placeholder_sizes(traced[torch])


# ``x.view(4, 3)`` of a 12-element input: the guard ``Eq(s75, 12)`` makes the size 12 again, in
# the input's metadata too (and the permuted reshape's guards make the last size 4, the expand's
# the sizes 3 and 4, the split's the size 5), in both libraries: these graphs hold for those
# sizes only.
SPECIALIZED = {"view then add", "reshape of a permute", "expand to fixed sizes", "split with a last piece of 1"}


# (not run at another size: the graphs that hold for one size only, and new_empty's values,
# which are whatever the memory held)
@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in (
    *SPECIALIZED, "a size of 1 stays a number", "new_empty of size arithmetic")])
def test_a_symbolic_graph_serves_other_sizes(name):
    """Traced at one size, run at another (each size doubled): the answer of torch's graph."""
    traced = _traced(name)
    shapes = [tuple(2 * n for n in s) for s in PROGRAMS[name][1]]
    ours, theirs = traced[internals](*_inputs(internals, shapes, 1)), traced[torch](*_inputs(torch, shapes, 1))
    internals.testing.check(ours, theirs, rtol=1e-5, atol=1e-6)


def test_python_operators_on_sizes_print_as_torchs():
    """``mul = sym_size_int * 2``: the printed line reads as torch's."""
    traced = _traced("new_empty of size arithmetic")
    lines = {T: [line.split(";")[0].strip() for line in gm.code.splitlines() if " // " in line or " + " in line]
             for T, gm in traced.items()}
    assert lines[internals] == lines[torch] == ["floordiv = sym_size_int // 2", "add = sym_size_int_1 + 1"]


# Inputs that are views: torch fakes a view through its base, whose sizes take symbols first
# (``input0._base.size()[0]``), and gives the strides symbols or products of them.
LAYOUTS = {
    "transposed": lambda T: T.tensor(np.arange(24.0, dtype=np.float32).reshape(4, 6)).t(),
    "every other column": lambda T: T.tensor(np.arange(24.0, dtype=np.float32).reshape(4, 6))[:, ::2],
    "rows from the second": lambda T: T.tensor(np.arange(24.0, dtype=np.float32).reshape(4, 6))[1:],
    "expanded": lambda T: T.tensor(np.arange(4.0, dtype=np.float32).reshape(4, 1)).expand(4, 6),
    "permuted": lambda T: T.tensor(np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)).permute(2, 0, 1),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_view_input_has_torchs_symbolic_layout(layout):
    """Sizes, strides and storage offset of the input, and the graph of a program reading them."""
    def f(x):
        return (x * 2).sum(0) * x.shape[-1]
    traced = {T: (torch_make_fx if T is torch else make_fx)(f, tracing_mode="symbolic")(LAYOUTS[layout](T))
              for T in (torch, internals)}
    layouts = {T: [(str(list(v.shape)), str(list(v.stride())), str(v.storage_offset()))
                   for v in (n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder")]
               for T, gm in traced.items()}
    assert layouts[internals] == layouts[torch]
    assert _calls(traced[internals]) == _calls(traced[torch])


def test_int_arguments_are_symbols_as_torchs():
    """An int argument is a placeholder whose value is a symbol (0 and 1 stay numbers), shared
    with a size of the same value; the graph takes it as an argument."""
    def f(x, n, m, k):
        return x * n + x.new_zeros(k) * m
    traced = {T: (torch_make_fx if T is torch else make_fx)(f, tracing_mode="symbolic")(*_inputs(T, [(5,)]), 3, 1, 5)
              for T in (torch, internals)}
    assert _calls(traced[internals]) == _calls(traced[torch])
    values = {T: [str(n.meta.get("val")) for n in gm.graph.nodes if n.op == "placeholder"][1:]
              for T, gm in traced.items()}
    assert values[internals] == values[torch]
    ours, theirs = (traced[T](*_inputs(T, [(7,)], 1), 2, 1, 7) for T in (internals, torch))
    internals.testing.check(ours, theirs)


def test_duck_shaping_gives_equal_sizes_one_symbol():
    """Two inputs of one size share its symbol; each reads it from its own tensor."""
    f = {T: (lambda x, y: x.new_zeros(y.shape[0] + x.shape[0])) for T in (torch, internals)}
    traced = {T: (torch_make_fx if T is torch else make_fx)(f[T], tracing_mode="symbolic")(*_inputs(T, [(4,), (4,)]))
              for T in (torch, internals)}
    assert _calls(traced[internals]) == _calls(traced[torch])
    assert _placeholder_sizes(traced[internals]) == _placeholder_sizes(traced[torch])
    assert operator  # (imported for the targets' names)


def test_a_floor_division_prints_as_torchs():
    """A size made by ``//`` prints as torch's ``FloorDiv`` does: ``(s75//2)``, not ``floor(s75/2)``."""
    def f(x):
        return x.new_zeros(x.shape[0] // 2, (x.shape[1] + 1) // 2)
    traced = {T: (torch_make_fx if T is torch else make_fx)(f, tracing_mode="symbolic")(*_inputs(T, [(4, 7)]))
              for T in (torch, internals)}
    shapes = {T: [str(list(n.meta["val"].shape)) for n in gm.graph.nodes if n.name == "new_zeros"]
              for T, gm in traced.items()}
    assert shapes[internals] == shapes[torch]
    assert "//" in shapes[torch][0]     # (the sizes are symbolic divisions in torch's graph)
