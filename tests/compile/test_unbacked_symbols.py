"""Values read from data under fake and symbolic tracing, against torch's make_fx.

torch turns ``x.sum().item()`` into an unbacked symbol (``zuf0`` for a float, ``u0`` for an
int) recorded as a ``_local_scalar_dense`` node, which the next operator's node takes as its
argument (arithmetic on symbols is recorded as Python operator nodes); an operator whose
output size depends on the data (``nonzero``, ``unique``,
``x[mask]``...) gets a size symbol. A decision on a symbol raises GuardOnDataDependentSymNode.
Every expected graph here is traced from torch at test time.
"""
import operator

import pytest
import torch
from helpers import same_error
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import internals
from internals.fx.experimental.proxy_tensor import make_fx

MODES = ["fake", "symbolic"]


def _make_fx_of(T):
    return torch_make_fx if T is torch else make_fx


def _target(node):
    return "operator.getitem" if node.target is operator.getitem else str(node.target).replace("torch.ops.", "")


def _args(node):
    """A node's arguments with the nodes named: ``['x_1', 'sum_1']``; numbers and lists kept."""
    def show(a):
        if hasattr(a, "op"):
            return a.name
        if isinstance(a, (list, tuple)):
            return [show(b) for b in a]
        return a
    return [show(a) for a in node.args]


def _calls(gm):
    """(name, target, args) of every call, and what the output returns, in graph order."""
    calls = [(n.name, _target(n), _args(n)) for n in gm.graph.nodes if n.op == "call_function"]
    output = next(n for n in gm.graph.nodes if n.op == "output")
    return calls, _args(output)


def _meta(value):
    """What tracing knew of a node's value: a symbol's name, or a tensor's sizes, strides and
    dtype (symbols printed by name); tuples item by item."""
    if isinstance(value, (tuple, list)):
        return [_meta(v) for v in value]
    if hasattr(value, "shape"):
        return ([str(n) for n in value.shape], [str(s) for s in value.stride()], str(value.dtype).split(".")[-1])
    return str(value)


def _metas(gm):
    return {n.name: _meta(n.meta.get("val")) for n in gm.graph.nodes if n.op in ("call_function", "placeholder")}


# ---------------------------------------------------------------------------------------- item()
ITEMS = {
    "x * s": lambda T: lambda x: x * x.sum().item(),
    "x + s": lambda T: lambda x: x + x.sum().item(),
    "full((2,), s)": lambda T: lambda x: T.full((2,), x.sum().item()),
    "s returned": lambda T: lambda x: x.sum().item(),
    "an int item": lambda T: lambda x: x + x.long().sum().item(),
    "two items": lambda T: lambda x: x * x.sum().item() + x.max().item(),
    # arithmetic on symbols: Python operator nodes (operator.mul...), an int constant made a float
    "x * (s * 2)": lambda T: lambda x: x * (x.sum().item() * 2),
    "x + s / t": lambda T: lambda x: x + x.sum().item() / x.max().item(),
    "x * (2 - s)": lambda T: lambda x: x * (2 - x.sum().item()),
    "x * -s": lambda T: lambda x: x * -x.sum().item(),
    "n // 2 returned": lambda T: lambda x: x.long().sum().item() // 2,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ITEMS)
def test_item_is_an_unbacked_symbol_as_in_torch(name, mode):
    """The same nodes, names and arguments as torch's graph; the read's node holds the symbol
    torch names (``zuf0``, ``u0``); the graph computes what the function computes."""
    x = [1.5, -2.0, 4.25]
    traced = {T: _make_fx_of(T)(ITEMS[name](T), tracing_mode=mode)(T.tensor(x)) for T in (torch, internals)}
    assert _calls(traced[internals]) == _calls(traced[torch])
    symbols = {T: {k: v for k, v in _metas(gm).items() if k.startswith("_local_scalar_dense")}
               for T, gm in traced.items()}
    assert symbols[internals] == symbols[torch] and symbols[torch]
    again = [3.0, 0.5, -1.0]        # a new input: the read is redone, not a constant of the graph
    ours, theirs = traced[internals](internals.tensor(again)), traced[torch](torch.tensor(again))
    if isinstance(theirs, torch.Tensor):
        internals.testing.check(ours, theirs)
    else:
        assert ours == theirs and type(ours) is type(theirs)


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the class is what is compared
        return [c.__name__ for c in type(e).__mro__]
    return None


DECISIONS = {
    "if s > 0": lambda T: lambda x: x + 1 if x.sum().item() > 0 else x - 1,
    "int(s)": lambda T: lambda x: x * int(x.sum().item()),
    "bool(s)": lambda T: lambda x: x * 2 if bool(x.sum().item()) else x,
    "range(n) of an int item": lambda T: lambda x: [x for _ in range(x.long().sum().item())][0],
    "a size from an item": lambda T: lambda x: x.new_ones(int(x.sum().item())),
    "if on a data-dependent size": lambda T: lambda x: x if T.nonzero(x).shape[0] == 0 else x + 1,
    "if on a tensor": lambda T: lambda x: x + 1 if x.sum() > 0 else x - 1,
    "float(tensor)": lambda T: lambda x: x * float(x.sum()),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", DECISIONS)
def test_a_decision_on_a_symbol_raises_torchs_class(name, mode):
    """``if``, ``int``, ``bool``, ``range`` of a symbol: GuardOnDataDependentSymNode, in both."""
    errors = [_raised(lambda T=T: _make_fx_of(T)(DECISIONS[name](T), tracing_mode=mode)(T.tensor([1.0, 2.0])))
              for T in (torch, internals)]
    assert errors[0] == errors[1] and errors[0][0] == "GuardOnDataDependentSymNode"


def test_a_symbol_decides_what_holds_for_every_value():
    """Size arithmetic needs no guard where the answer holds for every value: a data-dependent
    size is never negative; ``u0 * 0`` is 0, a plain int."""
    from internals.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv
    env = ShapeEnv()
    u0, u1 = env.create_unbacked_symint(size_like=True), env.create_unbacked_symint()
    assert (str(u0), str(u1), str(env.create_unbacked_symfloat())) == ("u0", "u1", "zuf0")
    assert bool(u0 >= 0) and not bool(u0 < 0) and bool(u0 + 1 > 0)
    assert u0 * 0 == 0 and type(u0 * 0) is int
    assert str(2 * u0 + 1) == "2*u0 + 1"
    for undecided in (lambda: bool(u0 > 0), lambda: bool(u1 >= 0), lambda: int(u0), lambda: u0.__index__()):
        with pytest.raises(GuardOnDataDependentSymNode):
            undecided()


# ----------------------------------------------------------------- data-dependent output sizes
def _x(T):
    return T.tensor([1.0, 0.0, 2.0, 0.0, 2.0, -1.0])


def _counts(T):
    return T.tensor([1, 0, 2, 0, 3, 1])


SIZES = {
    "nonzero": lambda T: (lambda x: T.nonzero(x), _x),
    "nonzero of a matrix": lambda T: (lambda x: T.nonzero(x.reshape(2, 3)), _x),
    "argwhere": lambda T: (lambda x: T.argwhere(x), _x),
    "nonzero, then mul": lambda T: (lambda x: T.nonzero(x) * 2, _x),
    "nonzero, then a sum": lambda T: (lambda x: T.nonzero(x).float().sum(), _x),
    "masked_select": lambda T: (lambda x: T.masked_select(x, x > 0), _x),
    "x[mask]": lambda T: (lambda x: x[x > 0], _x),
    "rows[mask]": lambda T: (lambda x: x.reshape(3, 2)[x.reshape(3, 2)[:, 0] > 0], _x),
    "x[mask], then exp": lambda T: (lambda x: x[x > 0].exp(), _x),
    "unique": lambda T: (lambda x: T.unique(x), _x),
    "unique with inverse and counts": lambda T: (lambda x: T.unique(x, return_inverse=True, return_counts=True), _x),
    "unique along a dim": lambda T: (lambda x: T.unique(x.reshape(3, 2), dim=0), _x),
    "unique_consecutive": lambda T: (lambda x: T.unique_consecutive(x), _x),
    "repeat_interleave by a tensor": lambda T: (lambda r: T.repeat_interleave(r * 10, r), _counts),
    "repeat_interleave of repeats": lambda T: (lambda r: T.repeat_interleave(r), _counts),
    "bincount": lambda T: (lambda r: T.bincount(r), _counts),
    "bincount with float weights": lambda T: (lambda r: T.bincount(r, r.float()), _counts),
    # a data-dependent size passed on: read back with a sym_size.int node where it is used
    "new_zeros of nonzero's size": lambda T: (lambda x: x.new_zeros(x.nonzero().shape[0]), _x),
    "ones of x[mask]'s size": lambda T: (lambda x: T.ones(x[x > 0].shape[0], 2), _x),
    "view by a unique count": lambda T: (lambda x: x.new_ones(T.unique(x).shape[0] * 2).view(-1, 2), _x),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SIZES)
def test_a_data_dependent_size_is_an_unbacked_symbol_as_in_torch(name, mode):
    """torch's graph, node for node; each value's sizes, strides and dtype as torch's fake
    tensors hold them (compared in fake mode; the symbolic inputs' sizes are the subject of
    test_symbolic_shapes.py); and the graph run again gives torch's answer."""
    traced = {}
    for T in (torch, internals):
        f, make = SIZES[name](T)
        traced[T] = _make_fx_of(T)(f, tracing_mode=mode)(make(T))
    assert _calls(traced[internals]) == _calls(traced[torch])
    if mode == "fake":
        ours, theirs = _metas(traced[internals]), _metas(traced[torch])
        if name == "nonzero, then mul":
            # torch's symbolic elementwise rule strides a size-1 dim as 1; its eager mul (and this
            # package, traced or not) keeps the input's layout, (1, n): only the sizes are compared
            ours["mul"], theirs["mul"] = ours["mul"][0::2], theirs["mul"][0::2]
        assert ours == theirs
    _, make = SIZES[name](torch)
    ours = traced[internals](make(internals))
    theirs = traced[torch](make(torch))
    for o, t in zip(ours if isinstance(ours, tuple) else [ours], theirs if isinstance(theirs, tuple) else [theirs],
                    strict=True):
        internals.testing.check(o, t, exact_layout=False)


def _python_operator_lines(gm):
    """The generated code's lines for Python operators on symbols (``mul = u0 * 2.0``), without
    the ``;  x = None`` that torch adds to free its values early."""
    lines = [line.split(";")[0].strip() for line in gm.code.splitlines()]
    return [line for line in lines if " = " in line and ".ops." not in line and not line.startswith("def ")]


@pytest.mark.parametrize("name", ["x * (s * 2)", "x + s / t", "x * (2 - s)", "x * -s", "n // 2 returned"])
def test_python_operators_print_as_torchs(name):
    """fx writes a node calling a Python operator with the operator's syntax (``a * 2.0``, ``-a``,
    ``out[0]``), not as a call of ``operator.mul``."""
    x = [1.5, -2.0, 4.25]
    traced = {T: _make_fx_of(T)(ITEMS[name](T), tracing_mode="fake")(T.tensor(x)) for T in (torch, internals)}
    assert _python_operator_lines(traced[internals]) == _python_operator_lines(traced[torch])
    assert _python_operator_lines(traced[torch])


def _pack(T, enforce_sorted):
    def f(x, lengths):
        packed = T.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=enforce_sorted)
        return tuple(packed)[:2] if enforce_sorted else tuple(packed)
    return f


# (unsorted under symbolic tracing: torch reads the permutation's length with a sym_numel node,
# from the input's symbolic sizes, which this package's symbolic tracing does not make)
@pytest.mark.parametrize(("mode", "enforce_sorted"), [("fake", True), ("fake", False), ("symbolic", True)])
def test_pack_padded_sequence_as_torchs(mode, enforce_sorted):
    """``_pack_padded_sequence``'s batch sizes get a size symbol, as torch's fake implementation
    gives them (whose packed data's sizes and batch sizes' dtype are followed as they stand: see
    ``FakeTensorMode._pack_padded_sequence``); the same graph, and run, the kernel's answer."""
    lengths = [5, 3, 2] if enforce_sorted else [3, 5, 2]
    torch.manual_seed(0)
    x = torch.randn(3, 5, 2)
    inputs = {torch: (x, torch.tensor(lengths)), internals: (internals.from_torch(x), internals.tensor(lengths))}
    traced = {T: _make_fx_of(T)(_pack(T, enforce_sorted), tracing_mode=mode)(*inputs[T]) for T in (torch, internals)}
    assert _calls(traced[internals]) == _calls(traced[torch])
    if mode == "fake":
        assert _metas(traced[internals]) == _metas(traced[torch])
    for o, t in zip(traced[internals](*inputs[internals]), traced[torch](*inputs[torch]), strict=True):
        internals.testing.check(o, t)


def test_each_read_is_a_new_symbol_and_a_memo_keeps_one():
    """Two calls on one tensor share the size torch remembers (``nonzero`` twice: one ``u0``);
    different reads get new symbols."""
    def f(T):
        return lambda x: (T.nonzero(x), T.nonzero(x), T.unique(x), x.long().sum().item(), x.sum().item())
    metas = [_metas(_make_fx_of(T)(f(T), tracing_mode="fake")(_x(T))) for T in (torch, internals)]
    assert metas[0] == metas[1]
    assert metas[0]["nonzero"] == metas[0]["nonzero_1"] and metas[0]["_local_scalar_dense"] == "u2"


def test_an_empty_input_gives_a_size_of_zero():
    """Nothing to count: torch makes no symbol, the size is 0."""
    metas = [_metas(_make_fx_of(T)(lambda x: x.nonzero(), tracing_mode="fake")(T.ones(0))) for T in (torch, internals)]
    assert metas[0] == metas[1] and metas[0]["nonzero"][0] == ["0", "1"]


def test_without_a_shape_env_the_fake_mode_refuses_as_torchs():
    """A FakeTensorMode made without a ShapeEnv has nowhere to make symbols: torch's and the
    package's refuse ``nonzero`` and ``item()`` with the same classes and messages."""
    from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode

    from internals._subclasses.fake_tensor import FakeTensorMode
    for program in (lambda t: t.nonzero(), lambda t: t.sum().item(), lambda t: t[t > 0]):
        seen = []
        for mode_type, T in ((TorchFakeTensorMode, torch), (FakeTensorMode, internals)):
            with mode_type() as mode:
                x = mode.from_tensor(T.ones(3))
                try:
                    program(x)
                except Exception as e:  # noqa: BLE001 -- the class and message are compared
                    seen.append((type(e).__name__, str(e)))
        assert len(seen) == 2 and seen[0] == seen[1]


BAD_MASKS = {
    "a mask of the wrong length": lambda T: lambda x: x[T.ones(3, dtype=T.bool)],
    "a mask of the wrong width": lambda T: lambda x: x.reshape(3, 2)[T.ones(3, 3, dtype=T.bool)],
    "a mask after an index": lambda T: lambda x: x.reshape(3, 2)[T.tensor([0, 1]), T.ones(3, dtype=T.bool)],
}


@pytest.mark.parametrize("name", BAD_MASKS)
def test_a_mask_of_the_wrong_shape_is_refused_while_tracing(name):
    """``x[mask]``'s shape checks need no values: the fake run makes them before any size is
    counted, with the class and message of torch's meta function."""
    same_error(lambda T: _make_fx_of(T)(BAD_MASKS[name](T), tracing_mode="fake")(_x(T)))


def test_a_float_mask_is_refused_when_the_graph_runs():
    """``masked_select``'s dtype check is its kernel's: torch's fake run does not make it, so the
    trace succeeds and the graph refuses the mask when it runs, in both."""
    same_error(lambda T: _make_fx_of(T)(lambda x: T.masked_select(x, x), tracing_mode="fake")(_x(T))(_x(T)))
