"""Differential tests of attention against torch: ``F.scaled_dot_product_attention`` (masks,
causal, scale, dropout from torch's random stream, fully masked rows) and
``nn.MultiheadAttention`` (same-seed weights, batch_first, padding and attention masks, weights
averaged or per head, separate key/value widths, bias_k/bias_v, zero attention, dropout,
unbatched input, gradients of every parameter, state dicts both ways, errors).

Without dropout torch's CPU attention is a fused flash kernel that sums in its own order, so
values are compared within a tolerance (float64 keeps it tight); with dropout torch runs the
same math as internals, and the dropout masks must coincide.
"""
import pytest
import torch
from helpers import assert_same, assert_same_error

import internals

I = internals.from_torch      # noqa: E741
TOL64 = dict(rtol=1e-10, atol=1e-12)
NNF, F = torch.nn.functional, internals.nn.functional


def randn(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def sdpa_both(q, k, v, grads=True, **kwargs):
    """The attention in both libraries (reseeded alike), then its gradients for q, k and v."""
    tq, tk, tv = (t.clone().requires_grad_() for t in (q, k, v))
    oq, ok, ov = (I(t).requires_grad_() for t in (q, k, v))
    ours_kwargs = {k_: I(v_) if isinstance(v_, torch.Tensor) else v_ for k_, v_ in kwargs.items()}
    torch.manual_seed(5)
    theirs = NNF.scaled_dot_product_attention(tq, tk, tv, **kwargs)
    internals.manual_seed(5)
    ours = F.scaled_dot_product_attention(oq, ok, ov, **ours_kwargs)
    assert_same(ours.detach(), theirs.detach(), exact_layout=False, **TOL64)
    if grads:
        g = randn(*theirs.shape, seed=9)
        theirs.backward(g)
        ours.backward(I(g))
        for a, b in ((oq, tq), (ok, tk), (ov, tv)):
            assert_same(a.grad, b.grad, exact_layout=False, **TOL64)
    return ours, theirs


MASKS = {
    "none": lambda: None,
    "bool_2d": lambda: randn(5, 7, seed=3) > -0.5,
    "bool_4d": lambda: randn(2, 1, 5, 7, seed=3) > -0.5,
    "float_2d": lambda: randn(5, 7, seed=4),
}


@pytest.mark.parametrize("mask", MASKS)
def test_sdpa_masks(mask):
    q, k, v = randn(2, 3, 5, 4, seed=1), randn(2, 3, 7, 4, seed=2), randn(2, 3, 7, 6, seed=3)
    sdpa_both(q, k, v, attn_mask=MASKS[mask]())


@pytest.mark.parametrize("kwargs", [dict(is_causal=True), dict(scale=0.3), dict(scale=-0.7),
                                    dict(is_causal=True, scale=2.0)], ids=["causal", "scale", "negative", "both"])
def test_sdpa_causal_and_scale(kwargs):
    q, k, v = randn(3, 6, 4, seed=1), randn(3, 8, 4, seed=2), randn(3, 8, 4, seed=3)
    sdpa_both(q, k, v, **kwargs)


@pytest.mark.parametrize("kwargs", [dict(), dict(is_causal=True), dict(attn_mask="bool")])
def test_sdpa_dropout_draws_torchs_stream(kwargs):
    """torch's math backend (which it takes for dropout) draws the mask with bernoulli_, so the
    same seed zeroes the same weights."""
    q, k, v = randn(2, 2, 5, 4, seed=1), randn(2, 2, 5, 4, seed=2), randn(2, 2, 5, 4, seed=3)
    if kwargs.get("attn_mask") == "bool":
        kwargs = dict(attn_mask=randn(5, 5, seed=6) > 0)
    ours, theirs = sdpa_both(q, k, v, dropout_p=0.4, **kwargs)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__


def test_sdpa_fully_masked_row_gives_zeros():
    """A query that may attend to nothing gets zeros (torch's safe softmax), not NaN."""
    q, k, v = randn(1, 3, 4, seed=1), randn(1, 5, 4, seed=2), randn(1, 5, 4, seed=3)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1] = False
    expected = NNF.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    ours = F.scaled_dot_product_attention(I(q), I(k), I(v), attn_mask=I(mask))
    assert_same(ours, expected, exact_layout=False, **TOL64)
    assert ours.to_torch()[0, 1].eq(0).all()


def test_sdpa_errors():
    q = randn(2, 3, 4)
    for bad in (lambda lib, t: lib.nn.functional.scaled_dot_product_attention(
                    t, t, t, attn_mask=lib.ones(3, 3, dtype=lib.bool), is_causal=True),
                lambda lib, t: lib.nn.functional.scaled_dot_product_attention(t, t.float(), t),
                # an integer mask is refused (validate_sdpa_input), not added as numbers
                lambda lib, t: lib.nn.functional.scaled_dot_product_attention(
                    t, t, t, attn_mask=lib.ones(3, 3, dtype=lib.long)),
                lambda lib, t: lib.nn.functional.scaled_dot_product_attention(
                    t.half(), t.half(), t.half(), attn_mask=lib.ones(3, 3, dtype=lib.uint8)),
                lambda lib, t: lib.nn.functional.scaled_dot_product_attention(
                    t, t, t, attn_mask=lib.ones(3, 3, dtype=lib.bfloat16))):
        err_o, err_t = assert_same_error(lambda bad=bad: bad(internals, I(q)), lambda bad=bad: bad(torch, q))
        assert str(err_o) == str(err_t)


# ---- MultiheadAttention
def twins(seed=0, **config):
    built = []
    for lib in (internals, torch):
        lib.manual_seed(seed)
        built.append(lib.nn.MultiheadAttention(8, 2, dtype=lib.float64, **config))
    ours, theirs = built
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, value in theirs.state_dict().items():
        assert_same(ours.state_dict()[name], value)
    assert repr(ours) == repr(theirs)
    return ours, theirs


def mha_both(ours, theirs, query, key=None, value=None, **kwargs):
    """Both modules on the same inputs (self-attention when key and value are None), reseeded
    alike; compares output and weights, then the gradients of inputs and every parameter."""
    t_in = [query.clone().requires_grad_()]
    o_in = [I(query).requires_grad_()]
    for extra in (key, value):
        if extra is not None:
            t_in.append(extra.clone().requires_grad_())
            o_in.append(I(extra).requires_grad_())
    t_args = t_in * 3 if len(t_in) == 1 else t_in
    o_args = o_in * 3 if len(o_in) == 1 else o_in
    o_kwargs = {k: I(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    torch.manual_seed(3)
    out_t, w_t = theirs(*t_args, **kwargs)
    internals.manual_seed(3)
    out_o, w_o = ours(*o_args, **o_kwargs)
    assert_same(out_o.detach(), out_t.detach(), exact_layout=False, **TOL64)
    assert (w_o is None) == (w_t is None)
    if w_t is not None:
        assert_same(w_o.detach(), w_t.detach(), exact_layout=False, **TOL64)
        assert type(w_o.grad_fn).__name__ == type(w_t.grad_fn).__name__
    assert type(out_o.grad_fn).__name__ == type(out_t.grad_fn).__name__
    g = randn(*out_t.shape, seed=11)
    out_t.backward(g)
    out_o.backward(I(g))
    for a, b in zip(o_in, t_in):
        assert_same(a.grad, b.grad, exact_layout=False, **TOL64)
    for (name, p_o), (_, p_t) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_same(p_o.grad, p_t.grad, **TOL64), name


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_self_attention(batch_first, need_weights, average):
    ours, theirs = twins(batch_first=batch_first)
    mha_both(ours, theirs, randn(3, 4, 8, seed=1), need_weights=need_weights, average_attn_weights=average)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masks", ["padding", "attn_bool", "attn_float_3d", "both"])
def test_mha_masks(masks, need_weights):
    ours, theirs = twins(batch_first=True)
    x = randn(3, 5, 8, seed=1)                         # (N, L, E)
    padding = torch.zeros(3, 5, dtype=torch.bool)
    padding[0, 3:] = True
    padding[2, 1] = True
    kwargs = {"padding": dict(key_padding_mask=padding),
              "attn_bool": dict(attn_mask=torch.ones(5, 5, dtype=torch.bool).triu(1)),
              "attn_float_3d": dict(attn_mask=randn(6, 5, 5, seed=2)),
              "both": dict(key_padding_mask=padding, attn_mask=torch.ones(5, 5, dtype=torch.bool).triu(1))}[masks]
    mha_both(ours, theirs, x, need_weights=need_weights, **kwargs)


def test_mha_causal_hint():
    ours, theirs = twins(batch_first=True)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    mha_both(ours, theirs, randn(2, 5, 8, seed=1), attn_mask=mask, is_causal=True, need_weights=False)


@pytest.mark.parametrize("config", [dict(kdim=5, vdim=6), dict(bias=False), dict(add_bias_kv=True),
                                    dict(add_zero_attn=True), dict(add_bias_kv=True, add_zero_attn=True)],
                         ids=["kdim_vdim", "no_bias", "bias_kv", "zero_attn", "bias_kv_zero_attn"])
def test_mha_configurations(config):
    ours, theirs = twins(**config)
    query = randn(4, 2, 8, seed=1)
    key = randn(6, 2, config.get("kdim", 8), seed=2)
    value = randn(6, 2, config.get("vdim", 8), seed=3)
    mha_both(ours, theirs, query, key, value)


def test_mha_key_and_value_one_tensor():
    ours, theirs = twins()
    memory = randn(6, 2, 8, seed=2)
    query = randn(4, 2, 8, seed=1)
    t_out = theirs(query, memory, memory)[0]
    o_out = ours(I(query), I(memory), I(memory))[0]
    assert_same(o_out, t_out, exact_layout=False, **TOL64)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_dropout_draws_torchs_stream(need_weights):
    ours, theirs = twins(dropout=0.3)
    mha_both(ours, theirs, randn(4, 3, 8, seed=1), need_weights=need_weights)


def test_mha_unbatched_and_eval():
    ours, theirs = twins(dropout=0.3)
    ours.eval()
    theirs.eval()
    mha_both(ours, theirs, randn(4, 8, seed=1))


def test_mha_state_dict_both_ways():
    ours, _ = twins(seed=1, batch_first=True)
    _, theirs = twins(seed=2, batch_first=True)
    ours.load_state_dict({k: I(v) for k, v in theirs.state_dict().items()})
    mha_both(ours, theirs, randn(2, 3, 8, seed=1))
    _, fresh = twins(seed=3, batch_first=True)
    fresh.load_state_dict({k: v.to_torch() for k, v in ours.state_dict().items()})
    for name, value in fresh.state_dict().items():
        assert torch.equal(value, theirs.state_dict()[name])


@pytest.mark.parametrize("bad", [
    lambda lib: lib.nn.MultiheadAttention(8, 3),
    lambda lib: lib.nn.MultiheadAttention(0, 2),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 8), lib.randn(3, 2, 8), lib.randn(2, 2, 8)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 8), lib.randn(3, 2, 8), lib.randn(3, 2, 8),
                                                attn_mask=lib.zeros(3, 4)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(2, 3, 2, 8), lib.randn(3, 2, 8), lib.randn(3, 2, 8)),
], ids=["heads", "embed_dim", "key_value_shapes", "mask_shape", "rank"])
def test_mha_errors(bad):
    err_o, err_t = assert_same_error(lambda: bad(internals), lambda: bad(torch))
    assert str(err_o).replace("internals", "torch") == str(err_t)


@pytest.mark.parametrize("is_causal", [False, True])
def test_attention_gradients_under_create_graph_as_torch(is_causal):
    """torch's math kernel scales query and key by a C++ Scalar (mul.Scalar): the gradients
    built with create_graph end in MulBackward1 nodes, and their gradients equal torch's."""
    def run(lib):
        gen = torch.Generator().manual_seed(3)
        q, k, v = (lib.tensor(torch.randn(2, 3, 4, dtype=torch.float64, generator=gen).tolist(), dtype=lib.float64,
                              requires_grad=True) for _ in range(3))
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
        grads = lib.autograd.grad((out * out).sum(), (q, k, v), create_graph=True)
        return grads, lib.autograd.grad(sum((g * g).sum() for g in grads), (q, k, v))
    (ours, ours2), (theirs, theirs2) = run(internals), run(torch)
    for o, t in zip(ours, theirs):
        assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
        assert_same(o.detach(), t.detach(), ulps=64)
    for o, t in zip(ours2, theirs2):
        assert_same(o, t, ulps=1024)
