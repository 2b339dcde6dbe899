"""``torch.func``'s differentiation transforms against torch's: ``grad``, ``grad_and_value``,
``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd`` and ``hessian`` on many programs, composed with each other
and with ``vmap`` (per-sample gradients, ensembles over ``stack_module_state``), ``functionalize``,
and torch's errors for non-scalar outputs, bad ``argnums`` and bad structures."""
import pytest
import torch
from helpers import assert_same_tree, assert_within_ulps_of_largest, outcome, torch_on_one_thread

import internals


def _inputs(lib):
    g = lib.Generator().manual_seed(1)

    def draw(*size):
        return lib.randn(*size, generator=g, dtype=lib.float64)
    return {"x": draw(3), "y": draw(3), "m": draw(2, 3), "b": draw(4, 3), "s": draw(())}


def _check(program, ulps=64, exact_layout=True):
    """``program(lib, inputs)`` in both libraries: the same structure, layout, values within ``ulps`` of
    the largest (products, library math and the order of accumulation follow the CPU, and
    gradients sum terms that cancel), shapes, dtypes, and
    whether each result requires grad (a transform's results are not attached to a graph)."""
    def compare(o, t):
        assert_within_ulps_of_largest(o, t, ulps, exact_layout=exact_layout)
        assert o.requires_grad == t.requires_grad
    with torch_on_one_thread():
        theirs = program(torch, _inputs(torch))
    assert_same_tree(program(internals, _inputs(internals)), theirs, compare)


def _f(lib, x):
    return (x.sin() * x).sum()


def _two(x, y):
    return (x * y.exp()).sum() + (x ** 2).mean()


PROGRAMS = {
    "grad": lambda lib, d: lib.func.grad(lambda x: _f(lib, x))(d["x"]),
    "grad_scalar_input": lambda lib, d: lib.func.grad(lambda s: s.tanh() * s)(d["s"]),
    "grad_argnums_1": lambda lib, d: lib.func.grad(_two, argnums=1)(d["x"], d["y"]),
    "grad_argnums_tuple": lambda lib, d: lib.func.grad(_two, argnums=(0, 1))(d["x"], d["y"]),
    "grad_negative_argnum": lambda lib, d: lib.func.grad(_two, argnums=-1)(d["x"], d["y"]),
    "grad_dict_input": lambda lib, d: lib.func.grad(lambda p: (p["w"] @ p["v"]).pow(2).sum())(
        {"w": d["m"], "v": d["x"]}),
    "grad_has_aux": lambda lib, d: lib.func.grad(lambda x: ((x ** 3).sum(), x.cos()), has_aux=True)(d["x"]),
    "grad_unused_input": lambda lib, d: lib.func.grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))(d["x"], d["y"]),
    "grad_constant_output": lambda lib, d: lib.func.grad(lambda x: d["y"].sum())(d["x"]),
    "grad_and_value": lambda lib, d: lib.func.grad_and_value(lambda x: _f(lib, x))(d["x"]),
    "grad_and_value_aux": lambda lib, d: lib.func.grad_and_value(lambda x: (x.exp().sum(), {"a": x * 2}),
                                                                 has_aux=True)(d["x"]),
    "grad_of_grad": lambda lib, d: lib.func.grad(lambda x: lib.func.grad(lambda y: y.sin().sum())(x).sum())(d["x"]),
    "grad_of_grad_of_grad": lambda lib, d: lib.func.grad(lib.func.grad(lib.func.grad(lambda s: s.sin() * s)))(d["s"]),
    "vmap_grad_per_sample": lambda lib, d: lib.func.vmap(lib.func.grad(
        lambda w, x: ((x @ w.t()).tanh() ** 2).sum()), in_dims=(None, 0))(d["m"], d["b"]),
    "grad_of_vmap": lambda lib, d: lib.func.grad(lambda w: lib.func.vmap(lambda r: (r * w).sin().sum())(d["b"]).sum())(
        d["x"]),
    "vmap_grad_and_value": lambda lib, d: lib.func.vmap(lib.func.grad_and_value(lambda x: (x ** 2).sum()))(d["b"]),
    "vjp": lambda lib, d: (lambda out, fn: (out, fn(d["y"])))(*lib.func.vjp(lambda x: x.sin() * 2, d["x"])),
    "vjp_two_inputs": lambda lib, d: (lambda out, fn: fn(lib.ones(2, dtype=lib.float64)))(
        *lib.func.vjp(lambda m, x: m @ x, d["m"], d["x"])),
    "vjp_tuple_output": lambda lib, d: (lambda out, fn: (out, fn((d["y"], d["s"]))))(
        *lib.func.vjp(lambda x: (x.exp(), x.sum()), d["x"])),
    "vjp_has_aux": lambda lib, d: (lambda out, fn, aux: (out, fn(d["y"]), aux))(
        *lib.func.vjp(lambda x: (x * 3, x.sum()), d["x"], has_aux=True)),
    "vmap_vjp": lambda lib, d: lib.func.vmap(lambda v: lib.func.vjp(lambda x: x.sin(), d["x"])[1](v))(d["b"]),
    "jvp": lambda lib, d: lib.func.jvp(lambda x: x.sin() * x, (d["x"],), (d["y"],)),
    "jvp_two_inputs": lambda lib, d: lib.func.jvp(_two, (d["x"], d["y"]), (d["y"], d["x"])),
    "jvp_has_aux": lambda lib, d: lib.func.jvp(lambda x: (x.exp(), x + 1), (d["x"],), (d["y"],), has_aux=True),
    "jvp_matmul": lambda lib, d: lib.func.jvp(lambda m: m @ d["x"], (d["m"],), (lib.ones_like(d["m"]),)),
    "vmap_jvp": lambda lib, d: lib.func.vmap(lambda t: lib.func.jvp(lambda x: x.tanh(), (d["x"],), (t,))[1])(d["b"]),
    "linearize": lambda lib, d: (lambda out, fn: (out, fn(d["y"]), fn(d["x"])))(
        *lib.func.linearize(lambda x: x.sin() * x.sum(), d["x"])),
    "linearize_two_inputs": lambda lib, d: (lambda out, fn: fn(d["y"], d["m"]))(
        *lib.func.linearize(lambda x, m: (m @ x).exp(), d["x"], d["m"])),
    "input_requiring_grad_stays_attached": lambda lib, d: lib.autograd.grad(
        lib.func.grad(lambda x: (x.sin() * x).sum())(d["x"].requires_grad_()).sum(), d["x"]),
    "jvp_nn_functional": lambda lib, d: lib.func.jvp(lambda b: (
        b.softmax(-1), lib.nn.functional.layer_norm(b, (3,)),
        lib.nn.functional.batch_norm(b, None, None, training=True),
        lib.nn.functional.max_pool1d(b.unsqueeze(0), 2), lib.nn.functional.cross_entropy(b, lib.tensor([0, 2, 1, 1])),
        b.cumsum(0), lib.where(b > 0, b, b * b)), (d["b"],), (d["b"].flip(0),)),
    # forward formulas of losses, norms and matrix functions (tests/autograd/test_forward_ad.py has more)
    "jvp_losses_and_matrices": lambda lib, d: lib.func.jvp(lambda b: (
        lib.nn.functional.binary_cross_entropy_with_logits(b, d["b"].flip(1).sigmoid()), lib.nn.functional.glu(b, 0),
        lib.nn.functional.cosine_similarity(b, d["b"].flip(1)), b.renorm(2, 0, 1.0), *lib.std_mean(b, 1),
        lib.linalg.pinv(b), lib.linalg.svdvals(b), *lib.linalg.qr(b), lib.linalg.cholesky(b.mT @ b),
        # diagonally dominant: a solve's rounding grows with its condition number
        lib.linalg.solve(b[:3] + 4 * lib.eye(3, dtype=b.dtype), d["x"])), (d["b"],), (d["b"].flip(0),)),
    "vmap_grad_nn_functional": lambda lib, d: lib.func.vmap(lib.func.grad(lambda r: (
        lib.nn.functional.layer_norm(r, (3,)).sin().sum() + r.softmax(-1)[0] + lib.nn.functional.conv1d(
            r.view(1, 1, 3), d["m"][:1, :2].view(1, 1, 2)).sum() + lib.nn.functional.gelu(r).max())))(d["b"]),
    "jacrev": lambda lib, d: lib.func.jacrev(lambda x: x.sin() * x.sum())(d["x"]),
    "jacrev_matrix": lambda lib, d: lib.func.jacrev(lambda m: (m @ d["x"]).exp())(d["m"]),
    "jacrev_argnums": lambda lib, d: lib.func.jacrev(lambda m, x: m @ x, argnums=(0, 1))(d["m"], d["x"]),
    "jacrev_tuple_output": lambda lib, d: lib.func.jacrev(lambda x: (x.exp(), x.sum()))(d["x"]),
    "jacrev_chunked": lambda lib, d: lib.func.jacrev(lambda x: x.sin() * x.sum(), chunk_size=5)(d["x"]),
    "jacrev_chunked_argnums": lambda lib, d: lib.func.jacrev(lambda m, x: (m @ x).tanh(), argnums=(0, 1),
                                                             chunk_size=2)(d["m"], d["x"]),
    "jacrev_chunked_softmax": lambda lib, d: lib.func.jacrev(lambda x: (x.softmax(0), x.log_softmax(0)),
                                                             chunk_size=2)(d["x"]),
    "jacrev_chunked_unused_input": lambda lib, d: lib.func.jacrev(lambda m, x: x.exp(), argnums=(0, 1),
                                                                  chunk_size=4)(d["m"], d["x"]),
    "jacrev_has_aux": lambda lib, d: lib.func.jacrev(lambda x: (x.sin(), x.cos()), has_aux=True)(d["x"]),
    "jacfwd": lambda lib, d: lib.func.jacfwd(lambda x: x.sin() * x.sum())(d["x"]),
    "jacfwd_matrix": lambda lib, d: lib.func.jacfwd(lambda m: (m @ d["x"]).exp())(d["m"]),
    "jacfwd_argnums": lambda lib, d: lib.func.jacfwd(lambda m, x: m @ x, argnums=(0, 1))(d["m"], d["x"]),
    "jacfwd_scalar_output": lambda lib, d: lib.func.jacfwd(lambda x: (x ** 2).sum())(d["x"]),
    "hessian": lambda lib, d: lib.func.hessian(lambda x: (x.sin() * x).sum())(d["x"]),
    "hessian_argnums": lambda lib, d: lib.func.hessian(_two, argnums=1)(d["x"], d["y"]),
    "jacrev_of_jacrev": lambda lib, d: lib.func.jacrev(lib.func.jacrev(lambda x: x.exp().sum()))(d["x"]),
    "vmap_jacrev": lambda lib, d: lib.func.vmap(lib.func.jacrev(lambda x: x.sin() * x))(d["b"]),
    "vmap_hessian": lambda lib, d: lib.func.vmap(lib.func.hessian(lambda x: (x ** 3).sum()))(d["b"]),
}


# torch's Jacobians for several inputs or outputs are views into one tensor it splits: their
# offsets and strides are that tensor's, no promise of the API
LAYOUT_FREE = {"jacrev_argnums", "jacrev_tuple_output", "jacfwd_argnums", "jacrev_chunked_argnums",
               "jacrev_chunked_softmax", "jacrev_chunked_unused_input"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_transform_matches_torch(name):
    _check(PROGRAMS[name], exact_layout=name not in LAYOUT_FREE)


LOGCUMSUMEXP = {
    "hessian": lambda lib, d: lib.func.hessian(lambda m: m.logcumsumexp(1).sum())(d["m"]),
    "jacfwd_of_grad_weighted": lambda lib, d: lib.func.jacfwd(lib.func.grad(
        lambda m: (m.logcumsumexp(1) * lib.tensor([1., 0., -2.], dtype=lib.float64)).sum()))(d["m"]),
}


@pytest.mark.parametrize("name", LOGCUMSUMEXP)
def test_forward_over_reverse_through_logcumsumexp_is_finite(name):
    """jacfwd differentiates logcumsumexp's backward formula, whose log|grad| sits under a mask
    (a zero gradient's): finite, torch's values. torch's forward formula adds 1e-13 to a
    denominator near 1 and the package's jacfwd runs the exact double vjp, so the two differ
    by about that much of the largest value."""
    with torch_on_one_thread():
        theirs = LOGCUMSUMEXP[name](torch, _inputs(torch))
    ours = LOGCUMSUMEXP[name](internals, _inputs(internals))
    assert ours.isfinite().all()
    torch.testing.assert_close(ours.to_torch(), theirs, rtol=0, atol=1e-11 * theirs.abs().max().item())


def _model(lib, seed):
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()


def _per_sample_grads(lib):
    model = _model(lib, 0)
    params = {k: v.detach() for k, v in model.named_parameters()}
    data, target = _inputs(lib)["b"], lib.tensor([0, 1, 1, 0])

    def loss(p, x, t):
        out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, t.unsqueeze(0))
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, data, target)


def test_per_sample_gradients_of_a_model():
    """The reader's first use: ``vmap(grad(loss))`` over ``functional_call``."""
    _check(lambda lib, d: _per_sample_grads(lib))


def test_per_sample_gradients_sum_to_the_batch_gradient():
    grads = _per_sample_grads(internals)
    model = _model(internals, 0)
    data, target = _inputs(internals)["b"], internals.tensor([0, 1, 1, 0])
    internals.nn.functional.cross_entropy(model(data), target, reduction="sum").backward()
    for name, p in model.named_parameters():
        assert internals.allclose(grads[name].sum(0), p.grad, rtol=1e-12, atol=1e-12)


def _ensemble(lib):
    models = [_model(lib, seed) for seed in range(3)]
    params, buffers = lib.func.stack_module_state(models)
    x = _inputs(lib)["b"]

    def run(p, b):
        return lib.func.functional_call(models[0], (p, b), (x,))
    return lib.func.vmap(run)(params, buffers), params


def test_stack_module_state_and_an_ensemble_under_vmap():
    _check(lambda lib, d: _ensemble(lib)[0])
    params = _ensemble(internals)[1]
    assert all(p.is_leaf and p.requires_grad and p.shape[0] == 3 for p in params.values())


def test_stack_module_state_errors_as_torch():
    for program in (lambda lib: lib.func.stack_module_state([]),
                    lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()]),
                    lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Tanh()])):
        assert outcome(program, internals) == outcome(program, torch)


def _writes(x):
    y = x.clone()
    y.add_(1)
    x.mul_(2)
    return y.view(-1)[1:] * 3


def test_functionalize_gives_the_results_and_the_input_writes():
    def program(lib):
        x = lib.arange(6.0).reshape(2, 3)
        out = lib.func.functionalize(_writes)(x)
        return out, x
    _check(lambda lib, d: program(lib), ulps=0)


def test_functionalize_traces_to_a_graph_without_writes():
    from internals.fx.experimental.proxy_tensor import make_fx

    gm = make_fx(internals.func.functionalize(_writes))(internals.ones(2, 3))
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert "aten.add.Tensor" in targets and "aten.add_.Tensor" not in targets
    assert targets[-1] == "aten.copy_.default"      # the input's write, once, at the end


def _writes_through_views(x):
    flat = x.view(-1)[1:]
    flat.add_(1)
    return x.t(), flat.unsqueeze(0), x.diagonal(), x.t() + 1


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_functionalize_views_alias_unless_removed(remove):
    """``remove='mutations_and_views'``: every result a new contiguous tensor, as torch's
    ``{view}_copy`` operators make them; ``'mutations'`` leaves the views. The input's write
    happens either way."""
    def program(lib):
        x = lib.arange(4.0).reshape(2, 2)
        out = lib.func.functionalize(_writes_through_views, remove=remove)(x)
        return [(o.tolist(), o.stride(), o._base is not None) for o in out], x.tolist()
    assert program(internals) == program(torch)


def _error(program, message=True):
    ours, theirs = outcome(lambda lib: program(lib, _inputs(lib)), internals), \
        outcome(lambda lib: program(lib, _inputs(lib)), torch)
    assert theirs[:1] == ("error",)
    assert ours[:2] == theirs[:2], (ours, theirs)
    if message:
        assert ours[2] == theirs[2].replace("torch.", "internals.")


ERRORS = {
    "non_scalar_output": lambda lib, d: lib.func.grad(lambda x: x * 2)(d["x"]),
    "non_tensor_output": lambda lib, d: lib.func.grad(lambda x: 2.0)(d["x"]),
    "argnums_type": lambda lib, d: lib.func.grad(_two, argnums=[0])(d["x"], d["y"]),
    "argnums_out_of_range": lambda lib, d: lib.func.grad(_two, argnums=2)(d["x"], d["y"]),
    "argnums_duplicated": lambda lib, d: lib.func.grad(_two, argnums=(0, 0))(d["x"], d["y"]),
    "argnums_empty": lambda lib, d: lib.func.grad(_two, argnums=())(d["x"], d["y"]),
    "argnum_not_int": lambda lib, d: lib.func.grad(_two, argnums=(0, 1.0))(d["x"], d["y"]),
    "has_aux_not_pair": lambda lib, d: lib.func.grad(lambda x: x.sum(), has_aux=True)(d["x"]),
    "grad_of_integer_input": lambda lib, d: lib.func.grad(lambda x: x.sum())(lib.arange(3)),
    "grad_of_non_tensor": lambda lib, d: lib.func.grad(lambda x: x)(2.0),
    "jvp_primals_not_tuple": lambda lib, d: lib.func.jvp(lib.sin, d["x"], (d["x"],)),
    "jvp_structures_differ": lambda lib, d: lib.func.jvp(lib.mul, (d["x"], d["y"]), (d["x"],)),
    "vjp_integer_output": lambda lib, d: lib.func.vjp(lambda x: x.argmax(), d["x"]),
    "vjp_has_aux_not_pair": lambda lib, d: lib.func.vjp(lambda x: x * 2, d["x"], has_aux=True),
    "jacrev_chunk_size": lambda lib, d: lib.func.jacrev(lib.sin, chunk_size=0)(d["x"]),
    "jacrev_argnums_range": lambda lib, d: lib.func.jacrev(lib.sin, argnums=1)(d["x"]),
    "linearize_tangent_shape": lambda lib, d: lib.func.linearize(lib.sin, d["x"])[1](d["m"]),
    "linearize_tangent_dtype": lambda lib, d: lib.func.linearize(lib.sin, d["x"])[1](d["x"].float()),
    "functionalize_remove": lambda lib, d: lib.func.functionalize(lib.sin, remove="views")(d["x"]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_transform_errors_as_torch(name):
    _error(ERRORS[name], message=name not in ("jvp_structures_differ", "grad_of_integer_input"))


def test_vjp_cotangent_structure_must_match():
    def program(lib, d):
        _, fn = lib.func.vjp(lambda x: (x, x), d["x"])
        return fn(d["x"])
    _error(program, message=False)
