"""Differential tests of the Transformer modules against torch (the encoder layer and stack in
detail, then ``nn.Transformer`` with its decoder): built from one seed (same parameter names and
values, deep-copied layers), post-norm and pre-norm, relu, gelu and a callable activation,
batch_first, causal and padding masks, dropout from torch's random stream, eval mode (where
torch switches to its fused kernel), gradients of every parameter, state dicts both ways, the
nested-tensor warning and errors.
"""
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error

import internals

I = internals.from_torch      # noqa: E741
TOL64 = dict(rtol=1e-10, atol=1e-11)


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def twins(num_layers=2, final_norm=False, seed=0, **config):
    """An encoder (two deep copies of one layer) built from one seed in each library."""
    built = []
    for lib in (internals, torch):
        lib.manual_seed(seed)
        layer = lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dtype=lib.float64, **config)
        norm = lib.nn.LayerNorm(8, dtype=lib.float64) if final_norm else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # the nested-tensor notice, tested below
            built.append(lib.nn.TransformerEncoder(layer, num_layers, norm=norm))
    ours, theirs = built
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, value in theirs.state_dict().items():
        assert_same(ours.state_dict()[name], value)
    assert repr(ours) == repr(theirs)
    return ours, theirs


def run_both(ours, theirs, x, **kwargs):
    x_t, x_o = x.clone().requires_grad_(), I(x).requires_grad_()
    o_kwargs = {k: I(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    torch.manual_seed(2)
    out_t = theirs(x_t, **kwargs)
    internals.manual_seed(2)
    out_o = ours(x_o, **o_kwargs)
    assert_same(out_o.detach(), out_t.detach(), exact_layout=False, **TOL64)
    if not torch.is_grad_enabled() or not theirs.training:
        return
    assert type(out_o.grad_fn).__name__ == type(out_t.grad_fn).__name__
    g = randn(*out_t.shape, seed=7)
    out_t.backward(g)
    out_o.backward(I(g))
    assert_same(x_o.grad, x_t.grad, exact_layout=False, **TOL64)
    for (name, p_o), (_, p_t) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_same(p_o.grad, p_t.grad, **TOL64), name


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_trains_like_torch(batch_first, norm_first, activation):
    """Training mode with dropout 0.1 (the default): the masks must be torch's."""
    ours, theirs = twins(batch_first=batch_first, norm_first=norm_first, activation=activation)
    run_both(ours, theirs, randn(3, 5, 8, seed=1))


def test_callable_activation_and_final_norm():
    ours, theirs = twins(final_norm=True, activation="gelu", dropout=0.0)
    ours.layers[0].activation = internals.nn.functional.silu
    theirs.layers[0].activation = torch.nn.functional.silu
    run_both(ours, theirs, randn(4, 2, 8, seed=1))


@pytest.mark.parametrize("masks", ["causal", "causal_hint", "padding", "both"])
def test_masks(masks):
    ours, theirs = twins(batch_first=True)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    padding = torch.zeros(3, 5, dtype=torch.bool)
    padding[1, 3:] = True
    kwargs = {"causal": dict(mask=causal), "causal_hint": dict(mask=causal, is_causal=True),
              "padding": dict(src_key_padding_mask=padding),
              "both": dict(mask=causal, src_key_padding_mask=padding)}[masks]
    run_both(ours, theirs, randn(3, 5, 8, seed=1), **kwargs)


@pytest.mark.parametrize("norm_first", [False, True])
def test_eval_matches_torchs_fused_kernel(norm_first):
    ours, theirs = twins(batch_first=True, norm_first=norm_first)
    ours.eval()
    theirs.eval()
    padding = torch.zeros(3, 5, dtype=torch.bool)
    padding[2, 4] = True
    with torch.no_grad(), internals.no_grad():
        run_both(ours, theirs, randn(3, 5, 8, seed=1))
        run_both(ours, theirs, randn(3, 5, 8, seed=1), src_key_padding_mask=padding)


def test_layer_alone_and_unbatched():
    built = []
    for lib in (internals, torch):
        lib.manual_seed(0)
        built.append(lib.nn.TransformerEncoderLayer(8, 4, 32, dropout=0.2, dtype=lib.float64))
    run_both(*built, randn(6, 8, seed=3))


def test_state_dict_both_ways():
    ours, _ = twins(seed=1)
    _, theirs = twins(seed=2)
    ours.load_state_dict({k: I(v) for k, v in theirs.state_dict().items()})
    theirs.eval()
    ours.eval()
    run_both(ours, theirs, randn(5, 2, 8, seed=1))
    _, fresh = twins(seed=3)
    fresh.load_state_dict({k: v.to_torch() for k, v in ours.state_dict().items()})
    assert all(torch.equal(v, theirs.state_dict()[k]) for k, v in fresh.state_dict().items())


def test_generate_square_subsequent_mask():
    assert_same(internals.nn.Transformer.generate_square_subsequent_mask(4),
                torch.nn.Transformer.generate_square_subsequent_mask(4))
    assert_same(internals.nn.Transformer.generate_square_subsequent_mask(3, dtype=internals.float64),
                torch.nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64))


def transformer_twins(seed=0, **config):
    """``nn.Transformer`` (encoder and decoder, Xavier-redrawn matrices) from one seed in each."""
    built = []
    for lib in (internals, torch):
        lib.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            built.append(lib.nn.Transformer(8, 2, 2, 2, 16, dtype=lib.float64, **config))
    ours, theirs = built
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, value in theirs.state_dict().items():
        assert_same(ours.state_dict()[name], value)
    assert repr(ours) == repr(theirs)
    return ours, theirs


@pytest.mark.parametrize("config", [dict(), dict(batch_first=True, norm_first=True, activation="gelu")],
                         ids=["post_norm", "pre_norm_gelu"])
def test_transformer_trains_like_torch(config):
    """Encoder and decoder with a causal target mask, a memory padding mask and dropout."""
    ours, theirs = transformer_twins(**config)
    batch_first = config.get("batch_first", False)
    src, tgt = randn(3, 6, 8, seed=1), randn(3, 4, 8, seed=2)
    if not batch_first:
        src, tgt = src.transpose(0, 1).contiguous(), tgt.transpose(0, 1).contiguous()
    padding = torch.zeros(3, 6, dtype=torch.bool)
    padding[1, 4:] = True
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    ins_t = [src.clone().requires_grad_(), tgt.clone().requires_grad_()]
    ins_o = [I(src).requires_grad_(), I(tgt).requires_grad_()]
    torch.manual_seed(4)
    out_t = theirs(*ins_t, tgt_mask=tgt_mask, memory_key_padding_mask=padding)
    internals.manual_seed(4)
    out_o = ours(*ins_o, tgt_mask=I(tgt_mask), memory_key_padding_mask=I(padding))
    assert_same(out_o.detach(), out_t.detach(), exact_layout=False, **TOL64)
    g = randn(*out_t.shape, seed=5)
    out_t.backward(g)
    out_o.backward(I(g))
    for a, b in zip(ins_o, ins_t):
        assert_same(a.grad, b.grad, exact_layout=False, **TOL64)
    for (name, p_o), (_, p_t) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_same(p_o.grad, p_t.grad, **TOL64), name


def test_transformer_errors():
    for bad in (lambda lib, m: m(lib.randn(5, 2, 8, dtype=lib.float64), lib.randn(4, 3, 8, dtype=lib.float64)),
                lambda lib, m: m(lib.randn(5, 2, 8, dtype=lib.float64), lib.randn(4, 2, 6, dtype=lib.float64))):
        ours, theirs = transformer_twins()
        err_o, err_t = assert_same_error(lambda bad=bad, m=ours: bad(internals, m),
                                         lambda bad=bad, m=theirs: bad(torch, m))
        assert str(err_o) == str(err_t)


@pytest.mark.parametrize("config", [dict(), dict(batch_first=True, norm_first=True),
                                    dict(batch_first=True), dict(batch_first=True, bias=False)])
def test_nested_tensor_notice(config):
    messages = []
    for lib in (internals, torch):
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, **config)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.TransformerEncoder(layer, 1)
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1]


def test_bad_activation():
    err_o, err_t = assert_same_error(lambda: internals.nn.TransformerEncoderLayer(8, 2, activation="tanh"),
                                     lambda: torch.nn.TransformerEncoderLayer(8, 2, activation="tanh"))
    assert str(err_o) == str(err_t)


def test_mismatched_masks_warn_from_the_encoders_forward():
    """A bool padding mask beside a float attention mask: torch warns once per call, attributed
    (``stacklevel=2``) to the line of the encoder's ``forward`` that canonicalises the mask, so
    Python's once-per-location filter shows it once however the module is called; attributed to
    the module-call machinery, it showed again for each way in (training, then ``no_grad``)."""
    seen = {}
    for lib in (internals, torch):
        model = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 1,
                                          enable_nested_tensor=False)
        x, pad = lib.zeros(2, 5, 8), lib.zeros(2, 5, dtype=lib.bool)
        mask = lib.nn.Transformer.generate_square_subsequent_mask(5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model(x, mask=mask, src_key_padding_mask=pad)
        seen[lib] = [(w.category, str(w.message), w.filename.replace("\\", "/").rsplit("/", 3)[-3:])
                     for w in caught]
    assert seen[internals] == seen[torch]
    assert len(seen[torch]) == 1 and seen[torch][0][2] == ["nn", "modules", "transformer.py"]


def _layer_twins(**config):
    built = []
    for lib in (internals, torch):
        lib.manual_seed(0)
        built.append(lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dtype=lib.float64, **config).eval())
    return built


@pytest.mark.parametrize("case", ["fused", "fused_with_mask", "hooked", "grad"])
def test_causal_hint_where_torchs_fused_layer_ignores_it(case):
    """torch's fused encoder layer takes no ``is_causal``: in inference, with no mask, it attends
    everywhere (and with a mask, the mask decides). A forward hook keeps the layer off its fused
    kernel but not its attention, whose fused kernel ignores the hint too; with a gradient to
    record, the hint without a mask is the attention's RuntimeError."""
    ours, theirs = _layer_twins()
    if case == "hooked":
        for m in (ours, theirs):
            m.linear1.register_forward_hook(lambda *args: None)       # keeps torch's layer off its fused kernel
    x = randn(2, 5, 8, seed=1)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    kwargs_t = dict(is_causal=True, src_mask=mask if case == "fused_with_mask" else None)
    kwargs_o = dict(is_causal=True, src_mask=I(mask) if case == "fused_with_mask" else None)
    grad = case == "grad"
    with torch.set_grad_enabled(grad), internals.set_grad_enabled(grad):
        if case == "grad":
            err_o, err_t = assert_same_error(lambda: ours(I(x), **kwargs_o), lambda: theirs(x, **kwargs_t))
            assert str(err_o) == str(err_t)
            return
        assert_same(ours(I(x), **kwargs_o), theirs(x, **kwargs_t), exact_layout=False, **TOL64)


@pytest.mark.parametrize("mask_check", [True, False])
@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("shape", [(2, 4), (3, 5), (2, 5, 1)], ids=["short", "batch", "three_d"])
def test_encoder_refuses_a_padding_mask_of_another_shape_as_torch(shape, grad, mask_check):
    """In inference the encoder checks the padding against the input before its layers run (as
    torch's nested-tensor calls do: with ``mask_check`` always, without it when it would pack)."""
    def call(lib):
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dtype=lib.float64)
        encoder = lib.nn.TransformerEncoder(layer, 1, mask_check=mask_check).eval()
        x = lib.ones(2, 5, 8, dtype=lib.float64, requires_grad=grad)
        return encoder(x, src_key_padding_mask=lib.zeros(*shape, dtype=lib.bool))
    err_o, err_t = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(err_o) == str(err_t)


@pytest.mark.parametrize("mask_dtype", ["bool", "float"])
def test_fused_layer_leaves_a_fully_masked_row_nan_as_torch(mask_dtype):
    """Where torch runs its fused layer, the masks are added to the scores before a plain
    softmax: a query whose keys are all masked gets NaN (query 3 here), as in torch."""
    ours, theirs = _layer_twins()
    keep_out = torch.zeros(5, 5, dtype=torch.bool)
    keep_out[3] = True
    mask = keep_out
    if mask_dtype == "float":
        mask = torch.zeros(5, 5, dtype=torch.float64).masked_fill(keep_out, -torch.inf)
    x = randn(2, 5, 8, seed=1)
    with torch.no_grad(), internals.no_grad():
        expected = theirs(x, src_mask=mask)
        got = ours(I(x), src_mask=I(mask))
    assert expected[:, 3].isnan().all()
    assert_same(got, expected, exact_layout=False, **TOL64)
