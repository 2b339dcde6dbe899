"""Differential tests of bags of embeddings against torch: ``F.embedding_bag`` and
``nn.EmbeddingBag`` (``_embedding_bag``, ``EmbeddingBagBackward0``).

PyTorch's OpInfo samples; random bags (1-D input with offsets, empty bags, ``include_last_offset``,
2-D input) in each mode (sum, mean, max), with ``per_sample_weights`` and ``padding_idx``: the
output, the gradients of the weight and of the per-sample weights, and the node name; errors;
the module's initialisation from one seed, its repr and ``from_pretrained``. Sums of a bag add
rows in position order, as torch's loop does, but torch's vectorised loop may fuse a scaling into
an add, so float32 compares within a few ulps.
"""
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error, compare_call, opinfo_samples, to_ours
from hypothesis import given, settings
from hypothesis import strategies as hs
from torch.testing._internal.common_methods_invocations import op_db

import internals

F, NNF = internals.nn.functional, torch.nn.functional
I = internals.from_torch      # noqa: E741
TOL = {torch.float32: (2e-6, 2e-6), torch.float64: (1e-14, 1e-14)}
# OpInfo's values reach ±9, their products ±81: a sum that cancels keeps the ulps of its terms
OPINFO_TOL = {torch.float32: (2e-6, 2e-5), torch.float64: (1e-14, 1e-13)}
OPINFO = next(op for op in op_db if op.name == "nn.functional.embedding_bag")


def _ours(weight, idx, **kwargs):
    return F.embedding_bag(idx, weight, **kwargs)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64), ids=str)
def test_opinfo_samples(dtype):
    ran = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sample in opinfo_samples(OPINFO, dtype):
            x, args, kwargs = sample.input, sample.args, sample.kwargs
            if kwargs.get("sparse"):       # internals has no sparse gradient
                continue
            ours = (to_ours(x), to_ours(tuple(args)), {k: to_ours(v) for k, v in kwargs.items()})
            compare_call(_ours, OPINFO.op, (x, args, kwargs), ours, OPINFO_TOL)
            ran += 1
    assert ran >= 30


def _run(lib, weight, idx, psw, **kwargs):
    w = (I(weight) if lib is internals else weight.clone()).requires_grad_()
    p = None if psw is None else (I(psw) if lib is internals else psw.clone()).requires_grad_()
    i = {k: I(v) if lib is internals and isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    out = lib.nn.functional.embedding_bag(I(idx) if lib is internals else idx, w, per_sample_weights=p, **i)
    g = torch.linspace(-1, 2, out.numel(), dtype=weight.dtype).reshape(tuple(out.shape))
    out.backward(I(g) if lib is internals else g)
    return out, type(out.grad_fn).__name__, w.grad, None if p is None else p.grad


@settings(deadline=None, max_examples=60)
@given(mode=hs.sampled_from(["sum", "mean", "max"]), rows=hs.integers(1, 6), length=hs.integers(0, 9),
       cuts=hs.lists(hs.integers(0, 9), max_size=4), weighted=hs.booleans(), last=hs.booleans(),
       padding=hs.sampled_from([None, 0, 2, -1]), two_d=hs.booleans(), freq=hs.booleans(),
       dtype=hs.sampled_from([torch.float32, torch.float64]), seed=hs.integers(0, 10))
def test_embedding_bag_matches_torch(mode, rows, length, cuts, weighted, last, padding, two_d, freq, dtype, seed):
    torch.manual_seed(seed)
    weight = torch.randn(rows, 3, dtype=dtype)
    kwargs = dict(mode=mode, scale_grad_by_freq=freq and mode != "max",
                  padding_idx=None if padding is None or padding >= rows else padding)
    if two_d:
        idx = torch.randint(0, rows, (3, max(length // 3, 1)))
    else:
        idx = torch.randint(0, rows, (length,))
        starts = sorted({0, *[c for c in cuts if c <= length]})
        # with include_last_offset the offsets end with the input's length, as the docs ask (torch's
        # max mode reads past its buffers otherwise)
        kwargs.update(offsets=torch.tensor(sorted({*starts, length}) if last else starts), include_last_offset=last)
    psw = torch.randn(idx.shape, dtype=dtype) if weighted and mode == "sum" else None
    try:
        expected = _run(torch, weight, idx, psw, **kwargs)
    except Exception:
        assert_same_error(lambda: _run(internals, weight, idx, psw, **kwargs),
                          lambda: _run(torch, weight, idx, psw, **kwargs))
        return
    got = _run(internals, weight, idx, psw, **kwargs)
    assert got[1] == expected[1] == "EmbeddingBagBackward0"
    rtol, atol = TOL[dtype]
    for k in (0, 2, 3):       # the output, the weight's gradient, the per-sample weights' gradient
        ours, theirs = got[k], expected[k]
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            assert_same(ours, theirs, exact_layout=False, rtol=rtol, atol=atol)


@pytest.mark.parametrize("call", [
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o, mode="median"),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i.view(2, 2), w, o),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o.view(1, 2)),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o + 1),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o * 9),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o, mode="mean", per_sample_weights=w[:4, 0]),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o, mode="max", scale_grad_by_freq=True),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o, per_sample_weights=w[:3, 0]),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i.float(), w, o),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w[0], o),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i, w, o, padding_idx=7),
    lambda lib, w, i, o: lib.nn.functional.embedding_bag(i + 10, w, o),
], ids=["unknown_mode", "no_offsets", "offsets_with_2d", "2d_offsets", "first_offset_not_zero",
        "offset_past_end", "weights_with_mean", "max_with_freq", "weights_wrong_shape", "float_indices",
        "1d_weight", "padding_out_of_range", "index_out_of_range"])
def test_errors_match_torch(call):
    w, i, o = torch.randn(5, 2), torch.tensor([0, 2, 4, 1]), torch.tensor([0, 2])
    assert_same_error(lambda: call(internals, I(w), I(i), I(o)), lambda: call(torch, w, i, o))


def test_module_from_one_seed():
    made = []
    for lib in (internals, torch):
        lib.manual_seed(3)
        made.append(lib.nn.EmbeddingBag(7, 4, mode="sum", padding_idx=2))
    ours, theirs = made
    assert repr(ours) == repr(theirs)
    assert_same(ours.weight, theirs.weight)
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    idx, offsets = torch.tensor([1, 2, 4, 5, 6, 2]), torch.tensor([0, 2, 2])
    assert_same(ours(I(idx), I(offsets)), theirs(idx, offsets), rtol=2e-6, atol=2e-6)
    w = torch.randn(3, 2)
    pre_o, pre_t = internals.nn.EmbeddingBag.from_pretrained(I(w)), torch.nn.EmbeddingBag.from_pretrained(w)
    assert pre_o.weight.requires_grad == pre_t.weight.requires_grad and repr(pre_o) == repr(pre_t)


def _bag_gradients_twice(lib, mode):
    """The weight's (and in sum mode the per-sample weights') gradient made with create_graph:
    its node and next functions, then what a second derivative through each one does."""
    weight = lib.tensor([[0.5, -1.0], [2.0, 0.3], [1.5, -0.7], [0.2, 0.9]], requires_grad=True)
    psw = lib.tensor([0.5, 2.0, -1.0, 1.5], requires_grad=True) if mode == "sum" else None
    out = lib.nn.functional.embedding_bag(lib.tensor([0, 2, 1, 3]), weight, lib.tensor([0, 2]), mode=mode,
                                          per_sample_weights=psw)
    sources = (weight,) if psw is None else (weight, psw)
    grads = lib.autograd.grad((out * out).sum(), sources, create_graph=True)
    seen = []
    for g in grads:
        seen.append((g.grad_fn.name(), [n and n.name() for n, _ in g.grad_fn.next_functions]))
        try:
            lib.autograd.grad(g.sum(), sources, allow_unused=True)
            seen.append("differentiated")
        except Exception as error:
            seen.append((type(error).__name__, str(error)))
    return seen


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradients_refuse_a_second_derivative_as_torch(mode):
    """torch's ``EmbeddingBagBackwardBackward0`` (and, for the per-sample weights, a NotImplemented
    node) records the first gradient and raises on the second; it used to come back detached."""
    assert _bag_gradients_twice(internals, mode) == _bag_gradients_twice(torch, mode)


def _both_gradients_twice(lib):
    weight = lib.tensor([[0.5, -1.0], [2.0, 0.25], [1.5, -0.75]], dtype=lib.float64, requires_grad=True)
    scale = lib.tensor([0.5, -2.0, 1.0], dtype=lib.float64, requires_grad=True)
    out = lib.nn.functional.embedding_bag(lib.tensor([0, 2, 1]), weight, lib.tensor([0, 1]), mode="sum",
                                          per_sample_weights=scale)
    gw, gs = lib.autograd.grad(out.sum(), (weight, scale), create_graph=True)
    try:
        lib.autograd.grad(gw.sum() + gs.sum(), (weight, scale), allow_unused=True)
    except Exception as error:
        return type(error).__name__, str(error)
    return "differentiated"


def test_a_second_derivative_through_both_bag_gradients_meets_torchs_error_first():
    """Both first gradients in one second backward: torch's NotImplemented node (the per-sample
    weights') carries the largest sequence number, so its RuntimeError is the one raised, not the
    weight gradient's NotImplementedError."""
    assert _both_gradients_twice(internals) == _both_gradients_twice(torch)
