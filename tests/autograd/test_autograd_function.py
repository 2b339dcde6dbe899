"""internals.autograd.Function (its nodes' reprs too), gradcheck and checkpoint, against torch
(internals/autograd/function.py; torch/autograd/function.py)."""

import pytest
import torch
from helpers import (
    LIBM_ULPS,
    assert_same,
    assert_same_tree,
)
from torch.utils.checkpoint import checkpoint as torch_checkpoint

import internals
from internals.utils.checkpoint import checkpoint as our_checkpoint


def make_function(lib):
    class ScaledExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, mask):
            y = x.exp() * k
            ctx.save_for_backward(y)
            ctx.mark_non_differentiable(mask)
            ctx.k = k
            return y, mask
        @staticmethod
        def backward(ctx, g, _):
            y, = ctx.saved_tensors
            ctx.seen = ctx.needs_input_grad
            return g * y, None, None
    return ScaledExp


def test_function_graph_and_gradient():
    results, edges = [], []
    for lib in (torch, internals):
        fn = make_function(lib)
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        mask = lib.tensor([1.0, 0.0], dtype=lib.float64)
        y, m = fn.apply(x, 2.0, mask)
        assert y.grad_fn.name() == "ScaledExpBackward"
        edges.append([(n and n.name(), i) for n, i in y.grad_fn.next_functions])
        assert not m.requires_grad and m.data_ptr() == mask.data_ptr()
        (y * y).sum().backward()
        assert y.grad_fn.seen == (True, False, False)
        results.append(x.grad.tolist())
    assert results[0] == pytest.approx(results[1], rel=1e-12)
    assert edges[0] == edges[1]


def test_function_without_grad_records_nothing():
    fn = make_function(internals)
    y, _ = fn.apply(internals.ones(2), 2.0, internals.ones(2))
    assert y.grad_fn is None and not y.requires_grad


def test_function_materializes_missing_gradients():
    for lib in (torch, internals):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3
            @staticmethod
            def backward(ctx, a, b):
                assert b is not None and b.tolist() == [0.0, 0.0]
                return a * 2 + b * 3
        x = lib.ones(2, requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_function_saved_tensors_are_freed():
    for lib in (torch, internals):
        fn = make_function(lib)
        x = lib.ones(2, requires_grad=True)
        y, _ = fn.apply(x, 1.0, lib.ones(2))
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.sum().backward()


def test_function_wrong_number_of_gradients():
    messages = []
    for lib in (torch, internals):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y
            @staticmethod
            def backward(ctx, g):
                return g
        with pytest.raises(RuntimeError) as e:
            Bad.apply(lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)).sum().backward()
        messages.append(str(e.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("fn", [
    lambda lib, x, w: (x * w).tanh().sum(0),
    lambda lib, x, w: x.mm(w.t()).softmax(1),
    lambda lib, x, w: (x.exp() / (1 + w * w)).log_softmax(0).amax(1),
    lambda lib, x, w: lib.where(x > 0, x, w).prod(1),
    lambda lib, x, w: x.unfold(1, 2, 1).diagonal(0, 1, 2).sqrt(),
    lambda lib, x, w: x.as_strided((2, 2), (1, 1)) * w[0, :2],
])
def test_gradcheck_agrees_with_torch(fn):
    gen = torch.Generator().manual_seed(0)
    x0 = torch.rand(2, 3, generator=gen, dtype=torch.float64) + 0.1
    w0 = torch.randn(2, 3, generator=gen, dtype=torch.float64)
    theirs = torch.autograd.gradcheck(lambda x, w: fn(torch, x, w), (x0.requires_grad_(), w0.requires_grad_()))
    x, w = internals.from_torch(x0.detach()).requires_grad_(), internals.from_torch(w0.detach()).requires_grad_()
    assert internals.autograd.gradcheck(lambda x, w: fn(internals, x, w), (x, w)) is theirs is True


def test_gradcheck_catches_a_wrong_backward():
    for lib in (torch, internals):
        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x
            @staticmethod
            def backward(ctx, g):
                return g                      # should be 2 * x * g
        x = lib.tensor([0.3, 0.7], dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False
        with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
            lib.autograd.gradcheck(Wrong.apply, (x,))



def test_gradgradcheck_passes_layers_and_catches_a_wrong_double_backward():
    """gradgradcheck checks the first gradients' own gradients; a Function whose backward is
    right but not differentiable through (it uses the saved input detached) fails it in both."""
    for lib in (torch, internals):
        F = lib.nn.functional
        x = lib.tensor([[0.3, -0.7, 1.2], [2.0, -0.1, 0.5]], dtype=lib.float64, requires_grad=True)
        for fn in (lambda x, F=F: F.layer_norm(x, (3,)), lambda x, F=F: F.log_softmax(x, 1),
                   lambda x, F=F: F.elu(x, 0.5), lambda x, F=F: F.hardtanh(x * 3)):
            assert lib.autograd.gradgradcheck(fn, (x,)) is True

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 3 * x.detach() ** 2 * g           # right once, constant for the second order
        assert lib.autograd.gradcheck(Cube.apply, (x,)) is True
        assert lib.autograd.gradgradcheck(Cube.apply, (x,), raise_exception=False) is False


def test_gradcheck_warns_of_single_precision_inputs():
    caught = []
    for lib in (torch, internals):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision") as record:
            lib.autograd.gradcheck(lambda x: x * 2, (x,), atol=1e-2, raise_exception=False)
        caught.append([str(w.message) for w in record])
    assert caught[0] == caught[1]

@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_gives_the_same_gradients(reentrant):
    def block(lib, w):
        return lambda a: ((a * w).tanh() * a).exp().sum(0)
    grads = {}
    for lib, ckpt in ((torch, torch_checkpoint), (internals, our_checkpoint), (internals, None)):
        x = lib.tensor([[0.5, -1.0], [0.25, 2.0]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.3, -0.2], dtype=lib.float64, requires_grad=True)
        out = ckpt(block(lib, w), x, use_reentrant=reentrant) if ckpt else block(lib, w)(x)
        (out * out).sum().backward()
        grads[(lib.__name__, ckpt is None)] = (sum(x.grad.tolist(), []), w.grad.tolist())
    assert grads[("internals", False)] == grads[("internals", True)]
    for o, t in zip(grads[("internals", False)], grads[("torch", False)]):
        assert o == pytest.approx(t, rel=1e-12)


def test_reentrant_checkpoint_records_nothing_inside():
    """Inside the checkpoint nothing is recorded: the only node is the checkpoint's own."""
    x = internals.ones(3, requires_grad=True)
    out = our_checkpoint(lambda a: a.exp().tanh().sigmoid(), x, use_reentrant=True)
    assert out.grad_fn.name() == "CheckpointFunctionBackward"
    assert [n.name() for n, _ in out.grad_fn.next_functions] == ["torch::autograd::AccumulateGrad"]


def _graph_names(node):
    """The names of a graph's nodes, depth first along next_functions."""
    if node is None:
        return []
    return [node.name()] + [n for child, _ in node.next_functions for n in _graph_names(child)]


def test_non_reentrant_checkpoint_records_the_real_graph_and_keeps_no_activations():
    """use_reentrant=False: the graph is the segment's own (torch's names, as without checkpointing),
    its saved tensors are packed away, and backward runs the segment once more, whatever the number
    of tensors it unpacks."""
    names, runs = {}, {}
    for lib, ckpt in ((torch, torch_checkpoint), (internals, our_checkpoint)):
        calls = []

        def segment(a, calls=calls):
            calls.append(1)
            return a.exp().tanh().sigmoid() * a

        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        out = ckpt(segment, x, use_reentrant=False)
        names[lib] = _graph_names(out.grad_fn)
        out.sum().backward()
        runs[lib] = len(calls)
    assert names[internals] == names[torch] == _graph_names((torch.ones(1, requires_grad=True).exp().tanh()
                                                             .sigmoid() * torch.ones(1, requires_grad=True)).grad_fn)
    assert runs[internals] == runs[torch] == 2


def test_checkpoint_without_use_reentrant_warns_as_torch_does():
    for lib, ckpt in ((torch, torch_checkpoint), (internals, our_checkpoint)):
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            ckpt(lambda a: a * 2, lib.ones(2, requires_grad=True))


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("preserve", [True, False])
def test_checkpoint_replays_the_forward_random_draws(reentrant, preserve):
    """A dropout inside the checkpoint: with ``preserve_rng_state`` the recomputation draws the
    forward's mask again (the gradient is the one without checkpointing) and the generator then
    goes on from where it was; without it the recomputation draws the next mask, as torch's does.
    Dropout's masks are torch's stream, so the gradients and the draw after backward are equal."""
    results = {}
    for lib, ckpt in ((torch, torch_checkpoint), (internals, our_checkpoint)):
        lib.manual_seed(0)
        x = lib.linspace(-1.0, 1.0, 12, dtype=lib.float64).reshape(3, 4).requires_grad_()
        out = ckpt(lambda a, lib=lib: lib.nn.functional.dropout(a.exp(), 0.5) * a, x, use_reentrant=reentrant,
                   preserve_rng_state=preserve)
        out.sum().backward()
        results[lib] = (out.detach(), x.grad, lib.rand(3).tolist())
    # exp's last bit follows the CPU's vector math: the values within ulps, the next draws exact
    assert_same_tree(results[internals], results[torch], lambda o, t: assert_same(o, t, ulps=LIBM_ULPS))


def test_non_reentrant_checkpoint_passes_keyword_arguments():
    """use_reentrant=False hands keyword arguments to the function (and to its recomputation);
    the reentrant one refuses them with torch's ValueError."""
    grads = {}
    for lib, ckpt in ((torch, torch_checkpoint), (internals, our_checkpoint)):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        ckpt(lambda a, scale: (a * scale).exp(), x, scale=3.0, use_reentrant=False).sum().backward()
        grads[lib] = x.grad.tolist()
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            ckpt(lambda a, scale: a * scale, x, scale=3.0, use_reentrant=True)
    assert grads[internals] == grads[torch]


def test_checkpoint_is_an_attribute_of_utils_after_import():
    """``torch.utils.checkpoint.checkpoint`` works after a bare ``import torch``."""
    assert internals.utils.checkpoint.checkpoint is our_checkpoint
    assert torch.utils.checkpoint.checkpoint is torch_checkpoint


def test_saved_tensors_hooks_pack_and_unpack_what_torch_does():
    """The hooks see the same saved tensors in the same order, and whatever unpack returns is what
    backward computes with."""
    seen, grads = {}, {}
    for lib in (torch, internals):
        packed = []

        def pack(t, packed=packed):
            packed.append(t.tolist())
            return t.tolist()

        def unpack(values, lib=lib):
            return lib.tensor(values) * 2      # backward sees doubled saved values

        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x.exp() * x).sum()
        y.backward()
        seen[lib], grads[lib] = packed, x.grad.tolist()
    assert seen[internals] == seen[torch]
    assert grads[internals] == pytest.approx(grads[torch], rel=1e-6)


def _second_gradients(lib, wrap):
    """Gradients of the squared gradients of tanh(linear(x)) * x wrt x and the layer's weight, the
    forward run through ``wrap``: the saved inputs (x, the weight, a non-leaf) must keep their
    places in the graph for the second pass to reach them."""
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 3).double()
    x = lib.linspace(-1.5, 2.0, 6, dtype=lib.float64).reshape(2, 3).requires_grad_()
    out = wrap(lib, lambda t: layer(t).tanh() * t, x)
    grads = lib.autograd.grad(out.sum(), [x, layer.weight], create_graph=True)
    total = sum((g * g).sum() for g in grads)
    return [g.flatten().tolist() for g in lib.autograd.grad(total, [x, layer.weight, layer.bias])]


@pytest.mark.parametrize("wrap", [
    lambda lib, f, x: f(x),
    lambda lib, f, x: _under_identity_hooks(lib, f, x),
    lambda lib, f, x: lib.utils.checkpoint.checkpoint(f, x, use_reentrant=False),
], ids=["plain", "identity-hooks", "non-reentrant-checkpoint"])
def test_second_gradients_through_tensors_saved_by_hooks(wrap):
    """An input a node keeps through saved_tensors_hooks comes back from unpack with its own
    grad_fn (or its leaf's accumulator), as torch's SavedVariable::unpack gives it: a gradient of
    the gradient then flows through it. Before, it came back without history and the second
    gradients of a non-reentrant checkpoint were silently wrong."""
    ours, theirs = _second_gradients(internals, wrap), _second_gradients(torch, wrap)
    for o, t in zip(ours, theirs):
        assert o == pytest.approx(t, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("run", [
    lambda lib, out, x: lib.autograd.grad(out, [x]),
    lambda lib, out, x: out.backward(inputs=[x]),
], ids=["grad", "backward-inputs"])
def test_reentrant_checkpoint_refuses_a_backward_for_some_inputs_as_torch(run):
    """The reentrant checkpoint's inner backward cannot reach only the asked inputs: torch refuses
    (``_is_checkpoint_valid``), a plain ``backward()`` still works."""
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        ckpt = lib.utils.checkpoint.checkpoint
        ckpt(lambda t: (t * t).sum(), x, use_reentrant=True).backward()
        with pytest.raises(RuntimeError) as caught:
            run(lib, ckpt(lambda t: (t * t).sum(), x, use_reentrant=True), x)
        return [x.grad.tolist(), str(caught.value), lib.autograd._is_checkpoint_valid()]
    assert program(internals) == program(torch)


@pytest.mark.parametrize("segments, reentrant", [(2, False), (3, True), (1, False), (4, False)])
def test_checkpoint_sequential_gives_torchs_graph_and_gradients(segments, reentrant):
    """Five layers in ``segments`` checkpointed runs (the last run plain): the output's grad_fn
    and the gradients of the input and of every parameter."""
    def program(lib):
        lib.manual_seed(0)
        chain = lib.nn.Sequential(*[lib.nn.Linear(3, 3) if i % 2 == 0 else lib.nn.Tanh() for i in range(5)]).double()
        x = lib.linspace(-1.0, 1.0, 6, dtype=lib.float64).reshape(2, 3).requires_grad_()
        out = lib.utils.checkpoint.checkpoint_sequential(chain, segments, x, use_reentrant=reentrant)
        out.sum().backward()
        grads = [p.grad.tolist() for p in chain.parameters()]
        return [type(out.grad_fn).__name__, out.tolist(), x.grad.tolist(), grads]
    assert _close(program(internals), program(torch))


def _close(ours, theirs):
    """Nested lists of floats equal within 1e-12 (the same products, grouped alike); names equal."""
    if isinstance(theirs, list):
        return len(ours) == len(theirs) and all(_close(o, t) for o, t in zip(ours, theirs))
    if isinstance(theirs, float):
        return abs(ours - theirs) <= 1e-12 * max(1.0, abs(theirs))
    return ours == theirs


def _under_identity_hooks(lib, f, x):
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        return f(x)


def test_a_packed_saved_tensor_is_released_after_backward():
    for lib in (torch, internals):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp().sum()
        y.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            y.backward()


@pytest.mark.parametrize("returns", ["input", "view"])
def test_a_custom_functions_view_output_refuses_in_place_writes_as_torchs(returns):
    """An input returned as it is comes back as a view of it (``_view_as_self_with_no_grad``), and
    a view made in the forward stays one; writing either in place would replace the Function's
    backward by a view's, so torch refuses, with its message naming the Function."""
    def program(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x if returns == "input" else x.view_as(x)

            @staticmethod
            def backward(ctx, g):
                return 2 * g
        a = lib.ones(2, requires_grad=True)
        y = Twice.apply(a * 1)
        assert y._is_view() and y.grad_fn.name() == "TwiceBackward"
        (y * 1).sum().backward()
        assert a.grad.tolist() == [2.0, 2.0]
        y = Twice.apply(a * 1)
        with pytest.raises(RuntimeError) as caught:
            y.relu_()
        return str(caught.value)
    assert program(internals) == program(torch)


def test_a_full_backward_hook_refuses_an_in_place_layer_after_it_as_torchs():
    """A full backward hook wraps the module's output in BackwardHookFunction, which returns it as
    it is: an in-place ReLU on that output is the view+inplace torch refuses."""
    def program(lib):
        relu = lib.nn.ReLU(inplace=True)
        lin = lib.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda *args: None)
        with pytest.raises(RuntimeError) as caught:
            relu(lin(lib.ones(1, 2, requires_grad=True)))
        return str(caught.value)
    assert program(internals) == program(torch)


def test_custom_function_node_repr_names_its_module():
    """The node class of an autograd.Function is a Python class in torch: its repr is object's,
    with the module (``<torch.autograd.function.MyFnBackward object at 0x...>``)."""
    def make(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2
        return Double.apply(lib.ones(1, requires_grad=True)).grad_fn
    ours, theirs = make(internals), make(torch)
    assert repr(ours).split(" at ")[0] == repr(theirs).split(" at ")[0].replace("torch.", "internals.")
    assert repr(internals.ones(1, requires_grad=True).exp().grad_fn).startswith("<ExpBackward0 object at ")
