"""Losses and layers of a training stack against torch: nll_loss and cross_entropy over
(N, C, d1, ...) inputs (nll_loss2d), the legacy size_average/reduce arguments, Conv2d's padding
modes, layer_norm's output layout, and the errors torch raises for mixed dtypes and bool pooling."""
import warnings

import numpy as np
import pytest
import torch

import internals

F, NNF = internals.nn.functional, torch.nn.functional


def _pair(shape, seed=0, requires_grad=True):
    values = np.random.default_rng(seed).standard_normal(shape)
    return (internals.tensor(values, dtype=internals.float64, requires_grad=requires_grad),
            torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad))


def _targets(shape, classes, seed=1):
    values = np.random.default_rng(seed).integers(0, classes, shape)
    values.flat[0] = -100          # one ignored target
    return internals.tensor(values), torch.tensor(values)


def _check(ours, theirs, inputs):
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().to_torch().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    ours.sum().backward()
    theirs.sum().backward()
    for i, t in inputs:
        assert i.grad.stride() == t.grad.stride()
        np.testing.assert_allclose(i.grad.to_torch().numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 4), (2, 3, 2, 2, 2), (0, 3, 2, 2)],
                         ids=["4d", "3d", "5d", "empty"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_spatial_cross_entropy_matches_torch(shape, reduction, weighted):
    (x, tx), (t, tt) = _pair(shape), _targets((shape[0], *shape[2:]), shape[1]) if shape[0] else (
        internals.zeros((0, *shape[2:]), dtype=internals.int64), torch.zeros((0, *shape[2:]), dtype=torch.int64))
    w, tw = (internals.tensor([1.0, 2.0, 0.5], dtype=internals.float64),
             torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)) if weighted else (None, None)
    ours = F.cross_entropy(x, t, weight=w, reduction=reduction)
    theirs = NNF.cross_entropy(tx, tt, weight=tw, reduction=reduction)
    if shape[0] == 0 and reduction == "mean":
        assert ours.isnan().item() and theirs.isnan().item()
        return
    _check(ours, theirs, [(x, tx)])


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_spatial_nll_loss_matches_torch(reduction):
    (x, tx), (t, tt) = _pair((2, 3, 2, 3)), _targets((2, 2, 3), 3)
    _check(F.nll_loss(x, t, reduction=reduction), NNF.nll_loss(tx, tt, reduction=reduction), [(x, tx)])


@pytest.mark.parametrize("args", [((2, 3, 4), (2, 5)), ((2, 3, 4, 4), (2, 4)), ((2, 3, 4), (3, 4))],
                         ids=["target_size", "target_dims", "batch_size"])
def test_spatial_nll_loss_errors_match_torch(args):
    (x, tx), (t, tt) = _pair(args[0]), _targets(args[1], 3)
    with pytest.raises(Exception) as theirs:
        NNF.nll_loss(tx, tt)
    with pytest.raises(type(theirs.value)) as ours:
        F.nll_loss(x, t)
    assert str(ours.value) == str(theirs.value)


def test_empty_batch_of_probability_targets_grad_fn():
    (x, tx), (p, tp) = _pair((0, 3)), _pair((0, 3), requires_grad=False)
    assert type(F.cross_entropy(x, p).grad_fn).__name__ == type(NNF.cross_entropy(tx, tp).grad_fn).__name__


LEGACY = [dict(size_average=False), dict(reduce=False), dict(size_average=True, reduce=True),
          dict(size_average=False, reduce=False)]


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("legacy", LEGACY, ids=["no_size_average", "no_reduce", "both", "neither"])
def test_legacy_reduction_arguments_match_torch(loss, legacy):
    (x, tx) = _pair((3, 4))
    if loss in ("nll_loss", "cross_entropy"):
        (t, tt) = internals.tensor([0, 3, 1]), torch.tensor([0, 3, 1])
    else:
        (t, tt) = _pair((3, 4), seed=5, requires_grad=False)
        t, tt = t.sigmoid(), tt.sigmoid()
    if loss == "binary_cross_entropy":
        x, tx = x.sigmoid(), tx.sigmoid()
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        ours = getattr(F, loss)(x, t, **legacy)
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = getattr(NNF, loss)(tx, tt, **legacy)
    assert [str(w.message) for w in ours_warned] == [str(w.message) for w in theirs_warned]
    np.testing.assert_allclose(ours.detach().to_torch().numpy(), theirs.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("module", ["MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
                                    "BCEWithLogitsLoss"])
def test_loss_modules_take_legacy_arguments(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert getattr(internals.nn, module)(size_average=False).reduction == \
            getattr(torch.nn, module)(size_average=False).reduction
        assert getattr(internals.nn, module)(reduce=False).reduction == \
            getattr(torch.nn, module)(reduce=False).reduction


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (1, 2), "same"])
def test_conv2d_padding_modes_match_torch(mode, padding):
    ours = internals.nn.Conv2d(2, 3, 3, padding=padding, padding_mode=mode, dtype=internals.float64)
    theirs = torch.nn.Conv2d(2, 3, 3, padding=padding, padding_mode=mode, dtype=torch.float64)
    ours.load_state_dict({k: internals.from_torch(v.detach()) for k, v in theirs.state_dict().items()})
    x, tx = _pair((1, 2, 5, 6))
    _check(ours(x), theirs(tx), [(x, tx)])


def test_conv2d_unknown_padding_mode_raises_value_error():
    with pytest.raises(ValueError):
        torch.nn.Conv2d(1, 1, 3, padding_mode="foo")
    with pytest.raises(ValueError):
        internals.nn.Conv2d(1, 1, 3, padding_mode="foo")


@pytest.mark.parametrize("make", [lambda lib: lib.arange(12.).reshape(3, 4).t(),
                                  lambda lib: lib.arange(24.).reshape(2, 3, 4).transpose(0, 2)],
                         ids=["transposed", "permuted"])
def test_layer_norm_of_a_non_contiguous_input_is_contiguous(make):
    ours, theirs = F.layer_norm(make(internals), make(internals).shape[-1:]), \
        NNF.layer_norm(make(torch), make(torch).shape[-1:])
    assert ours.stride() == theirs.stride()
    np.testing.assert_allclose(ours.to_torch().numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


ERRORS = {
    "max_pool2d_bool": lambda lib, F: F.max_pool2d(lib.ones(1, 2, 2, dtype=lib.bool), 2),
    "batch_norm_float64_input": lambda lib, F: lib.nn.BatchNorm1d(2)(lib.ones(3, 2, dtype=lib.float64)),
    "batch_norm_float64_running_stats": lambda lib, F: F.batch_norm(lib.ones(3, 2), lib.zeros(2, dtype=lib.float64),
                                                                    lib.ones(2, dtype=lib.float64)),
    "mse_loss_of_integers": lambda lib, F: F.mse_loss(lib.ones(3, dtype=lib.int64), lib.zeros(3, dtype=lib.int64)),
    "layer_norm_float32_weight": lambda lib, F: F.layer_norm(lib.ones(2, 3, dtype=lib.float64), (3,), lib.ones(3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch, NNF)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[name](internals, F)
    assert str(ours.value) == str(theirs.value)
