"""``torch.func.vmap`` against torch's: programs written for one example run over a batch
(broadcasting, reductions, matrix products, views, indexing, softmax and nn.functional, nested
vmaps, pytree inputs and outputs, ``in_dims=None``, negative dims, ``out_dims``, ``chunk_size``),
the per-element fallback for operators without a rule, randomness modes, and torch's errors."""
import pytest
import torch
from helpers import (
    assert_same,
    assert_same_tree,
    assert_within_ulps_of_largest,
    in_threads,
    outcome,
    torch_on_one_thread,
)

import internals


def _inputs(lib):
    g = lib.Generator().manual_seed(0)
    def draw(*size):
        return lib.randn(*size, generator=g, dtype=lib.float64)
    return {"x": draw(4, 3), "y": draw(4, 3), "m": draw(3, 5), "b": draw(4, 2, 3), "v": draw(3),
            "i": lib.tensor([[2, 0], [1, 1], [0, 2], [2, 2]])}


def _check(program, ulps=None, exact_layout=False):
    """``program(lib, inputs)`` in both libraries: same structure, values, shapes and dtypes."""
    def compare(o, t):
        if ulps is None or not t.dtype.is_floating_point:
            assert_same(o, t, exact_layout=exact_layout)
        else:      # a sum of products whose terms cancel: the rounding is on the scale of the largest value
            assert_within_ulps_of_largest(o, t, ulps, exact_layout=exact_layout)
    with torch_on_one_thread():
        theirs = program(torch, _inputs(torch))
    assert_same_tree(program(internals, _inputs(internals)), theirs, compare)


V = "func.vmap"
EXACT = {
    "binary": lambda lib, d: lib.func.vmap(lambda a, b: a * b + 1)(d["x"], d["y"]),
    "unbatched_arg": lambda lib, d: lib.func.vmap(lambda a, b: a - b, in_dims=(0, None))(d["x"], d["v"]),
    "scalar_result": lambda lib, d: lib.func.vmap(lambda a: a.max())(d["x"]),
    "in_dim_1": lambda lib, d: lib.func.vmap(lambda a: a.exp(), in_dims=1)(d["x"]),
    "negative_in_dim": lambda lib, d: lib.func.vmap(lambda a: a.neg(), in_dims=-1)(d["b"]),
    "out_dim_1": lambda lib, d: lib.func.vmap(lambda a: a * 2, out_dims=1)(d["x"]),
    "negative_out_dim": lambda lib, d: lib.func.vmap(lambda a: a.abs(), out_dims=-1)(d["b"]),
    "sum_dim": lambda lib, d: lib.func.vmap(lambda a: a.sum(-1, keepdim=True))(d["b"]),
    "amax": lambda lib, d: lib.func.vmap(lambda a: a.amax(0))(d["b"]),
    "max_dim": lambda lib, d: lib.func.vmap(lambda a: a.max(1))(d["b"]),
    "argmax": lambda lib, d: lib.func.vmap(lambda a: a.argmax(0))(d["b"]),
    "sum_all": lambda lib, d: lib.func.vmap(lambda a: (a.sum(), a.sum(dim=None), a.mean([])))(d["b"]),
    "zero_dim_examples": lambda lib, d: lib.func.vmap(lambda s: (s.sum(), s.sum(0), s.unsqueeze(0), s.amax(-1),
                                                                  s.squeeze()))(d["v"]),
    "whole_reductions": lambda lib, d: lib.func.vmap(lambda a: (
        a.sum(), a.mean(), a.prod(), a.max(), a.min(), (a > 0).any(), (a > 0).all(), a.sum(dtype=lib.float32)))(
        d["b"].transpose(1, 2)),
    "integer_sum_promotes": lambda lib, d: lib.func.vmap(lambda i: i.sum())(d["i"].int()),
    "squeeze_all": lambda lib, d: lib.func.vmap(lambda a: a.squeeze() + 0)(d["b"].view(4, 1, 2, 1, 3)),
    "roll": lambda lib, d: lib.func.vmap(lambda a: (a.roll(1), a.roll(1, 0), a.roll((1, -1), (0, 1))))(d["b"]),
    "view_as_dtype": lambda lib, d: lib.func.vmap(lambda a: a.view(lib.int64))(d["b"]),
    "movedim_flip_diagonal": lambda lib, d: lib.func.vmap(lambda a: (a.movedim(0, -1) + 0, a.flip(-1),
                                                                     a.diagonal(0, -2, -1) + 0))(d["b"]),
    "sort_topk": lambda lib, d: lib.func.vmap(lambda a: (a.sort(-1), a.topk(2)))(d["b"]),
    "squeeze_keeps_batch_of_one": lambda lib, d: lib.func.vmap(lambda a: a.squeeze())(d["b"][:1, :1]),
    "cumsum": lambda lib, d: lib.func.vmap(lambda a: a.cumsum(0))(d["b"]),
    "transpose": lambda lib, d: lib.func.vmap(lambda a: a.t().contiguous())(d["b"]),
    "permute": lambda lib, d: lib.func.vmap(lambda a: a.permute(1, 0) + 0)(d["b"]),
    "view": lambda lib, d: lib.func.vmap(lambda a: a.reshape(3, 2) * 1)(d["b"]),
    "unsqueeze_expand": lambda lib, d: lib.func.vmap(lambda a: a.unsqueeze(0).expand(2, 3) + 0)(d["x"]),
    "flatten": lambda lib, d: lib.func.vmap(lambda a: a.flatten() + 0)(d["b"]),
    "select_slice": lambda lib, d: lib.func.vmap(lambda a: a[1, 1:] + a[0, :2])(d["b"]),
    "index_tensor": lambda lib, d: lib.func.vmap(lambda a, i: a[i])(d["x"], d["i"]),
    "index_unbatched": lambda lib, d: lib.func.vmap(lambda a: a[lib.tensor([2, 0])])(d["x"]),
    "gather": lambda lib, d: lib.func.vmap(lambda a, i: a.gather(0, i))(d["x"], d["i"]),
    "cat": lambda lib, d: lib.func.vmap(lambda a, b: lib.cat([a, b, a]))(d["x"], d["y"]),
    "stack_unbatched": lambda lib, d: lib.func.vmap(lambda a: lib.stack([a, d["v"]], 1))(d["x"]),
    "where": lambda lib, d: lib.func.vmap(lambda a, b: lib.where(a > 0, a, b))(d["x"], d["y"]),
    "relu": lambda lib, d: lib.func.vmap(lib.nn.functional.relu)(d["b"]),
    "clamp": lambda lib, d: lib.func.vmap(lambda a: a.clamp(-0.5, 0.5))(d["x"]),
    "split_unbind": lambda lib, d: lib.func.vmap(lambda a: a.unbind(0))(d["b"]),
    "tuple_out": lambda lib, d: lib.func.vmap(lambda a: (a + 1, a.sum()))(d["x"]),
    "dict_in_out": lambda lib, d: lib.func.vmap(lambda p: {"s": p["a"] + p["c"], "d": p["a"] - 1})(
        {"a": d["x"], "c": d["y"]}),
    "list_in": lambda lib, d: lib.func.vmap(lambda ab: ab[0] * ab[1], in_dims=([0, 1],))([d["x"], d["x"].t()]),
    "nested_in_dims": lambda lib, d: lib.func.vmap(lambda a, bc: a + bc[0] * bc[1], in_dims=(0, (None, 0)))(
        d["x"], (d["v"], d["y"])),
    "nested_vmap": lambda lib, d: lib.func.vmap(lib.func.vmap(lambda a, b: a * b, in_dims=(0, None)),
                                                  in_dims=(0, None))(d["b"], d["v"]),
    "nested_vmap_outer_dim": lambda lib, d: lib.func.vmap(lib.func.vmap(lambda a: a.sum()), in_dims=1)(d["b"]),
    "unbatched_output": lambda lib, d: lib.func.vmap(lambda a: d["v"] * 2)(d["x"]),
    "out_dims_none": lambda lib, d: lib.func.vmap(lambda a: (a * 2, d["v"]), out_dims=(0, None))(d["x"]),
    "chunk_size": lambda lib, d: lib.func.vmap(lambda a: a.cumsum(0), chunk_size=3)(d["x"]),
    "kwargs": lambda lib, d: lib.func.vmap(lambda a, scale=1.0: a * scale)(d["x"], scale=3.0),
    "inplace_batched": lambda lib, d: lib.func.vmap(lambda a: a.clone().mul_(2).add_(1))(d["x"]),
    "inplace_into_input": lambda lib, d: (lib.func.vmap(lambda a, b: a.add_(b))(d["x"], d["y"]), d["x"])[1],
    "new_zeros_then_write": lambda lib, d: lib.func.vmap(lambda a: a.new_zeros(2, 3).index_add(
        0, lib.tensor([1]), a.unsqueeze(0)))(d["x"]),
    "integer": lambda lib, d: lib.func.vmap(lambda a: a * 2 + a.sum())(d["i"]),
    "bool_compare": lambda lib, d: lib.func.vmap(lambda a, b: (a > b) & (a > 0))(d["x"], d["y"]),
}


# the stride of a size-1 dim says nothing (torch's squeeze leaves another there)
LAYOUT_FREE = {"squeeze_keeps_batch_of_one"}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_vmap_matches_torch(name):
    """Values, shapes, dtypes, and strides and storage offsets too."""
    _check(EXACT[name], exact_layout=name not in LAYOUT_FREE)


ROUNDED = {
    "mm": lambda lib, d: lib.func.vmap(lambda a, b: a @ b, in_dims=(0, None))(d["b"], d["m"]),
    "mv": lambda lib, d: lib.func.vmap(lib.mv, in_dims=(None, 0))(d["m"].t(), d["x"]),
    "mv_both_batched": lambda lib, d: lib.func.vmap(lib.mv)(d["b"], d["x"]),
    "mv_matrix_batched": lambda lib, d: lib.func.vmap(lib.mv, in_dims=(0, None))(d["b"], d["v"]),
    "dot": lambda lib, d: lib.func.vmap(lib.dot)(d["x"], d["y"]),
    "matmul_both": lambda lib, d: lib.func.vmap(lambda a, b: a @ b.t())(d["b"], d["b"]),
    "bmm": lambda lib, d: lib.func.vmap(lib.bmm)(d["b"].unsqueeze(1), d["b"].transpose(1, 2).unsqueeze(1)),
    "softmax": lambda lib, d: lib.func.vmap(lambda a: lib.softmax(a, -1))(d["b"]),
    "log_softmax": lambda lib, d: lib.func.vmap(lambda a: a.log_softmax(0))(d["b"]),
    "mean_var": lambda lib, d: lib.func.vmap(lambda a: (a.mean(), a.var(0)))(d["b"]),
    "linear": lambda lib, d: lib.func.vmap(lib.nn.functional.linear, in_dims=(0, None, None))(d["x"], d["m"].t(),
                                                                                              d["v"][:2].repeat(3)[:5]),
    "linear_batched_weight": lambda lib, d: lib.func.vmap(lib.nn.functional.linear)(d["x"], d["b"], d["x"][:, :2]),
    "addmm_scaled": lambda lib, d: lib.func.vmap(lambda a, c: lib.addmm(c, a, d["m"], beta=0.5, alpha=2.0))(
        d["b"], d["x"][:, :1].expand(4, 5)),
    "addmm_batched_bias_only": lambda lib, d: lib.func.vmap(lambda c: lib.addmm(c, d["b"][0], d["m"]))(
        d["x"][:, :1].expand(4, 5).contiguous()),
    "addmm_beta_zero": lambda lib, d: lib.func.vmap(lambda a: lib.addmm(d["v"][:1], a, d["m"], beta=0))(d["b"]),
    "gelu_tanh": lambda lib, d: lib.func.vmap(lambda a: lib.nn.functional.gelu(a).tanh())(d["x"]),
    "layer_norm": lambda lib, d: lib.func.vmap(lambda a: lib.nn.functional.layer_norm(a, (3,)))(d["b"]),
    "cross_entropy": lambda lib, d: lib.func.vmap(lambda a, t: lib.nn.functional.cross_entropy(a, t))(
        d["b"], d["i"]),
    "mse_loss": lambda lib, d: lib.func.vmap(lib.nn.functional.mse_loss)(d["x"], d["y"]),
    "conv1d": lambda lib, d: lib.func.vmap(lambda a: lib.nn.functional.conv1d(a.unsqueeze(0), d["m"][:2, :3].reshape(
        2, 1, 3)))(d["x"].unsqueeze(1)),
    "conv2d_max_pool": lambda lib, d: lib.func.vmap(lambda a: lib.nn.functional.max_pool2d(lib.nn.functional.conv2d(
        a.view(1, 1, 2, 3), d["m"][:2, :4].reshape(2, 1, 2, 2), padding=1), 2))(d["b"]),
    "embedding": lambda lib, d: lib.func.vmap(lambda i: lib.nn.functional.embedding(i, d["m"].t()))(d["i"]),
    "logsumexp": lambda lib, d: lib.func.vmap(lambda a: a.logsumexp(-1))(d["b"]),
    "norm": lambda lib, d: lib.func.vmap(lambda a: lib.linalg.vector_norm(a))(d["b"]),
}


@pytest.mark.parametrize("name", sorted(ROUNDED))
def test_vmap_matches_torch_within_ulps(name):
    """Products, sums in another order and library math: torch's bits follow the CPU."""
    _check(ROUNDED[name], ulps=64, exact_layout=name not in LAYOUT_FREE)


def _cnn_per_example_grads(lib, d):
    """Per-example gradients of a small CNN (conv2d, relu, max_pool2d, linear, cross_entropy)."""
    F = lib.nn.functional
    params = (d["b"][:2].reshape(2, 1, 2, 3) * 1, d["v"][:2], d["m"][:, :4] * 1)

    def loss(p, image, label):      # one 1 x 4 x 3 image: 2 channels of 5 x 3, pooled to 2 x 1, 3 classes
        h = F.max_pool2d(F.conv2d(image.unsqueeze(0), p[0], p[1], padding=1).relu(), 2)
        return F.cross_entropy(F.linear(h.flatten(1), p[2]), label.unsqueeze(0))

    images = lib.cat([d["b"], d["b"].flip(1)], 1).unsqueeze(1)     # 4 examples of 1 x 4 x 3
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, images, d["i"][:, 0])


def _nll_loss_and_grad(lib, d, reduction):
    """Class weights, an ignored target in two examples."""
    targets = lib.tensor([[0, 2], [1, -100], [2, 2], [-100, 1]])
    loss = lambda a, t: lib.nn.functional.nll_loss(a, t, d["v"].abs(), reduction=reduction)     # noqa: E731
    return (lib.func.vmap(loss)(d["b"], targets),
            lib.func.vmap(lib.func.grad(lambda a, t: loss(a, t).pow(2).mean()))(d["b"], targets))


# operators with a batching rule of their own: the per-element fallback must not run
RULED = {
    "cnn_per_example_grads": _cnn_per_example_grads,
    "conv2d_batched_weight_groups": lambda lib, d: lib.func.vmap(
        lambda a, w, c: lib.nn.functional.conv2d(a, w, c, padding=1, groups=2))(
        d["b"].reshape(4, 1, 2, 3, 1).expand(4, 1, 2, 3, 3), d["b"].reshape(4, 2, 1, 3, 1).expand(4, 2, 1, 3, 3) * 1,
        d["x"][:, :2]),
    "conv2d_grads_of_all": lambda lib, d: lib.func.vmap(lib.func.grad(
        lambda a, w, c: lib.nn.functional.conv2d(a, w, c, stride=2).pow(2).sum(), argnums=(0, 1, 2)))(
        d["b"].reshape(4, 1, 2, 3, 1).expand(4, 1, 2, 3, 3) * 1, d["b"].reshape(4, 2, 1, 3, 1).repeat(1, 1, 2, 1, 2)[
            ..., :2, :2], d["x"][:, :2]),
    "conv_transpose2d_grads": lambda lib, d: lib.func.vmap(lib.func.grad(
        lambda a, w: lib.nn.functional.conv_transpose2d(a, w, stride=2).pow(2).sum(), argnums=(0, 1)))(
        d["b"].reshape(4, 1, 2, 3, 1) * 1, d["b"].reshape(4, 2, 1, 3, 1) * 1),
    "max_pool2d_and_grad": lambda lib, d: lib.func.vmap(lambda a: (lib.nn.functional.max_pool2d(a, 2, 1),
                                                                   lib.func.grad(lambda c: lib.nn.functional.max_pool2d(
                                                                       c, 2, 1).pow(2).sum())(a)))(
        d["b"].unsqueeze(1)),
    "nll_loss_reductions_and_grads": lambda lib, d: [_nll_loss_and_grad(lib, d, r) for r in ("mean", "sum", "none")],
    "cross_entropy_one_example_grad": lambda lib, d: lib.func.vmap(lib.func.grad(
        lambda a, t: lib.nn.functional.cross_entropy(a, t)), in_dims=(0, None))(d["x"], lib.tensor(1)),
    "embedding_batched_table_and_grads": lambda lib, d: (
        lib.func.vmap(lib.nn.functional.embedding)(d["i"], d["b"].transpose(1, 2)),
        lib.func.vmap(lib.func.grad(lambda w, i: lib.nn.functional.embedding(i, w, padding_idx=0).pow(2).sum()),
                      in_dims=(None, 0))(d["m"].t(), d["i"]),
        lib.func.vmap(lib.func.grad(lambda w, i: lib.nn.functional.embedding(
            i, w, scale_grad_by_freq=True).pow(2).sum()))(d["b"].transpose(1, 2), d["i"])),
    "layer_norm_batched_affine_and_grads": lambda lib, d: (
        lib.func.vmap(lambda a, w, c: lib.nn.functional.layer_norm(a, (3,), w, c))(d["b"], d["x"], d["y"]),
        lib.func.vmap(lib.func.grad(lambda a, w, c: lib.nn.functional.layer_norm(a, (3,), w, c).pow(3).sum(),
                                    argnums=(0, 1, 2)), in_dims=(0, None, None))(d["b"], d["v"], d["v"] * 2),
        lib.func.vmap(lib.func.grad(lambda a, w, c: lib.nn.functional.layer_norm(a, (2, 3), w, c).pow(3).sum(),
                                    argnums=(0, 1, 2)))(d["b"], d["b"] * 2, d["b"] + 1)),
    "softmax_backward_of_many_cotangents": lambda lib, d: lib.func.jacrev(     # one forward, a batch of cotangents
        lambda a: (a.softmax(0), a.log_softmax(0)), chunk_size=2)(d["v"]),
    "softmax_backward": lambda lib, d: lib.func.vmap(lib.func.grad(
        lambda a: lib.softmax(a, -1).pow(2).sum() + a.log_softmax(0).pow(2).sum()))(d["b"]),
}

def _set_not_adjacent(a, i, v):
    a = a.clone()
    a[i, :, i] = v      # index dims first in the indexed shape: [2, 3]
    return a


RULED_EXACT = {
    "index_forms": lambda lib, d: lib.func.vmap(lambda a, i: (a[i], a[:, i[:1]], a[i, i], a[i, :, i[:1] % 2] * 1))(
        d["b"].transpose(1, 2).unsqueeze(2).expand(4, 3, 3, 2), d["i"]),
    "index_unbatched_self": lambda lib, d: lib.func.vmap(lambda i: d["m"][:, i], in_dims=0)(d["i"]),
    "gather_scatter": lambda lib, d: lib.func.vmap(lambda a, i, s: (
        a.gather(1, i), a.scatter(1, i, s), a.scatter(1, i, 2.0), a.scatter_add(1, i, s),
        a.scatter_reduce(1, i, s, "amax"), a.clone().scatter_(1, i, s)))(d["b"], d["i"].unsqueeze(1).expand(4, 2, 2),
                                                                           d["b"][:, :, :2] * 1),
    "index_grads": lambda lib, d: lib.func.vmap(lib.func.grad(lambda a, i: a[i].pow(2).sum() + a[:, i % 2].sum() +
                                                           a[:, lib.tensor([0, 0])].sum()))(d["b"].transpose(1, 2) * 1,
                                                                                            d["i"]),
    "index_put_forms": lambda lib, d: lib.func.vmap(lambda a, i: (
        a.index_put((i,), lib.tensor(5.0, dtype=a.dtype)), a.index_put((i,), d["v"][:2] * 1, accumulate=True),
        a.clone().index_put_((i, i % 2), a[0, :2] * 2)))(d["b"].transpose(1, 2) * 1, d["i"]),
    "setitem_not_adjacent": lambda lib, d: lib.func.vmap(_set_not_adjacent)(
        d["x"].reshape(4, 3, 1, 1).expand(4, 3, 3, 3).contiguous(), d["i"], d["y"]),
    "gather_unbatched_index": lambda lib, d: lib.func.vmap(lambda a: a.gather(1, d["i"][:2]))(d["b"]),
}


def _without_fallback(program):
    """``program`` run in internals with a count of the per-element fallback's runs."""
    from internals._functorch import batch_rules

    runs = []
    original = batch_rules._fallback

    def counted(func, *rest):
        runs.append(str(func))
        return original(func, *rest)

    batch_rules._fallback = counted
    try:
        program(internals, _inputs(internals))
    finally:
        batch_rules._fallback = original
    return runs


@pytest.mark.parametrize("name", sorted(RULED))
def test_ruled_operators_match_torch_without_the_fallback(name):
    """Convolutions, pooling, losses, embedding, layer norm: torch's values (its kernels round
    in another order) and not one per-element run."""
    _check(RULED[name], ulps=64, exact_layout=False)
    assert _without_fallback(RULED[name]) == []


@pytest.mark.parametrize("name", sorted(RULED_EXACT))
def test_indexing_rules_match_torch_without_the_fallback(name):
    _check(RULED_EXACT[name], exact_layout=False)
    assert _without_fallback(RULED_EXACT[name]) == []


def test_values_equal_a_loop_over_the_batch():
    """The vmapped result is the per-example results stacked, bit for bit where the rule keeps
    each example's arithmetic (a broadcasting product and a row sum)."""
    d = _inputs(internals)
    f = lambda a, b: (a * b).sum(-1)     # noqa: E731
    assert internals.equal(internals.func.vmap(f)(d["b"], d["b"]),
                           internals.stack([f(d["b"][k], d["b"][k]) for k in range(4)]))


def test_fallback_warning_is_off_by_default_and_can_be_turned_on(recwarn):
    from internals._functorch.batch_rules import set_fallback_warning

    d = _inputs(internals)
    internals.func.vmap(internals.trace)(d["b"][:, :, :2])     # trace has no batching rule
    assert not [w for w in recwarn if "performance drop" in str(w.message)]
    set_fallback_warning(True)
    try:
        with pytest.warns(UserWarning, match="performance drop"):
            internals.func.vmap(internals.trace)(d["b"][:, :, :2])
    finally:
        set_fallback_warning(False)


def test_a_batched_value_shows_one_example():
    seen = []
    internals.func.vmap(lambda a: seen.append((tuple(a.shape), a.dim(), a.dtype)) or a)(internals.ones(5, 2, 3))
    assert seen == [((2, 3), 2, internals.float32)]


def _error(program):
    ours, theirs = outcome(lambda lib: program(lib, _inputs(lib)), internals), \
        outcome(lambda lib: program(lib, _inputs(lib)), torch)
    assert theirs[:1] == ("error",)
    assert ours[:2] == theirs[:2], (ours, theirs)
    return ours, theirs


ERRORS = {
    "batch_sizes_differ": lambda lib, d: lib.func.vmap(lib.add)(d["x"], d["m"]),
    "no_tensor_mapped": lambda lib, d: lib.func.vmap(lib.add, in_dims=None)(d["x"], d["y"]),
    "no_inputs": lambda lib, d: lib.func.vmap(lambda: 1)(),
    "in_dim_out_of_range": lambda lib, d: lib.func.vmap(lib.neg, in_dims=2)(d["x"]),
    "in_dim_for_non_tensor": lambda lib, d: lib.func.vmap(lambda a, k: a * k)(d["x"], 2.0),
    "in_dims_structure": lambda lib, d: lib.func.vmap(lib.add, in_dims=(0, 0, 0))(d["x"], d["y"]),
    "in_dims_list": lambda lib, d: lib.func.vmap(lib.add, in_dims=[0, 0])(d["x"], d["y"]),
    "non_tensor_output": lambda lib, d: lib.func.vmap(lambda a: 3)(d["x"]),
    "batched_output_out_dims_none": lambda lib, d: lib.func.vmap(lambda a: a, out_dims=None)(d["x"]),
    "item": lambda lib, d: lib.func.vmap(lambda a: a.sum().item())(d["x"]),
    "control_flow": lambda lib, d: lib.func.vmap(lambda a: a if a.sum() > 0 else -a)(d["x"]),
    "inplace_into_unbatched": lambda lib, d: lib.func.vmap(lambda a: d["v"].clone().add_(a))(d["x"]),
    "index_put_into_unbatched": lambda lib, d: lib.func.vmap(
        lambda a: lib.zeros(3, dtype=a.dtype).index_put_((lib.tensor([0]),), a[:1]))(d["x"]),
    "random_error_mode": lambda lib, d: lib.func.vmap(lambda a: a + lib.randn(3))(d["x"]),
    "random_like_error_mode": lambda lib, d: lib.func.vmap(lambda a: lib.rand_like(a))(d["x"]),
    "dropout_error_mode": lambda lib, d: lib.func.vmap(lambda a: lib.nn.functional.dropout(a, 0.5))(d["x"]),
    "bad_randomness": lambda lib, d: lib.func.vmap(lib.neg, randomness="sometimes")(d["x"]),
    "bad_chunk_size": lambda lib, d: lib.func.vmap(lib.neg, chunk_size=0)(d["x"]),
    "op_error_inside": lambda lib, d: lib.func.vmap(lambda a: a @ d["m"].t())(d["x"]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_vmap_errors_as_torch(name):
    _error(ERRORS[name])


@pytest.mark.parametrize("name", ["batch_sizes_differ", "in_dim_out_of_range", "item", "inplace_into_unbatched",
                                  "index_put_into_unbatched",
                                  "random_error_mode", "batched_output_out_dims_none"])
def test_vmap_error_messages_as_torch(name):
    ours, theirs = _error(ERRORS[name])
    assert ours[2] == theirs[2].replace("torch.", "internals.")


def test_randomness_same_draws_once_for_the_batch():
    out = internals.func.vmap(lambda a: a * 0 + internals.randn(3), randomness="same")(internals.ones(4, 3))
    assert out.shape == (4, 3) and internals.equal(out, out[:1].expand(4, 3))


def test_randomness_different_draws_per_example():
    out = internals.func.vmap(lambda a: a * 0 + internals.randn(3), randomness="different")(internals.ones(4, 3))
    like = internals.func.vmap(lambda a: internals.rand_like(a), randomness="different")(internals.ones(4, 3))
    for t in (out, like):
        assert t.shape == (4, 3) and not internals.equal(t[0], t[1])


def test_randomness_same_for_a_like_draw_broadcasts():
    like = internals.func.vmap(lambda a: internals.randn_like(a), randomness="same")(internals.ones(4, 3))
    assert like.shape == (4, 3) and internals.equal(like, like[:1].expand(4, 3))


def test_dropout_masks_per_randomness_mode():
    """``'same'``: one mask for the whole batch; ``'different'``: one per example."""
    internals.manual_seed(0)
    drop = lambda a: internals.nn.functional.dropout(a, 0.5)     # noqa: E731
    same = internals.func.vmap(drop, randomness="same")(internals.ones(4, 8))
    different = internals.func.vmap(drop, randomness="different")(internals.ones(4, 8))
    assert internals.equal(same, same[:1].expand(4, 8))
    assert not internals.equal(different, different[:1].expand(4, 8))
    assert set(same.unique().tolist()) <= {0.0, 2.0} and set(different.unique().tolist()) <= {0.0, 2.0}


SAME_RANDOMNESS = {
    "dropout": lambda lib: lambda x: lib.nn.functional.dropout(x, 0.5),
    "dropout1d": lambda lib: lambda x: lib.nn.functional.dropout1d(x.unsqueeze(0), 0.5),
    "alpha_dropout": lambda lib: lambda x: lib.nn.functional.alpha_dropout(x, 0.5, True),
    "bernoulli_inplace": lambda lib: lambda x: x.clone().bernoulli_(0.5),
    "normal_inplace": lambda lib: lambda x: x.clone().normal_(),
    "rand_like": lambda lib: lambda x: lib.rand_like(x),
    "bernoulli_of_batched_p": lambda lib: lib.bernoulli,
    "bernoulli_batched_self": lambda lib: lambda x: lib.bernoulli(x, 0.5),
    "normal_batched_mean": lambda lib: lambda m: lib.normal(m, 1.0),
    "normal_batched_mean_std": lambda lib: lambda m: lib.normal(m, m),
    "multinomial_batched_weights": lambda lib: lambda w: lib.multinomial(w, 3),
}


@pytest.mark.parametrize("name", sorted(SAME_RANDOMNESS))
def test_randomness_same_matches_torch_under_one_seed(name):
    """One draw broadcast over the batch, torch's values from torch's seed; a random operator
    whose probabilities, means or weights are batched raises torch's error."""
    def program(lib):
        lib.manual_seed(0)
        p = lib.tensor([[0.1, 0.5, 0.9, 0.3, 0.7]] * 4) + lib.arange(4.0).unsqueeze(1) / 10
        return lib.func.vmap(SAME_RANDOMNESS[name](lib), randomness="same")(p)

    ours, theirs = outcome(program, internals), outcome(program, torch)
    if isinstance(theirs, tuple):
        assert ours == theirs
    else:
        assert_same(ours, theirs)


def test_nested_vmaps_draw_per_example_at_both_levels():
    out = internals.func.vmap(internals.func.vmap(lambda a: a + internals.randn(()), randomness="different"),
                              randomness="different")(internals.zeros(3, 2))
    assert out.shape == (3, 2) and len(set(out.reshape(-1).tolist())) == 6


def test_vmap_runs_on_several_threads_at_once():
    """Each thread's vmaps have their own levels and randomness mode."""
    x = internals.arange(12.0).reshape(4, 3)
    expected = (x * x).sum(1)
    results = {}

    def work(k):
        f = internals.func.vmap(internals.func.vmap(lambda a: a * a + k * 0), in_dims=1)
        for _ in range(5):
            results[k] = f(x.t()).sum(1)
    assert in_threads(work) == []
    assert all(internals.equal(r, expected) for r in results.values())


def test_a_batched_value_prints_its_level_and_value():
    seen = []
    internals.func.vmap(lambda a: seen.append(repr(a)) or a)(internals.arange(2.0))
    assert seen[0].startswith("BatchedTensor(lvl=") and "bdim=0, value=" in seen[0] and "tensor([0., 1.])" in seen[0]


def test_vmap_and_per_example_grad_keep_the_device():
    """The batched value reports its physical tensor's device, and the rules run there (on the
    CUDA simulator where there is no GPU)."""
    x = internals.arange(6.0).reshape(2, 3).to("cuda")
    out = internals.func.vmap(internals.func.grad(lambda a: (a ** 2).sum()))(x)
    assert out.device.type == "cuda" and out.cpu().tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]


def test_a_tracer_below_vmap_records_the_physical_operators():
    """``make_fx(vmap(f))``: the batching rules run before the tracing mode sees a call, so the
    graph holds the batch-wide operators and runs on another batch (torch's vmap interpreter
    sits above the dispatch modes the same way)."""
    from internals.fx.experimental.proxy_tensor import make_fx

    f = internals.func.vmap(internals.func.grad(lambda a: (a.sin() * a).sum()))
    gm = make_fx(f)(internals.ones(3, 2))
    x = internals.arange(6.0).reshape(3, 2)
    assert internals.equal(gm(x), f(x))
    assert not any(n.op == "get_attr" for n in gm.graph.nodes)      # no batched value baked in as a constant
