"""Differential tests of attention against torch: ``F.scaled_dot_product_attention`` (masks,
causal, scale, dropout from torch's random stream, fully masked rows) and
``nn.MultiheadAttention`` (same-seed weights, batch_first, padding and attention masks, weights
averaged or per head, separate key/value widths, bias_k/bias_v, zero attention, dropout,
unbatched input, gradients of every parameter, state dicts both ways, errors).

Without dropout torch's CPU attention on 4-d inputs is a fused flash kernel
(``_scaled_dot_product_flash_attention_for_cpu``) that sums in its own order, so values are
compared within a tolerance (float64 keeps it tight); with dropout, or on inputs of other ranks,
torch runs the math composite, and the dropout masks must coincide. The fused kernel's tests
check which backend each call reaches (by its grad_fn), in every dtype, with masks of every
kind, grouped-query attention, its layouts, its logsumexp, its errors and its refusal to be
differentiated twice.
"""
import pytest
import torch
from helpers import assert_same, assert_same_error, assert_within_ulps_of_largest

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


@pytest.mark.parametrize("mask", ["bool", "float_minus_inf"])
def test_sdpa_fully_masked_row_has_zero_gradients(mask):
    """The math backend's safe softmax is differentiated as torch's ``_safe_softmax`` is: a row
    that attends to nothing passes back zeros, and q, k and v get no NaN from it."""
    q, k, v = randn(2, 3, 4, seed=1), randn(2, 5, 4, seed=2), randn(2, 5, 4, seed=3)
    keep = torch.ones(3, 5, dtype=torch.bool)
    keep[1] = False
    attn_mask = keep if mask == "bool" else torch.zeros(3, 5, dtype=torch.float64).masked_fill(~keep, -torch.inf)
    ours, _ = sdpa_both(q, k, v, attn_mask=attn_mask)
    assert not ours.isnan().any()


@pytest.mark.parametrize("case", ["4d", "3d_float_mask", "float64", "float16"])
def test_sdpa_under_autocast_computes_in_the_regions_dtype(case):
    """torch registers an autocast kernel (lower_precision_fp) for scaled_dot_product_attention:
    query, key, value and a floating mask are cast to the region's dtype; float64 stays."""
    dtype = torch.float64 if case == "float64" else torch.float32
    shape = (1, 2, 3, 4) if case == "4d" else (2, 3, 4)
    q, k, v = (randn(*shape, seed=s, dtype=dtype) for s in (1, 2, 3))
    mask = randn(3, 3, seed=4, dtype=torch.float32) if case == "3d_float_mask" else None
    region = torch.float16 if case == "float16" else torch.bfloat16
    tq = q.clone().requires_grad_()
    oq = I(q).requires_grad_()
    with torch.autocast("cpu", dtype=region):
        theirs = NNF.scaled_dot_product_attention(tq, k, v, attn_mask=mask)
    with internals.autocast("cpu", dtype=getattr(internals, str(region).split(".")[1])):
        ours = F.scaled_dot_product_attention(oq, I(k), I(v), attn_mask=None if mask is None else I(mask))
    assert (str(ours.dtype).split(".")[1], type(ours.grad_fn).__name__) == \
        (str(theirs.dtype).split(".")[1], type(theirs.grad_fn).__name__)
    assert_same(ours.detach(), theirs.detach(), exact_layout=False, rtol=2e-2, atol=2e-2)
    theirs.float().sum().backward()
    ours.float().sum().backward()
    assert_same(oq.grad, tq.grad, exact_layout=False, rtol=5e-2, atol=5e-2)


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


@pytest.mark.parametrize("case", ["fused", "odd_heads", "training", "float_mask", "grad"])
def test_mha_output_takes_the_fused_kernels_layout_where_torch_takes_it(case):
    """torch's module hands a batch-first self-attention in eval mode, with no gradient to record,
    to its fused kernel, which writes a contiguous (N, L, E) output; elsewhere the output is the
    (L, N, E) result transposed. The layout follows the same choice, not only the values."""
    ours, theirs = (lib.nn.MultiheadAttention(8, 1 if case == "odd_heads" else 2, batch_first=True,
                                              dtype=lib.float64).train(case == "training")
                    for lib in (internals.manual_seed(0) and internals, torch.manual_seed(0) and torch))
    x = randn(2, 3, 8, seed=1)
    mask = (torch.zeros(3, 3, dtype=torch.float64) if case == "float_mask"
            else torch.ones(3, 3, dtype=torch.bool).triu(1))
    with torch.set_grad_enabled(case == "grad"), internals.set_grad_enabled(case == "grad"):
        theirs_out = theirs(x, x, x, attn_mask=mask)[0]
        q = I(x)                    # one tensor for all three: self-attention, as torch's call
        ours_out = ours(q, q, q, attn_mask=I(mask))[0]
    assert_same(ours_out, theirs_out, **TOL64)


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


def _static_attention(lib, need_weights, add_zero_attn, padding):
    """``multi_head_attention_forward`` with ``static_k``/``static_v`` (N·heads, S, E/heads) in place
    of the projected key and value, as ``lib`` computes it: output, weights, and the gradients of
    the query and of both statics."""
    def t(x, grad=False):
        return lib.tensor(x.tolist(), dtype=lib.float64, requires_grad=grad)
    query, static_k, static_v = t(randn(3, 2, 4, seed=1), True), t(randn(4, 5, 2, seed=7), True), \
        t(randn(4, 5, 2, seed=8), True)
    out, weights = lib.nn.functional.multi_head_attention_forward(
        query, query, query, 4, 2, t(randn(12, 4, seed=2)), t(randn(12, seed=4)), None, None, add_zero_attn, 0.0,
        t(randn(4, 4, seed=5)), t(randn(4, seed=6)), training=False, need_weights=need_weights,
        key_padding_mask=lib.tensor(padding) if padding is not None else None, static_k=static_k, static_v=static_v)
    out.sum().backward()
    return [out, weights, query.grad, static_k.grad, static_v.grad]


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("add_zero_attn, padding", [(False, None), (False, [[False] * 4 + [True]] * 2),
                                                    (True, [[False] * 4 + [True]] * 2)],
                         ids=["plain", "padding", "zero_attn_padding"])
def test_mha_forward_with_static_key_and_value(need_weights, add_zero_attn, padding):
    """torch's functional attention takes ready-made heads of keys and values (``static_k``,
    ``static_v``): they replace the projections, the padding mask covers their length."""
    ours = _static_attention(internals, need_weights, add_zero_attn, padding)
    theirs = _static_attention(torch, need_weights, add_zero_attn, padding)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if b is not None:
            assert_same(a.detach(), b.detach(), exact_layout=False, **TOL64)


@pytest.mark.parametrize("name, shape", [("static_k", (3, 5, 2)), ("static_k", (4, 5, 3)), ("static_v", (4, 5, 1))])
def test_mha_static_key_and_value_shapes_checked_as_torchs(name, shape):
    def call(lib):
        x = lib.ones(3, 2, 4)
        return lib.nn.functional.multi_head_attention_forward(
            x, x, x, 4, 2, lib.ones(12, 4), None, None, None, False, 0.0, lib.ones(4, 4), None, training=False,
            **{name: lib.ones(*shape)})
    err_o, err_t = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(err_o) == str(err_t)


@pytest.mark.parametrize("masks", ["none", "padding", "attn_2d", "attn_3d", "both"])
def test_mha_merge_masks_as_torchs(masks):
    """``MultiheadAttention.merge_masks``: the masks its fused kernel takes, and their type."""
    padding = torch.zeros(2, 3, dtype=torch.float64)
    padding[1, 2] = -torch.inf
    attn = {"attn_2d": randn(3, 3, seed=2), "attn_3d": randn(8, 3, 3, seed=2), "both": randn(3, 3, seed=2)}.get(masks)
    kpm = padding if masks in ("padding", "both") else None
    ours, theirs = twins(batch_first=True)
    query = randn(2, 3, 8, seed=1)
    merged_t, kind_t = theirs.merge_masks(attn, kpm, query)
    merged_o, kind_o = ours.merge_masks(None if attn is None else I(attn), None if kpm is None else I(kpm), I(query))
    assert kind_o == kind_t
    assert (merged_o is None) == (merged_t is None)
    if merged_t is not None:
        assert_same(merged_o, merged_t)


def _fused_mha_both(need_weights, masks, is_causal):
    """Self-attention through batch-first modules in inference, where torch takes its fused kernel."""
    ours, theirs = twins(batch_first=True)
    ours.eval()
    theirs.eval()
    x = randn(2, 5, 8, seed=1)
    kwargs = dict(need_weights=need_weights, is_causal=is_causal)
    if masks:
        kwargs["attn_mask"] = torch.zeros(5, 5, dtype=torch.bool)     # True keeps a key out:
        kwargs["attn_mask"][3, :3] = True                               # query 3 sees keys 3 and 4 only
        kwargs["key_padding_mask"] = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    with torch.no_grad(), internals.no_grad():
        theirs_out = theirs(x, x, x, **kwargs)
        x_o = I(x)
        ours_out = ours(x_o, x_o, x_o, **{k: I(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()})
    return ours_out, theirs_out


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("masks", [False, True], ids=["no_masks", "masks"])
def test_mha_fused_kernel_ignores_the_causal_hint_as_torchs(need_weights, masks):
    """torch's fused kernel takes no is_causal (without a mask it attends everywhere), and with
    masks it adds them to the scores before a plain softmax: a row the masks empty is NaN (the
    fourth query of the second batch entry, whose keys 3 and 4 are padding), as it is with the
    weights, not zeros."""
    (out_o, w_o), (out_t, w_t) = _fused_mha_both(need_weights, masks, is_causal=True)
    assert_same(out_o, out_t, exact_layout=False, **TOL64)
    assert (w_o is None) == (w_t is None)
    if w_t is not None:
        assert_same(w_o, w_t, exact_layout=False, **TOL64)
    if masks:
        assert out_t[1, 3].isnan().all()


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


# ---- the fused CPU kernel and the choice of backend (attention.cpp, sdp_utils_cpp.cpp)
FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"
DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# units in the last place of the largest value: the kernel's sums group differently from ours,
# and float16/bfloat16 weights are rounded before the product
LARGEST_ULPS = {torch.float64: 16, torch.float32: 16, torch.float16: 4, torch.bfloat16: 4}


def attend(q, k, v, dtype=torch.float64, grads=True, g_seed=9, **kwargs):
    """Both libraries on the same inputs (cast to ``dtype``): the outputs compared (layout too),
    their grad_fn names equal, then the gradients of q, k and v. Returns torch's grad_fn name."""
    tq, tk, tv = (t.detach().to(dtype).requires_grad_() for t in (q, k, v))   # new leaves, layouts kept
    oq, ok, ov = (I(t.detach()).requires_grad_() for t in (tq, tk, tv))
    ours_kwargs = {k_: I(v_) if isinstance(v_, torch.Tensor) else v_ for k_, v_ in kwargs.items()}
    torch.manual_seed(5)
    theirs = NNF.scaled_dot_product_attention(tq, tk, tv, **kwargs)
    internals.manual_seed(5)
    ours = F.scaled_dot_product_attention(oq, ok, ov, **ours_kwargs)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    n = LARGEST_ULPS[dtype]
    assert_within_ulps_of_largest(ours.detach(), theirs.detach(), n)
    if grads:
        g = randn(*theirs.shape, seed=g_seed).to(dtype)
        theirs.backward(g)
        ours.backward(I(g))
        for a, b in ((oq, tq), (ok, tk), (ov, tv)):
            assert_within_ulps_of_largest(a.grad, b.grad, n)
    return type(theirs.grad_fn).__name__


@pytest.mark.parametrize("shape", [(5, 4), (3, 5, 4), (2, 3, 5, 4), (2, 2, 3, 5, 4)], ids=["2d", "3d", "4d", "5d"])
def test_sdpa_rank_picks_torchs_backend(shape):
    """4-d inputs reach the fused kernel (its own backward node); 2-d, 3-d and 5-d the math
    composite, whose last node is its matmul's (MmBackward0, UnsafeViewBackward0)."""
    name = attend(randn(*shape, seed=1), randn(*shape, seed=2), randn(*shape, seed=3), dtype=torch.float32)
    assert (name == FLASH) == (len(shape) == 4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("is_causal", [False, True])
def test_sdpa_fused_kernel_in_every_dtype(dtype, is_causal):
    q, k, v = randn(2, 3, 6, 8, seed=1), randn(2, 3, 9, 8, seed=2), randn(2, 3, 9, 8, seed=3)
    assert attend(q, k, v, dtype=DTYPES[dtype], is_causal=is_causal) == FLASH


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sdpa_math_backend_computes_reduced_floats_in_float32(dtype):
    """Dropout sends the call to the math backend, which casts float16 and bfloat16 to float32
    and the output back: the same dropout mask, the same values."""
    q, k, v = randn(2, 2, 5, 4, seed=1), randn(2, 2, 5, 4, seed=2), randn(2, 2, 5, 4, seed=3)
    assert attend(q, k, v, dtype=DTYPES[dtype], dropout_p=0.3) == "ToCopyBackward0"
    assert attend(q[0], k[0], v[0], dtype=DTYPES[dtype]) == "ToCopyBackward0"


# masks: (the mask, whether torch's fused kernel takes it)
FUSED_MASKS = {
    "bool_2d": lambda: randn(6, 9, seed=4) > -0.5,
    "bool_4d": lambda: randn(2, 3, 6, 9, seed=4) > -0.5,
    "float_2d": lambda: randn(6, 9, seed=4),
    "float_4d_broadcast": lambda: randn(2, 1, 6, 9, seed=4),
    "float_4d_heads": lambda: randn(1, 3, 1, 9, seed=4),
    "float_column": lambda: randn(6, 1, seed=4),
    "float32_for_float64": lambda: randn(6, 9, seed=4).float(),
    "strided_keys": lambda: randn(6, 18, seed=4)[:, ::2],
    "fully_masked_row": lambda: torch.ones(6, 9, dtype=torch.bool).index_fill_(0, torch.tensor([2]), False),
}
MATH_MASKS = {
    "float_3d": lambda: randn(1, 6, 9, seed=4),
    "requires_grad": lambda: randn(6, 9, seed=4).requires_grad_(),
    "bool_3d": lambda: randn(3, 6, 9, seed=4) > -0.5,
}


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("mask", list(FUSED_MASKS) + list(MATH_MASKS))
def test_sdpa_masks_of_every_kind(mask, is_causal):
    """A 2-d mask, or a 4-d one broadcasting over batch and heads, that needs no gradient goes
    to the fused kernel (whatever its strides), which also takes ``is_causal`` beside it
    (both applied); any other goes to math, which refuses the pair."""
    q, k, v = randn(2, 3, 6, 8, seed=1), randn(2, 3, 9, 8, seed=2), randn(2, 3, 9, 8, seed=3)
    make = {**FUSED_MASKS, **MATH_MASKS}[mask]
    if mask in MATH_MASKS and is_causal:
        err_o, err_t = assert_same_error(
            lambda: F.scaled_dot_product_attention(I(q), I(k), I(v), attn_mask=I(make()), is_causal=True),
            lambda: NNF.scaled_dot_product_attention(q, k, v, attn_mask=make(), is_causal=True))
        assert str(err_o) == str(err_t)
        return
    if mask == "float32_for_float64":
        # torch's fused CPU kernel reads a float32 mask beside float64 inputs as the mask cast to
        # float64 on an AVX-512 Xeon, and as other values (1.85 apart) on an AVX2 one, with either
        # ATEN_CPU_CAPABILITY: the kernel chosen and its node are compared for the mask as given,
        # the values and gradients with torch's for the cast mask.
        tq = q.detach().requires_grad_()
        theirs = NNF.scaled_dot_product_attention(tq, k, v, attn_mask=make(), is_causal=is_causal)
        ours = F.scaled_dot_product_attention(I(q).requires_grad_(), I(k), I(v), attn_mask=I(make()),
                                              is_causal=is_causal)
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == FLASH
        name = attend(q, k, v, attn_mask=make().double(), is_causal=is_causal)
    else:
        name = attend(q, k, v, attn_mask=make(), is_causal=is_causal)
    assert (name == FLASH) == (mask in FUSED_MASKS)


def test_sdpa_one_dimensional_mask_on_4d_inputs_raises_torchs_index_error():
    """The fused kernel's mask-shape gate reads ``mask.size(-2)``: a 1-d mask raises there."""
    q = randn(2, 3, 6, 8, seed=1)
    err_o, err_t = assert_same_error(lambda: F.scaled_dot_product_attention(I(q), I(q), I(q), attn_mask=I(q[0, 0, 0])),
                                     lambda: NNF.scaled_dot_product_attention(q, q, q, attn_mask=q[0, 0, 0]))
    assert str(err_o) == str(err_t)


@pytest.mark.parametrize("kv_heads", [1, 2, 3, 6])
@pytest.mark.parametrize("rank", [3, 4, 5])
def test_sdpa_grouped_query_attention(kv_heads, rank):
    """``enable_gqa``: key and value heads each serve a group of query heads, in the fused
    kernel (4-d) and in math (repeat_interleave of the key/value heads) alike."""
    lead = {3: (), 4: (2,), 5: (2, 1)}[rank]
    q = randn(*lead, 6, 5, 4, seed=1)
    k, v = randn(*lead, kv_heads, 7, 4, seed=2), randn(*lead, kv_heads, 7, 4, seed=3)
    name = attend(q, k, v, enable_gqa=True)
    assert (name == FLASH) == (rank == 4)


def test_sdpa_grouped_query_attention_with_dropout_and_causal():
    q, k, v = randn(2, 6, 5, 4, seed=1), randn(2, 2, 5, 4, seed=2), randn(2, 2, 5, 4, seed=3)
    assert attend(q, k, v, enable_gqa=True, dropout_p=0.3) == "UnsafeViewBackward0"
    assert attend(q, k, v, enable_gqa=True, is_causal=True) == FLASH


@pytest.mark.parametrize("bad", [
    dict(q=(2, 6, 5, 4), kv=(2, 4, 7, 4), enable_gqa=True),       # heads that do not divide
    dict(q=(6, 5, 4), kv=(4, 7, 4), enable_gqa=True),
    dict(q=(2, 6, 5, 4), kv=(2, 3, 7, 4), enable_gqa=False),      # fewer heads without enable_gqa
    dict(q=(5, 4), kv=(7, 4), enable_gqa=True),                    # no heads dim at all
    dict(q=(2, 3, 5, 4), kv=(2, 3, 7, 3), enable_gqa=False),      # head sizes differ
    dict(q=(4,), kv=(7, 4), enable_gqa=False),                     # 1-d
], ids=["gqa_not_dividing", "gqa_not_dividing_3d", "heads_without_gqa", "gqa_2d", "head_size", "one_dim"])
def test_sdpa_shape_errors(bad):
    q, kv = randn(*bad["q"], seed=1), randn(*bad["kv"], seed=2)
    err_o, err_t = assert_same_error(
        lambda: F.scaled_dot_product_attention(I(q), I(kv), I(kv), enable_gqa=bad["enable_gqa"]),
        lambda: NNF.scaled_dot_product_attention(q, kv, kv, enable_gqa=bad["enable_gqa"]))
    assert str(err_o) == str(err_t)


@pytest.mark.parametrize("dropout_p", [1.5, -0.5])
def test_sdpa_dropout_probability_errors(dropout_p):
    """Above 1 the math backend's dropout refuses it; a negative one passes the fused kernel's
    gate (dropout > 0) and is refused by the kernel's own check."""
    q = randn(2, 3, 5, 4, seed=1)
    err_o, err_t = assert_same_error(lambda: F.scaled_dot_product_attention(I(q), I(q), I(q), dropout_p=dropout_p),
                                     lambda: NNF.scaled_dot_product_attention(q, q, q, dropout_p=dropout_p))
    assert str(err_o) == str(err_t)


def test_sdpa_integer_inputs_raise_as_torchs():
    q = torch.ones(2, 3, 5, 4, dtype=torch.int64)
    err_o, err_t = assert_same_error(lambda: F.scaled_dot_product_attention(I(q), I(q), I(q)),
                                     lambda: NNF.scaled_dot_product_attention(q, q, q))
    assert str(err_o) == str(err_t)


@pytest.mark.parametrize("layout", ["heads_after_length", "key_only", "strided_head_dim"])
def test_sdpa_fused_kernel_layouts(layout):
    """The output is laid out as the query (``empty_like``); the gradients over (B, T, H, E)
    buffers; a head dim without stride 1 goes to math."""
    if layout == "strided_head_dim":
        q, k, v = (randn(2, 3, 5, 8, seed=s)[..., ::2] for s in (1, 2, 3))
    else:
        q = randn(2, 5, 3, 4, seed=1).transpose(1, 2)
        q = randn(2, 3, 5, 4, seed=1) if layout == "key_only" else q
        k, v = randn(2, 7, 3, 4, seed=2).transpose(1, 2), randn(2, 3, 7, 4, seed=3)
    name = attend(q, k, v)
    assert (name == FLASH) == (layout != "strided_head_dim")


def flash_op(lib):
    return lib.ops.aten._scaled_dot_product_flash_attention_for_cpu


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs", [dict(), dict(is_causal=True, scale=0.4), dict(mask=True)],
                         ids=["plain", "causal_scale", "fully_masked_row"])
def test_flash_operator_returns_torchs_logsumexp(dtype, kwargs):
    """The operator itself: (output, logsumexp), the logsumexp (B, H, L) in the accumulate
    type over a (B, L, H) buffer, 0 where a row attends to nothing (where the output is 0)."""
    dtype = DTYPES[dtype]
    q, k, v = (randn(2, 3, n, 8, seed=s).to(dtype) for s, n in ((1, 6), (2, 9), (3, 9)))
    kwargs = dict(kwargs)
    if kwargs.pop("mask", False):
        mask = torch.zeros(6, 9, dtype=dtype)
        mask[3] = float("-inf")
        kwargs["attn_mask"] = mask
    ours = flash_op(internals).default(I(q), I(k), I(v), **{k_: I(v_) if isinstance(v_, torch.Tensor) else v_
                                                            for k_, v_ in kwargs.items()})
    theirs = flash_op(torch).default(q, k, v, **kwargs)
    assert_within_ulps_of_largest(ours[0], theirs[0], LARGEST_ULPS[dtype])
    # the logsumexp of 16-bit inputs: torch's kernel rounds its blocks of scores to the input dtype
    # at points that follow the vector width (ATEN_CPU_CAPABILITY=default and avx2 give logsumexps
    # 4e-5 apart on one machine), so it is compared within that spread: 256 float32 ulps
    lse_ulps = 256 if dtype in (torch.float16, torch.bfloat16) else LARGEST_ULPS[dtype]
    assert_within_ulps_of_largest(ours[1], theirs[1], lse_ulps)
    if "attn_mask" in kwargs:
        assert ours[1].to_torch()[:, :, 3].eq(0).all() and ours[0].to_torch()[:, :, 3].eq(0).all()


@pytest.mark.parametrize("bad", [
    lambda lib, q: flash_op(lib).default(q, q, q, 0.2),
    lambda lib, q: flash_op(lib).default(q[0], q[0], q[0]),
    lambda lib, q: flash_op(lib).default(q.long(), q.long(), q.long()),
    lambda lib, q: flash_op(lib).default(q, q, q[..., :3]),
    lambda lib, q: flash_op(lib).default(q, q, q, attn_mask=lib.ones(5, 5, dtype=lib.bool)),
    lambda lib, q: flash_op(lib).default(q, q, q, attn_mask=lib.ones(3, 5, 5, dtype=q.dtype)),
    lambda lib, q: flash_op(lib).default(q, q.double(), q),
], ids=["dropout", "three_dims", "integer", "head_size", "bool_mask", "mask_3d", "dtypes"])
def test_flash_operator_errors(bad):
    q = randn(2, 3, 5, 4, seed=1).float()
    err_o, err_t = assert_same_error(lambda: bad(internals, I(q)), lambda: bad(torch, q))
    assert str(err_o) == str(err_t)


def test_flash_operator_refuses_shapes_torch_reads_past():
    """torch's kernel reads another batch size, or heads that do not divide the query's, out
    of bounds; internals refuses them rather than read outside a storage."""
    q = I(randn(2, 6, 5, 4, seed=1))
    for k in (I(randn(2, 4, 5, 4, seed=2)), I(randn(1, 6, 5, 4, seed=2))):
        with pytest.raises(RuntimeError, match="one batch size"):
            flash_op(internals).default(q, k, k)


def test_fused_attention_has_no_second_derivative():
    """The backward operator has no derivative (torch's neither): gradients built with
    create_graph end in a NotImplemented node, and differentiating them raises torch's error."""
    def run(lib):
        q, k, v = (lib.tensor(randn(2, 3, 5, 4, seed=s).tolist(), dtype=lib.float64, requires_grad=True)
                   for s in (1, 2, 3))
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v)
        grads = lib.autograd.grad((out * out).sum(), (q, k, v), create_graph=True)
        names = [g.grad_fn.name() for g in grads]
        return names, lambda: lib.autograd.grad(sum(g.sum() for g in grads), (q,))
    (names_o, second_o), (names_t, second_t) = run(internals), run(torch)
    assert names_o == names_t
    err_o, err_t = assert_same_error(second_o, second_t)
    assert str(err_o) == str(err_t)


@pytest.mark.parametrize("shapes", [((2, 3, 0, 4), (2, 3, 0, 4), (2, 3, 0, 4)),
                                    ((2, 3, 5, 4), (2, 3, 0, 4), (2, 3, 0, 6)),
                                    ((0, 3, 5, 4), (0, 3, 5, 4), (0, 3, 5, 4)),
                                    ((5, 4), (0, 4), (0, 4))], ids=["no_queries", "no_keys", "no_batch", "2d"])
def test_sdpa_empty_inputs_give_zeros_in_the_graph(shapes):
    """An empty input: zeros of the output's shape, plus the inputs' sums times 0."""
    q, k, v = (randn(*s, seed=i) for i, s in enumerate(shapes))
    assert attend(q, k, v) == "AddBackward0"


def test_sdpa_without_grad_takes_the_fused_kernel():
    q, k, v = randn(2, 3, 5, 4, seed=1), randn(2, 3, 7, 4, seed=2), randn(2, 3, 7, 4, seed=3)
    with torch.no_grad():
        theirs = NNF.scaled_dot_product_attention(q, k, v, attn_mask=randn(5, 7, seed=4).requires_grad_())
    with internals.no_grad():
        ours = F.scaled_dot_product_attention(I(q), I(k), I(v), attn_mask=I(randn(5, 7, seed=4)).requires_grad_())
    assert ours.grad_fn is None and theirs.grad_fn is None
    assert_within_ulps_of_largest(ours, theirs, 16)


def _graph_names(t):
    """The names of every node in ``t``'s graph."""
    seen, stack, names = set(), [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions)
    return names


@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_reaches_the_backend_torchs_does(need_weights):
    """Without weights MultiheadAttention calls scaled_dot_product_attention on 4-d heads, so
    torch's graph holds the fused kernel's node; with weights it computes them itself."""
    ours, theirs = twins(batch_first=True)
    x = randn(2, 5, 8, seed=1)
    out_o = ours(I(x), I(x), I(x), need_weights=need_weights)[0]
    out_t = theirs(x, x, x, need_weights=need_weights)[0]
    assert (FLASH in _graph_names(out_o)) == (FLASH in _graph_names(out_t)) == (not need_weights)
    assert_same(out_o, out_t, exact_layout=False, **TOL64)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_reaches_the_backend_torchs_does(norm_first):
    built = []
    for lib in (internals, torch):
        lib.manual_seed(0)
        built.append(lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True,
                                                    norm_first=norm_first, dtype=lib.float64))
    x = randn(2, 5, 8, seed=1)
    out_o, out_t = built[0](I(x).requires_grad_()), built[1](x.clone().requires_grad_())
    assert FLASH in _graph_names(out_t)
    assert _graph_names(out_o) == _graph_names(out_t)
    assert_same(out_o, out_t, exact_layout=False, **TOL64)
