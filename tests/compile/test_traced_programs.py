"""Small programs a reader would write, traced and compiled beside torch's.

Each program (views, in-place writes on views, reductions along dims, indexing with tensors,
``where``, matmul chains, layer norm, softmax, cat and stack, dropout in eval, a small MLP...)
is traced by both libraries' ``make_fx(tracing_mode="fake")``: the same operator calls, node
for node, with the same names and arguments; and by ``tracing_mode="symbolic"``, where the
sizes are symbols too (a few differences are listed with their reasons). Then
``internals.compile`` runs it, and its results -- and the gradients of a loss through a
compiled function -- are torch's eager ones.
"""
import pytest
import torch
from helpers import graph_calls as _calls
from helpers import placeholder_sizes as _placeholder_sizes
from helpers import seeded_input as P
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import internals
from internals.fx.experimental.proxy_tensor import make_fx


def _layer_norm(T):
    return lambda x, w, b: T.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


def _mlp(T):
    def f(x, w1, w2):
        return (T.relu(x @ w1) @ w2).softmax(-1).sum()
    return f


PROGRAMS = {
    "view then add": (lambda T: lambda x: x.view(4, 3) + 1, [P(12)]),
    "transpose contiguous": (lambda T: lambda x: x.t().contiguous() * 2, [P(3, 4)]),
    "permute reshape": (lambda T: lambda x: x.permute(2, 0, 1).reshape(4, -1), [P(2, 3, 4)]),
    "slice step": (lambda T: lambda x: x[:, ::2] - x[:, 1::2], [P(3, 4)]),
    "in-place on a view": (lambda T: lambda x: x.clone()[1].mul_(2), [P(3, 4)]),
    "in-place on a view returns base": (lambda T: lambda x: (lambda y: (y[:, 0].add_(1), y)[1])(x.clone()), [P(3, 4)]),
    "unsqueeze expand": (lambda T: lambda x: x.unsqueeze(0).expand(2, 3, 4) * x, [P(3, 4)]),
    "sum dim keepdim": (lambda T: lambda x: x.sum(1, keepdim=True), [P(3, 4)]),
    "mean dims": (lambda T: lambda x: x.mean((0, 2)), [P(2, 3, 4)]),
    "max dim": (lambda T: lambda x: x.max(1), [P(3, 4)]),
    "argmax": (lambda T: lambda x: x.argmax(-1), [P(3, 4)]),
    "var": (lambda T: lambda x: x.var(0), [P(3, 4)]),
    "amax": (lambda T: lambda x: T.amax(x, 1), [P(3, 4)]),
    "index with a tensor": (lambda T: lambda x, i: x[i], [P(4, 3), P(5, high=4)]),
    "index_select": (lambda T: lambda x, i: x.index_select(0, i), [P(4, 3), P(5, high=4)]),
    "gather": (lambda T: lambda x: x.gather(1, x.argsort(1)), [P(3, 4)]),
    "where": (lambda T: lambda x, y: T.where(x > 0, x, y), [P(3, 4), P(3, 4, seed=1)]),
    "where scalar": (lambda T: lambda x: T.where(x > 0, x, 0.0), [P(3, 4)]),
    "masked_fill": (lambda T: lambda x: x.masked_fill(x < 0, 0.5), [P(3, 4)]),
    "clamp": (lambda T: lambda x: x.clamp(-0.5, 0.5), [P(3, 4)]),
    "matmul chain": (lambda T: lambda a, b, c: a @ b @ c, [P(2, 3), P(3, 4, seed=1), P(4, 5, seed=2)]),
    "batched matmul": (lambda T: lambda a, b: a @ b, [P(2, 3, 4), P(2, 4, 5, seed=1)]),
    "matmul vector": (lambda T: lambda a, b: a @ b, [P(3, 4), P(4, seed=1)]),
    "linear": (lambda T: lambda x, w, b: T.nn.functional.linear(x, w, b), [P(2, 3), P(4, 3, seed=1), P(4, seed=2)]),
    "layer_norm": (_layer_norm, [P(2, 5), P(5, seed=1), P(5, seed=2)]),
    "softmax": (lambda T: lambda x: T.softmax(x, -1), [P(3, 4)]),
    "log_softmax": (lambda T: lambda x: T.log_softmax(x, 0), [P(3, 4)]),
    "cross_entropy": (lambda T: lambda x, t: T.nn.functional.cross_entropy(x, t), [P(4, 3), P(4, high=3)]),
    "cat": (lambda T: lambda x, y: T.cat([x, y], 1), [P(3, 4), P(3, 2, seed=1)]),
    "stack": (lambda T: lambda x, y: T.stack([x, y]), [P(3, 4), P(3, 4, seed=1)]),
    "split": (lambda T: lambda x: x.split(2, 1), [P(3, 5)]),
    "chunk sum": (lambda T: lambda x: sum(x.chunk(3, 0)), [P(6, 2)]),
    "dropout in eval": (lambda T: lambda x: T.nn.functional.dropout(x, 0.5, training=False) * 2, [P(3, 4)]),
    "gelu tanh": (lambda T: lambda x: T.nn.functional.gelu(x, approximate="tanh"), [P(3, 4)]),
    "relu6": (lambda T: lambda x: T.nn.functional.relu6(x * 4), [P(3, 4)]),
    "cumsum": (lambda T: lambda x: x.cumsum(1), [P(3, 4)]),
    "sort": (lambda T: lambda x: x.sort(1, descending=True), [P(3, 4)]),
    "topk": (lambda T: lambda x: x.topk(2), [P(3, 4)]),
    "type promotion": (lambda T: lambda x, i: x * i + 1, [P(3, 4), P(4, high=3)]),
    "to dtype": (lambda T: lambda x: x.to(T.float64).sum(), [P(3, 4)]),
    "arange add": (lambda T: lambda x: x + T.arange(4), [P(3, 4)]),
    "zeros_like": (lambda T: lambda x: T.zeros_like(x) + x.exp(), [P(3, 4)]),
    "full": (lambda T: lambda x: T.full((3, 4), 2.0) * x, [P(3, 4)]),
    "mlp": (_mlp, [P(4, 3), P(3, 5, seed=1), P(5, 2, seed=2)]),
    "outer": (lambda T: lambda a, b: T.outer(a, b), [P(3), P(4, seed=1)]),
    "einsum": (lambda T: lambda a, b: T.einsum("ij,jk->ik", a, b), [P(2, 3), P(3, 4, seed=1)]),
    "flatten": (lambda T: lambda x: x.flatten(1), [P(2, 3, 4)]),
    "squeeze": (lambda T: lambda x: x.unsqueeze(1).squeeze(1), [P(3, 4)]),
    "norm": (lambda T: lambda x: x.norm(dim=1), [P(3, 4)]),
    "pow sqrt": (lambda T: lambda x: (x ** 2).sqrt(), [P(3, 4)]),
    "flip": (lambda T: lambda x: x.t().flip(0) + 1, [P(3, 4)]),
    "roll": (lambda T: lambda x: x.roll(1, 1) - x.roll(-2), [P(3, 4)]),
    "repeat": (lambda T: lambda x: x.repeat(2, 1, 3), [P(3, 4)]),
    "normalize": (lambda T: lambda x: T.nn.functional.normalize(x, dim=1), [P(3, 4)]),
    "cosine similarity": (lambda T: lambda x, y: T.nn.functional.cosine_similarity(x, y), [P(3, 4), P(4, seed=1)]),
    "one_hot": (lambda T: lambda i: T.nn.functional.one_hot(i, 5).float() * 2, [P(4, high=5)]),
    "embedding": (lambda T: lambda w, i: T.nn.functional.embedding(i, w).sum(1), [P(5, 3), P(2, 4, high=5)]),
    "kthvalue": (lambda T: lambda x: x.kthvalue(2, 1).values * 2 + x.t().kthvalue(1, 0, True)[0].sum(), [P(3, 5)]),
    "median along a dim": (lambda T: lambda x: x.median(0, keepdim=True).indices + x.median(-1)[1].sum(), [P(3, 5)]),
    "integer floor division": (lambda T: lambda i, j: T.div(i, j + 1, rounding_mode="floor") - i // 3, [P(3, 4, high=9),
                                                                                                       P(4, high=3)]),
    # an int for an ``int[2]`` parameter is the list torch boxes it into (``[3, 3]``), and a list
    # at its default (``padding=0`` is ``[0, 0]``) is left out of the node's arguments as torch's
    "max_pool2d with int sizes": (lambda T: lambda x: T.nn.functional.max_pool2d(x, 3, 1, 1)
                                  + T.nn.functional.max_pool2d(x, 1), [P(1, 2, 5, 6)]),
}



@pytest.mark.parametrize("name", PROGRAMS)
def test_fake_trace_is_torchs(name):
    make, inputs = PROGRAMS[name]
    traced = {T: (torch_make_fx if T is torch else make_fx)(make(T), tracing_mode="fake")(*[m(T) for m in inputs])
              for T in (torch, internals)}
    assert _calls(traced[internals]) == _calls(traced[torch])


# The programs whose symbolic graph is not torch's, and why. torch's symbolic make_fx turns on
# its Python dispatcher, under which some composite operators run Python decompositions
# (``torch/_decomp``) instead of their C++ kernels, and every size expression they compute is
# recorded and then dropped as dead code -- taking a node name with it. The package's symbolic
# make_fx turns its own on too, but only dropout has a Python kernel here (``_decomp``).
# (None left: the contiguity test's product of the sizes, which torch records and drops, is
# recorded here too -- ``tensor_impl.is_contiguous`` -- so ``x.t().contiguous() * 2`` names its
# multiplication mul_1 in both.)
SYMBOLIC_DIFFERENCES = {
    "one_hot": "torch's Python dispatcher runs one_hot's Python decomposition, which asserts the indices' "
               "range on the device (ge, all, _assert_async...); the package runs the C++ kernel's traceable "
               "form, as torch's fake mode does",
}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=SYMBOLIC_DIFFERENCES[n], strict=True))
    if n in SYMBOLIC_DIFFERENCES else n for n in PROGRAMS])
def test_symbolic_trace_is_torchs(name):
    """``tracing_mode="symbolic"``: torch's calls, node for node, with its size reads, size
    arithmetic and guards' specializations (``view(4, 3)`` pins a 12-element input's size)."""
    make, inputs = PROGRAMS[name]
    traced = {T: (torch_make_fx if T is torch else make_fx)(make(T), tracing_mode="symbolic")(*[m(T) for m in inputs])
              for T in (torch, internals)}
    assert _calls(traced[internals]) == _calls(traced[torch])
    assert _placeholder_sizes(traced[internals]) == _placeholder_sizes(traced[torch])


@pytest.mark.parametrize("name", PROGRAMS)
def test_compiled_gives_torchs_results(name):
    make, inputs = PROGRAMS[name]
    ours = internals.compile(make(internals))(*[m(internals) for m in inputs])
    theirs = make(torch)(*[m(torch) for m in inputs])
    if isinstance(theirs, torch.Tensor):
        ours, theirs = [ours], [theirs]
    for o, t in zip(ours, theirs, strict=True):
        internals.testing.check(o, t, exact_layout=False, rtol=1e-5, atol=1e-6)


# Programs whose loss is differentiated through a compiled function: the float inputs require grad.
GRADIENTS = ["mlp", "layer_norm", "softmax", "log_softmax", "cross_entropy", "matmul chain", "linear", "where",
             "slice step", "cat", "stack", "norm", "gelu tanh", "index with a tensor", "in-place on a view"]


@pytest.mark.parametrize("name", GRADIENTS)
def test_gradients_through_compiled_are_torchs(name):
    """``compile(f)(*inputs)`` summed, then ``backward()``: every input's grad is torch's."""
    make, inputs = PROGRAMS[name]
    grads = {}
    for T in (torch, internals):
        args = [m(T) for m in inputs]
        for a in args:
            if a.dtype.is_floating_point:
                a.requires_grad_(True)
        f = make(T)
        out = (internals.compile(f) if T is internals else f)(*args)
        (out if out.dim() == 0 else out.sum()).backward()
        grads[T] = [a.grad for a in args if a.dtype.is_floating_point]
    for o, t in zip(grads[internals], grads[torch], strict=True):
        internals.testing.check(o, t, exact_layout=False, rtol=1e-5, atol=1e-6)


# flip, roll, repeat, kthvalue and median have meta functions (their kernels compute the element
# order on the host, which symbolic sizes cannot), and div with a rounding mode (an integer kernel reads the divisor
# to refuse a zero): bad arguments still raise torch's errors while tracing.
BAD_SYMBOLIC = {
    "flip with a dim twice": lambda x: x.flip(0, -2),
    "flip out of range": lambda x: x.flip(2),
    "roll without shifts": lambda x: x.roll((), ()),
    "roll shifts and dims of other lengths": lambda x: x.roll((1, 2), 1),
    "roll dim out of range": lambda x: x.roll(1, 5),
    "repeat with fewer dims": lambda x: x.repeat(2),
    "repeat negative": lambda x: x.repeat(-1, 2),
    "kthvalue with k out of range": lambda x: x.kthvalue(9, 1),
    "median along a dim out of range": lambda x: x.median(3),
    "div with an unknown rounding mode": lambda x: x.div(x, rounding_mode="round"),
    "floor division of bools": lambda x: (x > 0).div(x > 1, rounding_mode="floor"),
}


@pytest.mark.parametrize("name", BAD_SYMBOLIC)
def test_bad_arguments_under_symbolic_tracing_raise_torchs_error(name):
    errors = {}
    for T, trace in ((torch, torch_make_fx), (internals, make_fx)):
        with pytest.raises(Exception) as info:
            trace(BAD_SYMBOLIC[name], tracing_mode="symbolic")(P(3, 4)(T))
        errors[T] = (type(info.value).__name__, str(info.value).split("\n")[0])
    assert errors[internals] == errors[torch]


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_a_whole_reduction_of_an_empty_tensor_traces_and_raises_when_it_runs(reduce):
    """torch's meta of ``max()``/``min()`` asks nothing of the input: fake tracing of an empty
    tensor gives a 0-dim output, and the compiled function raises the kernel's plain
    RuntimeError when it runs, not TorchRuntimeError at its fake trace."""
    def program(x):
        return getattr(x, reduce)() + 1
    for T, trace in ((torch, torch_make_fx), (internals, make_fx)):
        out = next(n for n in trace(program, tracing_mode="fake")(T.ones(0)).graph.nodes if n.op == "output")
        assert tuple(out.args[0].meta["val"].shape) == ()
    errors = {}
    for T, compiled in ((torch, torch.compile(program, backend="aot_eager")), (internals, internals.compile(program))):
        with pytest.raises(RuntimeError) as info:
            compiled(T.ones(0))
        errors[T] = (type(info.value).__name__, str(info.value))
    assert errors[internals] == errors[torch]


# Operators whose metadata a symbolic trace computes with its meta function (the kernels read
# data or turn sizes into ints): the output's sizes and strides are torch's expressions.
F_ = {T: T.nn.functional for T in (torch, internals)}
SYMBOLIC_METADATA = {
    "conv1d": (lambda T: lambda x, w, b: F_[T].conv1d(x, w, b, stride=2, padding=1), [P(2, 3, 10), P(4, 3, 3), P(4)]),
    "conv2d": (lambda T: lambda x, w: F_[T].conv2d(x, w, stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
               [P(2, 3, 9, 10), P(4, 3, 3, 3)]),
    "conv2d more channels out": (lambda T: lambda x, w: F_[T].conv2d(x, w, groups=1), [P(1, 2, 6, 7),
                                                                                          P(6, 2, 3, 3)]),
    "conv2d unbatched": (lambda T: lambda x, w: F_[T].conv2d(x, w, padding=1), [P(3, 6, 7), P(4, 3, 3, 3)]),
    "conv_transpose2d": (lambda T: lambda x, w: F_[T].conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
                         [P(2, 3, 5, 6), P(3, 4, 3, 3)]),
    "index_put": (lambda T: lambda x, v: x.index_put((T.tensor([0, 2]),), v), [P(5, 4), P(2, 4)]),
    "index_put accumulate": (lambda T: lambda x, v: x.t().index_put((T.tensor([0, 2]),), v, accumulate=True),
                             [P(5, 4), P(5)]),
    "diagonal above": (lambda T: lambda x: x.diagonal(1) * 2, [P(3, 5)]),
    "diagonal below": (lambda T: lambda x: x.diagonal(-2, 0, 2), [P(4, 3, 5)]),
    "max_pool2d": (lambda T: lambda x: F_[T].max_pool2d(x, (2, 2)), [P(1, 2, 7, 9)]),
    "max_pool2d unbatched": (lambda T: lambda x: F_[T].max_pool2d(x, (3, 2), (2, 1), (1, 0)), [P(2, 7, 9)]),
    "avg_pool2d": (lambda T: lambda x: F_[T].avg_pool2d(x, (3, 3), (2, 2), (1, 1)), [P(1, 2, 7, 9)]),
    "unfold": (lambda T: lambda x: x.unfold(1, 3, 2), [P(3, 9)]),
    # torch's symbolic view (``_reshape_view_helper``) builds each size from the input's symbols:
    # ``(2, 6)`` of a [s75, s96] input is ``(2, (s75*s96)//2)``, of its transpose's copy
    # ``(2, s75*((s96//2)))``, and the strides follow each split and flatten
    "view of a contiguous input": (lambda T: lambda x: x.view(2, 6), [P(3, 4)]),
    "view with -1": (lambda T: lambda x: x.view(-1, 2), [P(3, 4)]),
    "reshape of a transpose": (lambda T: lambda x: x.t().reshape(2, 6), [P(3, 4)]),
    "reshape of a transpose to three dims": (lambda T: lambda x: x.t().reshape(2, 3, 2), [P(3, 4)]),
    "reshape of a transpose to one dim": (lambda T: lambda x: x.t().reshape(12), [P(3, 4)]),
    "view adding a trailing one": (lambda T: lambda x: x.view(3, 4, 1), [P(3, 4)]),
    # the channel check's guard ``Eq(s96, 2*s9)`` replaces the input's channels by ``2*s9``
    "conv2d grouped": (lambda T: lambda x, w: F_[T].conv2d(x, w, groups=2), [P(1, 4, 5, 5), P(4, 2, 3, 3)]),
    "conv1d grouped, more channels out": (lambda T: lambda x, w: F_[T].conv1d(x, w, groups=3),
                                          [P(2, 3, 7), P(6, 1, 2)]),
    # max_pool1d's own check reads the length as a number, pinning it (with indices it does not)
    "max_pool1d ceil_mode": (lambda T: lambda x: F_[T].max_pool1d(x, 2, ceil_mode=True), [P(1, 2, 7)]),
    "max_pool1d": (lambda T: lambda x: F_[T].max_pool1d(x, 3, 2, 1), [P(2, 7)]),
    "max_pool1d with indices": (lambda T: lambda x: F_[T].max_pool1d(x, 2, return_indices=True)[1], [P(1, 2, 7)]),
    "pixel_shuffle": (lambda T: lambda x: F_[T].pixel_shuffle(x, 2), [P(2, 8, 3, 5)]),
    "pixel_shuffle channels last": (lambda T: lambda x: F_[T].pixel_shuffle(x.permute(0, 3, 1, 2), 2),
                                    [P(2, 3, 5, 8)]),
}


@pytest.mark.parametrize("name", SYMBOLIC_METADATA)
def test_symbolic_metadata_is_torchs(name):
    make, inputs = SYMBOLIC_METADATA[name]
    traced = {T: (torch_make_fx if T is torch else make_fx)(make(T), tracing_mode="symbolic")(*[m(T) for m in inputs])
              for T in (torch, internals)}
    assert _calls(traced[internals]) == _calls(traced[torch])
    assert _placeholder_sizes(traced[internals]) == _placeholder_sizes(traced[torch])
    outs = {T: next(n for n in gm.graph.nodes if n.op == "output").args[0].meta["val"] for T, gm in traced.items()}
    for what in (lambda t: t.shape, lambda t: t.stride()):     # printed as torch prints them
        assert [str(n) for n in what(outs[internals])] == [str(n) for n in what(outs[torch])]
    assert repr(outs[internals].dtype).replace("internals", "torch") == repr(outs[torch].dtype)


def test_symbolic_convolution_refuses_what_eager_refuses():
    """The meta function runs the kernel's checks: too few input channels is torch's RuntimeError."""
    x, w = P(2, 3, 8, 8)(internals), P(4, 2, 3, 3)(internals)
    with pytest.raises(RuntimeError, match="expected input"):
        make_fx(lambda x, w: internals.nn.functional.conv2d(x, w), tracing_mode="symbolic")(x, w)
    with pytest.raises(RuntimeError, match="expected input"):
        torch_make_fx(lambda x, w: torch.nn.functional.conv2d(x, w), tracing_mode="symbolic")(
            P(2, 3, 8, 8)(torch), P(4, 2, 3, 3)(torch))


def _put_rows(T):
    return lambda x, v: x.index_put((T.tensor([0, 2]),), v)


def test_symbolic_index_put_checks_nothing_as_torchs_meta():
    """torch's meta ``index_put`` is ``empty_like(self)``: values of another dtype or of a shape
    the index does not take trace; the kernel refuses them when the graph runs."""
    for T, trace in ((torch, torch_make_fx), (internals, make_fx)):
        for values in (T.ones(2, 4, dtype=T.float64), T.ones(3, 4)):
            gm = trace(_put_rows(T), tracing_mode="symbolic")(T.ones(5, 4), values)
            with pytest.raises(RuntimeError):
                gm(T.ones(5, 4), values)
