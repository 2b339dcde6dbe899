"""Autograd misuse refused as torch refuses it: saved tensors, versions, hooks, custom Functions.

Each case differed from torch 2.13 before it was fixed."""
import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same, assert_same_error, same_error, same_or_same_error

import internals


def same_first_error_line(fn):
    """Both libraries raise the same class with the same first line."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours).splitlines()[0] == str(theirs).splitlines()[0]


# ----------------------------------------------------------------------------- autograd
def _function_returning(lib, grads):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return grads(g)
    a = lib.ones(2, requires_grad=True)
    F.apply(a).sum().backward()
    return a.grad


def test_a_function_returning_too_many_gradients_is_refused():
    same_first_error_line(lambda lib: _function_returning(lib, lambda g: (g, g)))
    # ...unless the extra ones are None
    extra_nones = lambda g: (g, None, None)     # noqa: E731
    assert_same(_function_returning(internals, extra_nones), _function_returning(torch, extra_nones))


def test_backward_with_inputs():
    def run(lib):
        a = lib.ones(2, requires_grad=True)
        b = a * 2
        (b * b).sum().backward(inputs=[b])
        return b.grad, b.retains_grad, a.grad
    (b_ours, kept_ours, a_ours), (b_theirs, kept_theirs, a_theirs) = run(internals), run(torch)
    assert_same(b_ours, b_theirs)
    assert (kept_ours, a_ours) == (kept_theirs, a_theirs) == (True, None)
    same_first_error_line(lambda lib: (lib.ones(2, requires_grad=True) * 2).sum().backward(inputs=[]))


@pytest.mark.parametrize("mode", [0, 1, "yes", None])
def test_set_grad_enabled_takes_a_bool(mode):
    try:
        same_first_error_line(lambda lib: lib.set_grad_enabled(mode))
    finally:
        torch.set_grad_enabled(True)
        internals.set_grad_enabled(True)


# ----------------------------------------------------------------------------- saved index tensors
def _index_then_mutate(L, mutate):
    x = L.arange(12.).reshape(3, 4).requires_grad_()
    i = L.tensor([0, 2])
    m = L.tensor([True, False, True, False])
    y = x[i] + x[:, m].sum()
    mutate(i, m)
    y.sum().backward()


@pytest.mark.parametrize("mutate", [lambda i, m: i.add_(1), lambda i, m: m.fill_(False),
                                    lambda i, m: i.__setitem__(0, 1)])
def test_an_index_mutated_before_backward_is_caught_by_its_version(mutate):
    """``IndexBackward0`` keeps its indices as SavedVariables: the gradient used the new values
    (or an IndexError) where torch raises its version-counter error."""
    same_error(lambda L: _index_then_mutate(L, mutate))


def test_index_put_checks_its_saved_indices_too():
    def run(L):
        v = L.ones(2, requires_grad=True)
        i = L.tensor([0, 2])
        y = L.zeros(4).index_put((i,), v)
        i.add_(1)
        y.sum().backward()
    same_error(run)


def test_saved_indices_are_a_tuple_and_freed_by_backward():
    def saved(L):
        x = L.arange(6.).requires_grad_()
        y = x[L.tensor([0, 2])]
        return y.grad_fn._saved_indices
    ours, theirs = saved(internals), saved(torch)
    assert type(ours) is type(theirs) is tuple
    assert_same(ours[0], theirs[0])

    def twice(L):
        x = L.arange(6.).requires_grad_()
        y = x[L.tensor([0, 2])]
        y.sum().backward()
        y.sum().backward()
    same_error(twice)


def same(fn, **kw):
    assert_same(fn(internals), fn(torch), **kw)


@pytest.mark.parametrize("shape", [(1,), (), (2, 3)])
@pytest.mark.parametrize("kw", [{}, {"correction": 0}, {"correction": 2}, {"dim": -1, "correction": 3}])
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_and_std_backward_without_degrees_of_freedom(shape, kw, op):
    """``ones(1).std().backward()`` raised ZeroDivisionError; torch's gradient is NaN where x is
    its mean and inf elsewhere (full reductions), 2 / 0 = inf (over a dim)."""
    if "dim" in kw and not shape:
        kw = {"correction": kw["correction"]}

    def run(L):
        x = L.tensor(np.arange(float(np.prod(shape))).reshape(shape) % 2, dtype=L.float32, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")         # "degrees of freedom is <= 0"
            getattr(x, op)(**kw).sum().backward()
        return x.grad
    same(run)


@pytest.mark.parametrize("call", [lambda L: L.tensor([1], requires_grad=True),
                                  lambda L: L.tensor(True, requires_grad=True),
                                  lambda L: L.tensor([1.], dtype=L.int32, requires_grad=True)])
def test_tensor_with_requires_grad_of_an_integral_dtype(call):
    same_error(call)


@pytest.mark.parametrize("flag", [1, 0, None, 1.0, np.bool_(True)], ids=["1", "0", "None", "1.0", "numpy_bool"])
def test_requires_grad_takes_only_a_bool(flag):
    """torch's argument parser reads ``requires_grad_``'s flag as a bool: a number is a TypeError,
    positional or keyword, not a truth value."""
    same_error(lambda L: L.ones(2).requires_grad_(flag))
    same_error(lambda L: L.ones(2).requires_grad_(requires_grad=flag))


@pytest.mark.parametrize("call", [lambda t: t.requires_grad_(), lambda t: t.requires_grad_(True),
                                  lambda t: t.requires_grad_(False), lambda t: t.requires_grad_(requires_grad=False),
                                  lambda t: t.requires_grad_(True).requires_grad_(requires_grad=False)])
def test_requires_grad_with_a_bool_or_the_default(call):
    ours, theirs = call(internals.ones(2)), call(torch.ones(2))
    assert ours.requires_grad == theirs.requires_grad and ours.is_leaf and theirs.is_leaf


def _set_flag(t, value):
    t.requires_grad = value
    return t


@pytest.mark.parametrize("call", [
    lambda L: _set_flag(L.ones(2), 1), lambda L: _set_flag(L.ones(2), None),
    lambda L: _set_flag(L.ones(2), np.bool_(1)),
    lambda L: _set_flag(L.ones(2, requires_grad=True) * 2, True),       # the property refuses a non-leaf either way
    lambda L: _set_flag(L.ones(2, requires_grad=True) * 2, False),
    lambda L: _set_flag(L.ones(2, dtype=L.int64), True),
    lambda L: (L.ones(2, requires_grad=True) * 2).requires_grad_(False),
], ids=["int", "None", "numpy_bool", "non_leaf_true", "non_leaf_false", "integral", "method_non_leaf_false"])
def test_setting_requires_grad_refuses_as_torch(call):
    same_error(call)


def test_requires_grad_true_on_a_computed_tensor_changes_nothing():
    """The method, unlike the property, accepts True on a non-leaf: it requires grad already."""
    for lib in (internals, torch):
        y = lib.ones(2, requires_grad=True) * 2
        assert y.requires_grad_(True) is y and y.requires_grad and not y.is_leaf


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([1.0], requires_grad=1), lambda L: L.tensor([1.0], requires_grad=None),
    lambda L: L.ones(2).new_tensor([1.0], requires_grad=1), lambda L: L.nn.Parameter(L.ones(1), requires_grad=1),
    lambda L: L.nn.Linear(1, 1).requires_grad_(1),
], ids=["tensor", "tensor_None", "new_tensor", "Parameter", "Module.requires_grad_"])
def test_the_factories_take_only_a_bool_flag(call):
    same_error(call)


def test_the_legacy_variable_constructor_takes_a_number_as_the_flag():
    """``Variable(data, requires_grad=1)`` parses the flag as a C char: any number is taken."""
    ours = internals.autograd.Variable(internals.ones(2), requires_grad=1)
    theirs = torch.autograd.Variable(torch.ones(2), requires_grad=1)
    assert ours.requires_grad and theirs.requires_grad


def test_a_grad_of_another_dtype_gets_torchs_whole_message():
    def assign(L):
        L.ones(3, requires_grad=True).grad = L.ones(3, dtype=L.float64)
    same_error(assign)


# ----------------------------------------------------------------------------- saved integer outputs
@pytest.mark.parametrize("forward", [
    lambda L, x: L.nn.functional.max_pool2d(x[None, None], 2, return_indices=True),
    lambda L, x: x.sort(1), lambda L, x: x.topk(2, 1), lambda L, x: x.max(1), lambda L, x: x.kthvalue(2, 1),
    lambda L, x: x.median(1), lambda L, x: x.mode(1),
])
@pytest.mark.parametrize("mutate", [lambda i: i.zero_(), lambda i: i.fill_(100), lambda i: i.add_(0)])
def test_indices_written_before_backward_are_caught_without_naming_a_node(forward, mutate):
    """Indices have no history, so torch's version error names no node for them ("which is
    output 0 of Max" was added); the backward never reads the new values."""
    def run(L):
        x = L.arange(16.).reshape(4, 4).requires_grad_()
        values, indices = forward(L, x)
        mutate(indices)
        values.sum().backward()
    same_error(run)


def test_lerp_gradient_through_a_promoted_weight():
    def run(L):
        a = L.ones(2, requires_grad=True)
        w = L.tensor(0.3, dtype=L.float64, requires_grad=True)
        r = L.lerp(a, L.zeros(2), w)
        r.sum().backward()
        return r.detach(), a.grad, w.grad, r.grad_fn.name()
    same_or_same_error(run)


@pytest.mark.parametrize("call", [
    lambda L: L.cat([L.ones(2, 3, dtype=L.complex64), L.ones(2, 3, requires_grad=True)], 0),
    lambda L: L.stack([L.ones(3, dtype=L.complex64), L.ones(3, requires_grad=True)]),
    lambda L: L.ones(2, requires_grad=True) * 1j,
    lambda L: L.ones(2, requires_grad=True).to(L.complex64),
])
def test_a_complex_result_in_a_graph_is_recorded_not_detached(call):
    """The silent one: torch records the complex result in the graph; the package once returned
    it without ``requires_grad``, so a later backward would skip it. Now it records the same node,
    and the real leaf gets torch's (real) gradient."""
    results = []
    for L in (torch, internals):
        out = call(L)
        leaf = next(t for t in _leaves(out) if t.requires_grad)
        (g,) = L.autograd.grad((out.abs() ** 2).sum(), leaf)
        results.append((type(out.grad_fn).__name__, g))
    (node_t, g_t), (node_i, g_i) = results
    assert node_i == node_t
    assert_same(g_i, g_t)
    with internals.no_grad():
        assert not call(internals).requires_grad


def _leaves(out):
    """The leaf tensors behind ``out``'s graph (AccumulateGrad's ``variable``)."""
    found, stack = [], [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if hasattr(node, "variable"):
            found.append(node.variable)
        stack += [n for n, _ in node.next_functions]
    return found


# ----------------------------------------------------------------------------- custom autograd.Function
def function(L, forward, backward=lambda ctx, *grads: grads[0] if len(grads) == 1 else grads):
    return type("Fn", (L.autograd.Function,), {"forward": staticmethod(forward),
                                                 "backward": staticmethod(backward)})


def _double_in_place(ctx, a):
    a.mul_(2)
    ctx.mark_dirty(a)
    return a


def test_mark_dirty_returns_the_input_itself_with_its_history_rebased():
    """The package returned a new tensor, left the input's grad_fn and version as they were."""
    def run(L):
        x = L.arange(1., 4.).requires_grad_()
        y = x * 1
        z = function(L, _double_in_place, lambda ctx, g: g * 2).apply(y)
        seen = (z is y, type(y.grad_fn).__name__, y._version)
        z.sum().backward()
        return seen, x.grad
    (ours, ours_grad), (theirs, theirs_grad) = run(internals), run(torch)
    assert ours == theirs == (True, "FnBackward", 2)
    assert_same(ours_grad, theirs_grad)


def test_mark_dirty_of_a_view_rebases_its_base():
    def run(L):
        x = L.arange(1., 4.).requires_grad_()
        y = x * 1
        v = y[:2]
        r = function(L, _double_in_place, lambda ctx, g: g * 3).apply(v)
        seen = (r is v, type(y.grad_fn).__name__.rsplit(":", 1)[-1], y._version)
        r.sum().backward()
        return seen, x.grad, y.detach()
    ours, theirs = run(internals), run(torch)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1])
    assert_same(ours[2], theirs[2])


def _dirty_and_one_more(ctx, a):
    ctx.mark_dirty(a)
    return a, a * 3


@pytest.mark.parametrize("call", [
    lambda L: function(L, _double_in_place).apply(L.ones(3, requires_grad=True)),
    lambda L: function(L, lambda ctx, a: (ctx.mark_dirty(a), a * 1)[1]).apply(L.ones(3, requires_grad=True) * 1),
    lambda L: function(L, lambda ctx, a: (ctx.mark_dirty(a), a * 1)[1]).apply(L.ones(3)),
    lambda L: function(L, lambda ctx, a: (ctx.mark_dirty(3), a * 1)[1]).apply(L.ones(3)),
    lambda L: function(L, lambda ctx, a: (ctx.mark_non_differentiable(3), a * 1)[1]).apply(L.ones(3) * 1),
    lambda L: function(L, _dirty_and_one_more).apply((L.ones(3, requires_grad=True) * 1)[:2]),
    lambda L: function(L, lambda ctx, a: (ctx.save_for_backward(a, 3), a * 1)[1]).apply(L.ones(3, requires_grad=True)),
    lambda L: function(L, lambda ctx, a: (ctx.save_for_backward(3, a), a * 1)[1]).apply(L.ones(3)),
    lambda L: function(L, lambda ctx, a: (ctx.set_materialize_grads(0), a * 1)[1]).apply(L.ones(3)),
])
def test_what_forward_marks_is_checked_as_torch_checks_it(call):
    """``_mark_dirty``, ``_parse_non_differentiable``, ``_wrap_outputs`` and ``_save_variables``:
    a leaf modified in place, a dirty input not returned, a marked non-tensor (torch's message
    stops after "argument "), a dirty view among several outputs, a non-tensor saved while a
    graph is recorded (without one torch saves nothing and says nothing)."""
    same_or_same_error(call)


@pytest.mark.parametrize("backward, args", [
    (lambda ctx, g: "a", ("x",)),
    (lambda ctx, g: [g], ("x",)),
    (lambda ctx, g: (g, g), ("x", 2.0)),
    (lambda ctx, g: (g, 3), ("x", None)),
    (lambda ctx, g: (g * 2, None), ("x", 2.0)),
])
def test_what_backward_returns_is_checked_as_torch_checks_it(backward, args):
    """``PyNode::apply``: a gradient for an input that was not a tensor, then one that is not a
    tensor, are errors; the package accepted the first and failed on the second with an
    AttributeError."""
    def run(L):
        x = L.arange(1., 4.).requires_grad_()
        inputs = [x if a == "x" else a for a in args]
        function(L, lambda ctx, a, *rest: a * 2, backward).apply(*inputs).sum().backward()
        return x.grad
    same_or_same_error(run)


@pytest.mark.parametrize("dirty", [False, True])
def test_an_input_returned_without_a_graph_is_a_detached_alias(dirty):
    """Under no_grad the package returned the input itself, still requiring grad."""
    def run(L):
        forward = _double_in_place if dirty else (lambda ctx, a: a)
        x = L.arange(1., 4.).requires_grad_()
        with L.no_grad():
            r = function(L, forward).apply(x)
        z = L.arange(1., 4.)
        s = function(L, forward).apply(z)
        return (r is x, r.requires_grad, r.is_leaf, x._version, s is z, s._base is z, z._version)
    assert run(internals) == run(torch)


def _times_k(L, *, vjp=False, backward=True):
    """A Function computing a * k whose ctx is filled by setup_context; its backward is called
    ``backward``, ``vjp`` or both."""
    def forward(a, k=3):
        return a * k

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.k, ctx.seen = inputs[1], (len(inputs), L.is_grad_enabled())

    def grad(ctx, g):
        return g * ctx.k, None
    body = {"forward": staticmethod(forward), "setup_context": staticmethod(setup_context)}
    body.update({name: staticmethod(grad) for name, on in (("backward", backward), ("vjp", vjp)) if on})
    return type("TimesK", (L.autograd.Function,), body)


@pytest.mark.parametrize("vjp, backward", [(False, True), (True, False), (True, True)])
def test_setup_context_and_vjp(vjp, backward):
    """A forward without ctx plus ``setup_context`` (which sees the inputs with their defaults,
    grad mode off), and ``vjp`` as the other name of ``backward`` (not both): the package
    passed ctx to such a forward and knew no vjp."""
    def run(L):
        x = L.arange(1., 4.).requires_grad_()
        y = _times_k(L, vjp=vjp, backward=backward).apply(x)
        y.sum().backward()
        return y.grad_fn.seen, x.grad
    same_or_same_error(run)


# ----------------------------------------------------------------------------- autograd misuse
def _grad_of_itself(x):
    x.grad = x


@pytest.mark.parametrize("call", [
    lambda L: L.autograd.grad((L.ones(3, requires_grad=True) * 2).sum(), []),
    lambda L: L.autograd.grad(L.ones(()), []),
    lambda L: _grad_of_itself(L.ones(3, requires_grad=True)),
])
def test_autograd_misuse_is_refused(call):
    same_error(call)


@pytest.mark.parametrize("make", [lambda L, x: L.view_as_complex(x), lambda L, x: L.complex(x, x)])
def test_a_complex_view_or_complex_of_tensors_that_require_grad_is_recorded_not_detached(make):
    """torch records ``ViewAsComplexBackward0`` and ``ComplexBackward0``; the package once dropped
    requires_grad. Now it records the same nodes, with torch's gradients."""
    results = []
    for L in (torch, internals):
        x = L.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        out = make(L, x)
        (g,) = L.autograd.grad((out * (1 - 2j)).real.sum() + out.abs().sum(), x)
        results.append((type(out.grad_fn).__name__, g))
    (node_t, g_t), (node_i, g_i) = results
    assert node_i == node_t
    assert_same(g_i, g_t)
    with internals.no_grad():
        assert_same(make(internals, internals.ones(2, 2, requires_grad=True)),
                    make(torch, torch.ones(2, 2, requires_grad=True)).detach())


def test_the_angle_of_a_real_tensor_keeps_its_graph():
    """``AngleBackward0``: zeros for a real input (torch's ``angle_backward``); the package's
    result did not require grad."""
    def run(L):
        x = L.tensor([-1., 0., 2., -0., float("nan")], requires_grad=True)
        y = x.angle()
        y.sum().backward()
        return y, x.grad
    same_or_same_error(run)


# ----------------------------------------------------------------------------- out= and autograd
@pytest.mark.parametrize("call", [
    lambda L, rg: L.eq(L.ones(2), L.ones(2), out=rg(L.bool)), lambda L, rg: L.lt(L.ones(2), 1, out=rg(L.float32)),
    lambda L, rg: L.ge(L.ones(2, requires_grad=True), 1, out=L.empty(0, dtype=L.bool)),
    lambda L, rg: L.argmax(L.ones(2, 2), 0, out=rg(L.float32)),
    lambda L, rg: L.argmin(L.ones(2, requires_grad=True), out=L.empty(0, dtype=L.int64)),
    lambda L, rg: L.zeros(2, out=rg(L.float32)), lambda L, rg: L.mm(L.ones(2, 2), L.ones(2, 2), out=rg(L.float32)),
])
def test_out_of_a_non_differentiable_operator_may_require_grad(call):
    """torch generates no out= grad check for operators whose outputs are never differentiable
    (comparisons, argmax): the out is written, or refused for its dtype. internals refused it
    for requiring grad."""
    same_or_same_error(lambda L: call(L, lambda d: L.empty(0, dtype=d, requires_grad=d.is_floating_point)))


def test_post_accumulate_grad_hooks_run_after_each_accumulation():
    def run(L):
        seen = []
        x = L.ones(3, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
        gone = x.register_post_accumulate_grad_hook(lambda p: seen.append(None))
        gone.remove()
        (x * 3).sum().backward()
        (x * 2).sum().backward()
        assert len(seen) == 2
        return seen[0], seen[1], x.grad
    same_or_same_error(run)


@pytest.mark.parametrize("call", [
    lambda L: (L.ones(3, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda p: None),
    lambda L: L.ones(3).register_post_accumulate_grad_hook(lambda p: None),
    lambda L: (lambda x: (x.register_post_accumulate_grad_hook(lambda p: p.grad), (x * 3).sum().backward()))(
        L.ones(3, requires_grad=True)),
])
def test_post_accumulate_grad_hooks_are_refused_as_torch_refuses(call):
    same_error(call)


# ----------------------------------------------------------------------------- autograd.grad's options
@pytest.mark.parametrize("allow_unused", [None, False, True])
@pytest.mark.parametrize("materialize_grads", [False, True])
@pytest.mark.parametrize("which", ["unused", "used", "not_a_leaf_input", "same_twice", "not_requiring"])
def test_grad_checks_materialize_grads_against_allow_unused_first(allow_unused, materialize_grads, which):
    """``materialize_grads=True`` with ``allow_unused=False`` is a ValueError before anything
    else; internals went on and raised the engine's RuntimeError, or returned."""
    def fn(L):
        x, z = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        y = (x * 3).sum()
        inputs = {"unused": [x, z], "used": [x], "not_a_leaf_input": [x, L.ones(2)], "same_twice": [x, x],
                  "not_requiring": [x]}[which]
        out = L.ones(1).sum() if which == "not_requiring" else y
        kwargs = {"materialize_grads": materialize_grads}
        if allow_unused is not None:
            kwargs["allow_unused"] = allow_unused
        return L.autograd.grad(out, inputs, **kwargs)
    same_or_same_error(fn)
