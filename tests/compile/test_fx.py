"""make_fx against torch's: the same aten operators, in the same order, and the same values.

The expected op lists are traced from torch at test time. Where internals today reaches the same
result through different operators, the difference is written down once, in DIFFERENCES, with
its reason; the comparison accepts either torch's op or the documented replacement, so it stays
right when internals' version changes to torch's.
"""
import operator

import numpy as np
import pytest
import torch
from helpers import same_error
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import internals
from internals.fx.experimental.proxy_tensor import make_fx

DIFFERENCES = {
    # torch op: (internals' replacements, each a list of ops; why)
    "aten.detach.default": ([["aten.new_empty_strided.default", "aten.copy_.default"]],
                            ("torch's AccumulateGrad steals a new gradient nothing else holds (a detach); "
                             "under a fake trace internals' node.meta['val'] holds the gradient too, so it copies "
                             "it into the leaf's layout, as torch's clone_obey_contract (a real trace steals)")),
}


def _torch_targets(gm):
    return ["operator.getitem" if n.target is operator.getitem else str(n.target)
            for n in gm.graph.nodes if n.op == "call_function"]


def matches(expected, got, differences=DIFFERENCES):
    """Whether ``got`` is ``expected`` with some ops replaced as ``differences`` allows."""
    def walk(i, j):
        if i == len(expected):
            return j == len(got)
        options = [[expected[i]]] + differences.get(expected[i], ([], ""))[0]
        return any(got[j:j + len(o)] == o and walk(i + 1, j + len(o)) for o in options)
    return walk(0, 0)


def corpus(T):
    """The functions, written once for either library (``T`` is torch or internals)."""
    T.manual_seed(0)
    lin1, lin2 = T.nn.Linear(4, 8), T.nn.Linear(8, 3)

    def mlp(x):
        return lin2(T.relu(lin1(x)))

    def mse(a, b):
        return ((a - b) ** 2).mean()

    def layer_norm(x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / T.sqrt(var + 1e-5)

    def softmax(x):
        return T.softmax(x, -1)

    def training_step(x, y, w, b):
        loss = (((x @ w + b).relu() - y) ** 2).mean()
        loss.backward()
        return loss, w.grad, b.grad

    x = T.tensor(np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32))
    y = T.tensor(np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32))
    w = T.tensor(np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    b = T.tensor(np.random.default_rng(3).standard_normal(3).astype(np.float32), requires_grad=True)
    def cross_entropy(logits, target):
        return T.nn.functional.cross_entropy(logits, target)

    return {"mlp": (mlp, (x,)), "mse": (mse, (x, 2 * x + 1)),
            "layer_norm": (layer_norm, (x,)), "softmax": (softmax, (x,)),
            "training_step": (training_step, (x, y, w, b)),
            "cross_entropy": (cross_entropy, (x, T.tensor([0, 2, 1, 0, 3])))}


NAMES = list(corpus(internals))


def _fresh(args):
    """Copies of the inputs with no grads, so each run starts alike."""
    return tuple(a.detach().requires_grad_(a.requires_grad) if hasattr(a, "detach") else a for a in args)


@pytest.mark.parametrize("name", NAMES)
def test_traced_ops_match_torch(name):
    f, args = corpus(torch)[name]
    expected = _torch_targets(torch_make_fx(f)(*_fresh(args)))
    f, args = corpus(internals)[name]
    got = make_fx(f)(*_fresh(args)).graph.call_targets()
    assert matches(expected, got), f"torch: {expected}\ninternals: {got}"


@pytest.mark.parametrize("name", NAMES)
def test_graph_module_gives_eager_values(name):
    f, args = corpus(internals)[name]
    gm = make_fx(f)(*_fresh(args))
    eager, traced = f(*_fresh(args)), gm(*_fresh(args))
    eager, traced = (eager, traced) if isinstance(eager, tuple) else ((eager,), (traced,))
    for e, t in zip(eager, traced, strict=True):
        np.testing.assert_allclose(t.detach().numpy(), e.detach().numpy(), rtol=1e-6, atol=1e-6)
        assert t.shape == e.shape and t.stride() == e.stride() and t.dtype is e.dtype


def test_eager_values_match_torch():
    """The corpus computes torch's numbers (the non-module entries share their inputs)."""
    ours, theirs = corpus(internals), corpus(torch)
    for name in ("mse", "layer_norm", "softmax", "training_step"):
        got, want = ours[name][0](*_fresh(ours[name][1])), theirs[name][0](*_fresh(theirs[name][1]))
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_matches_can_fail():
    assert matches(["aten.mul.Scalar"], ["aten.mul.Scalar"])
    assert matches(["aten.detach.default"], ["aten.new_empty_strided.default", "aten.copy_.default"])
    assert not matches(["aten.detach.default"], ["aten.copy_.default", "aten.new_empty_strided.default"])
    assert not matches(["aten.mul.Scalar"], ["aten.mul.Tensor"])
    assert not matches(["aten.sub.Tensor"], ["aten.sub.Tensor", "aten.sub.Tensor"])


def test_fake_tensors_compute_nothing_and_follow_kernel_layouts():
    """A fake op's output has the strides the real kernel would give (TensorIterator's rules)."""
    from internals._subclasses import FakeTensor, FakeTensorMode
    real = internals.randn(4, 6).t()            # a transposed input: outputs follow its layout
    mode = FakeTensorMode()
    with mode:
        fake = mode.from_tensor(real)
        outs = [fake * 2, fake.exp(), fake + internals.ones(6, 1), fake.sum(0), fake.t() @ fake]
    eager = [real * 2, real.exp(), real + internals.ones(6, 1), real.sum(0), real.t() @ real]
    for f, e in zip(outs, eager, strict=True):
        assert isinstance(f, FakeTensor)
        assert (f.shape, f.stride(), f.dtype) == (e.shape, e.stride(), e.dtype)
    with pytest.raises(RuntimeError, match="Cannot access data pointer"):
        outs[0]._impl.storage.data_ptr()


def test_fake_mode_reports_shape_errors_and_value_dependent_shapes():
    from internals._subclasses import FakeTensorMode
    from internals._subclasses.fake_tensor import DynamicOutputShapeException
    mode = FakeTensorMode()
    with mode:
        a, b = mode.from_tensor(internals.ones(2, 3)), mode.from_tensor(internals.ones(4, 5))
        with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
            a @ b
        with pytest.raises(RuntimeError, match="must match the size"):
            a + internals.ones(4)
        assert (a.prod().shape, a.prod(1).shape) == ((), (2,))     # no meta function: the kernel's metadata
        with pytest.raises(DynamicOutputShapeException, match="nonzero"):
            a.nonzero()


def _error_classes(error):
    return [c.__name__ for c in type(error).__mro__]


def _make_fx_of(lib):
    return torch_make_fx if lib is torch else make_fx


# Functions that read a value from a traced tensor, for either library.
READS = {
    "item as a scalar": lambda T: lambda x: x * x.sum().item(),
    "if on an item": lambda T: lambda x: x + 1 if x.sum().item() > 0 else x - 1,
    "tolist": lambda T: lambda x: T.tensor(sorted(x.tolist())),
}


@pytest.mark.parametrize("mode", ["fake", "symbolic"])
@pytest.mark.parametrize("name", ["if on an item", "tolist"])
def test_fake_tracing_refuses_a_decision_on_data_with_torchs_class(name, mode):
    """A decision on a traced tensor's value: torch's fake and symbolic tracing raise
    GuardOnDataDependentSymNode (a RuntimeError); so does the package's."""
    errors = []
    for lib in (torch, internals):
        with pytest.raises(RuntimeError) as info:
            _make_fx_of(lib)(READS[name](lib), tracing_mode=mode)(lib.ones(3))
        errors.append(_error_classes(info.value))
    assert errors[0] == errors[1] and errors[0][0] == "GuardOnDataDependentSymNode"


@pytest.mark.parametrize("name", ["item as a scalar", "if on an item"])
def test_real_tracing_refuses_a_value_read_as_torch_does(name):
    """Real tracing runs the real kernels, but a graph cannot replay a value read from a traced
    tensor: torch refuses it with a RuntimeError, and so does the package, in torch's words."""
    same_error(lambda T: _make_fx_of(T)(READS[name](T), tracing_mode="real")(T.ones(3)))


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_the_item_of_a_constant_is_a_number_in_the_graph(mode):
    """``tensor(3.).item()`` reads a constant the function made: traced in every mode, the value
    written into the graph as a number, after the (dead) copy of the constant, as in torch."""
    def times_three(T):
        return lambda x: x * T.tensor(3.).item()
    graphs = []
    for T in (torch, internals):
        gm = _make_fx_of(T)(times_three(T), tracing_mode=mode)(T.ones(3))
        calls = [n for n in gm.graph.nodes if n.op == "call_function"]
        graphs.append([(str(n.target), [a for a in n.args if not hasattr(a, "op")]) for n in calls])
        assert gm(T.arange(3.)).tolist() == [0.0, 3.0, 6.0]
    assert graphs[0] == graphs[1] == [("aten.lift_fresh_copy.default", []), ("aten.mul.Tensor", [3.0])]


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_real_tracing_runs_the_real_kernels(mode):
    """Real tracing runs every operator on the inputs themselves: an in-place op writes the
    caller's tensor, as torch's does; fake tracing leaves it alone."""
    values = []
    for T in (torch, internals):
        x = T.ones(3)
        _make_fx_of(T)(lambda x: x.add_(1), tracing_mode=mode)(x)
        values.append(x.tolist())
    assert values[0] == values[1] == ([2.0] * 3 if mode == "real" else [1.0] * 3)


def test_an_unknown_tracing_mode_is_refused():
    same_error(lambda T: _make_fx_of(T)(lambda x: x, tracing_mode="eager")(T.ones(3)))


def test_item_is_data_dependent_as_in_torch():
    """``item()`` (an ``if`` on a tensor, ``float(x)``) reaches ``_local_scalar_dense``: both fake
    modes refuse it with the same exception and message."""
    from torch._subclasses.fake_tensor import DataDependentOutputException as TorchDataDependent
    from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeTensorMode

    from internals._subclasses.fake_tensor import DataDependentOutputException, FakeTensorMode
    messages = []
    for mode_type, error, lib in ((TorchFakeTensorMode, TorchDataDependent, torch),
                                  (FakeTensorMode, DataDependentOutputException, internals)):
        with mode_type() as mode, pytest.raises(error) as info:
            mode.from_tensor(lib.ones(3)).sum().item()
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "aten._local_scalar_dense.default"


def test_printing_fits_87_columns(capsys):
    f, args = corpus(internals)["training_step"]
    gm = make_fx(f)(*_fresh(args))
    text = gm.print_readable(print_output=False)
    gm.graph.print_tabular()
    table = capsys.readouterr().out
    assert "sum_1: \"f32[1, 3]\" = internals.ops.aten.sum.dim_IntList(" in text
    assert table.splitlines()[0].split() == ["opcode", "name", "target", "args"]
    assert max(len(line) for line in (text + table).splitlines()) <= 87
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["x_1", "y_1", "w_1", "b_1"]


# ---------------------------------------------------------------------- decompositions, functionalization
def test_decomposed_softmax_matches_torchs_decomposition():
    from torch._decomp import get_decompositions as torch_get_decompositions

    from internals._decomp import get_decompositions
    def f(T):
        return lambda x: T.softmax(x, -1) - T.log_softmax(x, 0)
    wanted = ["_softmax", "_log_softmax"]
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    theirs = torch_make_fx(f(torch), decomposition_table=torch_get_decompositions(
        [getattr(torch.ops.aten, n) for n in wanted]))(torch.tensor(x))
    ours = make_fx(f(internals), decomposition_table=get_decompositions(
        [getattr(internals.ops.aten, n) for n in wanted]))(internals.tensor(x))
    assert "aten._softmax.default" not in ours.graph.call_targets()
    assert matches(_torch_targets(theirs), ours.graph.call_targets())
    np.testing.assert_allclose(ours(internals.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)


def test_decompositions_leave_only_primitives():
    from internals._decomp import decomposition_table
    x = internals.tensor(np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32))
    def f(x):
        return internals.sigmoid(x) * x.mean(-1, keepdim=True) + internals.softmax(x, 0)
    gm = make_fx(f, decomposition_table=decomposition_table)(x)
    decomposed = {str(op) for op in decomposition_table}
    assert decomposed.isdisjoint(gm.graph.call_targets())
    assert {"aten.exp.default", "aten.sum.dim_IntList", "aten.amax.default"} <= set(gm.graph.call_targets())
    t = torch.tensor(x.numpy())
    want = torch.sigmoid(t) * t.mean(-1, keepdim=True) + torch.softmax(t, 0)
    np.testing.assert_allclose(gm(x).numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_functionalize_removes_in_place_ops():
    from internals.fx.passes import functionalize

    def f(x, w):
        h = x @ w
        h.relu_()
        h.mul_(2.0)
        return h.sum(0), h.fill_(1.0)

    x, w = internals.randn(5, 4), internals.randn(4, 3)
    gm = make_fx(f)(x, w)
    assert {"aten.relu_.default", "aten.mul_.Tensor", "aten.fill_.Scalar"} <= set(gm.graph.call_targets())
    expected = f(x, w)
    functionalize(gm)
    targets = gm.graph.call_targets()
    assert {"aten.relu.default", "aten.mul.Tensor", "aten.fill.Scalar"} <= set(targets)
    assert not any(t.split(".")[1].endswith("_") for t in targets)
    for got, want in zip(gm(x, w), expected, strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_functionalize_rewires_later_readers():
    from internals.fx.passes import functionalize
    def f(x):
        y = x * 2
        y.add_(1)
        y.mul_(x)
        return y + 1
    x = internals.tensor([1.0, 2.0, 3.0])
    gm = functionalize(make_fx(f)(x))
    assert gm.graph.call_targets() == ["aten.mul.Tensor", "aten.add.Tensor", "aten.mul.Tensor", "aten.add.Tensor"]
    assert gm(x).tolist() == f(x).tolist() == [4.0, 11.0, 22.0]


# ---------------------------------------------------------------------- the graph code, beside torch's
def _lib(x):
    return internals if isinstance(x, internals.Tensor) else torch


# Programs whose graphs differ in how their constants enter: Python numbers stay in the call
# (``mul.Tensor(x_1, 1.702)``), a tensor made by ``torch.tensor`` is a ``_tensor_constant``
# lifted by ``lift_fresh_copy``.
PROGRAMS = {
    "gelu, tanh approximation": lambda x: 0.5 * x * (1 + _lib(x).tanh(0.7978845608 * (x + 0.044715 * x ** 3))),
    "gelu, sigmoid approximation": lambda x: x * _lib(x).sigmoid(1.702 * x),
    "gelu operator": lambda x: _lib(x).nn.functional.gelu(x, approximate="tanh"),
    "x * 0.5": lambda x: x * 0.5,
    "x + 2": lambda x: x + 2,
    "where with a number": lambda x: _lib(x).where(x > 0, x, 0.),
    "clamp(0, 6)": lambda x: x.clamp(0, 6),
    "2 / x": lambda x: 2 / x,
    "1 - x": lambda x: 1 - x,
    "powers": lambda x: x ** 2 + 2 ** x,
    "sub with alpha": lambda x: _lib(x).sub(x, 1, alpha=2),
    "masked_fill": lambda x: x.masked_fill(x > 0, 1.5),
    "leaky_relu": lambda x: _lib(x).nn.functional.leaky_relu(x, 0.1),
    "lerp": lambda x: _lib(x).lerp(x, x * 2, 0.3),
    "complex number": lambda x: x * 1j,
    "bool number": lambda x: (x > 0) & True,
    "integer arithmetic": lambda x: (x.long() * 3) // 2,
    "in place": lambda x: x.clone().add_(1).mul_(0.5),
    "-0.0 and inf": lambda x: x * -0.0 + float("inf"),
    "floor division": lambda x: _lib(x).div(x, 3, rounding_mode="floor"),
    "full_like": lambda x: _lib(x).full_like(x, 7.0) + x,
    "addcmul": lambda x: _lib(x).addcmul(x, x, x, value=0.5),
    "tensor constant": lambda x: x * _lib(x).tensor([1., 2., 3.]),
    "0-dim tensor constant": lambda x: x * _lib(x).tensor(2.0),
    "to another dtype and device": lambda x: x.to("cpu", internals.float64 if isinstance(x, internals.Tensor)
                                                   else torch.float64) + x.double() + x.to("cpu", copy=True),
}


def torch_code(gm):
    """torch's graph code without its blank lines; the ``;  x = None`` that frees each value after
    its last use stays, as internals writes it too."""
    lines = [line.rstrip() for line in gm.code.splitlines()]
    return "\n".join(line for line in lines if line.strip()).replace("torch.ops.", "internals.ops.") \
        .replace("torch.", "internals.")


def our_code(gm):
    """internals' graph code, one line per node (the printed form wraps long calls)."""
    from internals.fx.graph_module import python_code
    return python_code(gm.graph, width=10**9).rstrip()


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_graph_code_is_torchs(program, tracing_mode):
    f, x = PROGRAMS[program], torch.randn(3)
    theirs = torch_make_fx(f, tracing_mode=tracing_mode)(x)
    ours = make_fx(f, tracing_mode=tracing_mode)(internals.from_torch(x))
    assert our_code(ours) == torch_code(theirs)


@pytest.mark.parametrize("program", PROGRAMS)
def test_compiled_graph_keeps_numbers_inline_and_gives_torchs_values(program):
    f, x = PROGRAMS[program], torch.randn(3)
    compiled = internals.compile(f)
    out = compiled(internals.from_torch(x))
    expected = f(x)
    np.testing.assert_allclose(out.to_torch().numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
    assert str(out.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
    constants = [n for n in compiled.graph_module.graph.nodes if n.op == "get_attr"]
    theirs = [n for n in torch_make_fx(f)(x).graph.nodes if n.op == "get_attr"]
    assert len(constants) == len(theirs)


def test_a_dispatch_mode_sees_python_numbers_as_torchs_does():
    seen = {}

    def recorder(lib):
        class Recorder(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                numbers = [type(a).__name__ for a in args if not isinstance(a, (torch.Tensor, internals.Tensor))]
                seen.setdefault(lib.__name__, []).append((str(func), numbers))
                return func(*args, **(kwargs or {}))
        return Recorder()
    for lib in (torch, internals):
        x = lib.ones(2, dtype=lib.int32)
        with recorder(lib):
            x * 2, x + 1.5, x + True, x * 1j, x.add(2, alpha=3)
    assert seen["internals"] == seen["torch"]


def test_an_operator_wraps_a_number_as_the_binding_does():
    """``ops.aten.add.Tensor(int32 tensor, 2.5)``: the number is a wrapped number (float32 result),
    not a 0-dim float64 tensor (float64)."""
    for op in ("add", "mul", "sub"):
        theirs = getattr(torch.ops.aten, op).Tensor(torch.ones(2, dtype=torch.int32), 2.5)
        ours = getattr(internals.ops.aten, op).Tensor(internals.ones(2, dtype=internals.int32), 2.5)
        assert ours.dtype.torch_name == "Float" and theirs.dtype == torch.float32


# ---------------------------------------------------------------------- lift_fresh_copy
def test_lift_fresh_copy_is_torchs_operator():
    for overload in ("default", "out"):
        ours = getattr(internals.ops.aten.lift_fresh_copy, overload)._schema
        theirs = getattr(torch.ops.aten.lift_fresh_copy, overload)._schema
        assert str(ours) == str(theirs)
    assert hasattr(internals, "lift_fresh_copy") == hasattr(torch, "lift_fresh_copy") == False  # noqa: E712
    assert hasattr(internals, "lift_fresh") == hasattr(torch, "lift_fresh") == False  # noqa: E712


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
def test_lift_fresh_copy_is_a_contiguous_copy_with_torchs_gradient(layout):
    def make(lib):
        base = lib.arange(6.0).reshape(2, 3).requires_grad_()
        view = {"contiguous": base, "transposed": base.t(), "expanded": base[:1].expand(4, 3)}[layout]
        return base, view
    (tb, tv), (ib, iv) = make(torch), make(internals)
    theirs, ours = torch.ops.aten.lift_fresh_copy(tv), internals.ops.aten.lift_fresh_copy(iv)
    assert ours.stride() == theirs.stride() and ours.tolist() == theirs.tolist()
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "LiftFreshBackward0_copy"
    assert ours._impl.storage is not iv._impl.storage
    (theirs * 2).sum().backward()
    (ours * 2).sum().backward()
    assert ib.grad.tolist() == tb.grad.tolist()
    from internals._subclasses import FakeTensorMode
    mode = FakeTensorMode()
    with mode:
        fake = internals.ops.aten.lift_fresh_copy(mode.from_tensor(iv.detach()))
    assert fake.stride() == ours.stride() and fake.dtype is ours.dtype


def test_a_graph_writing_into_its_constant_gives_a_fresh_one_each_run():
    def f(x):
        c = _lib(x).tensor([1., 2.])
        c.add_(1)
        return x * c
    gm = make_fx(f)(internals.ones(2))
    assert "aten.lift_fresh_copy.default" in gm.graph.call_targets()
    assert gm(internals.ones(2)).tolist() == gm(internals.ones(2)).tolist() == f(torch.ones(2)).tolist()
    compiled = internals.compile(f)
    assert compiled(internals.ones(2)).tolist() == compiled(internals.ones(2)).tolist() == [2.0, 3.0]


def test_core_aten_decompositions_keep_lift_fresh_copy():
    from torch._decomp import core_aten_decompositions as torch_core

    from internals._decomp import core_aten_decompositions

    def f(x):
        return x + _lib(x).tensor([1., 2.])
    theirs = torch_make_fx(f, torch_core(), tracing_mode="fake")(torch.ones(2))
    ours = make_fx(f, core_aten_decompositions())(internals.ones(2))
    assert our_code(ours) == torch_code(theirs)
