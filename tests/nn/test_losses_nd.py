"""Losses and layers of a training stack against torch: nll_loss and cross_entropy over
(N, C, d1, ...) inputs (nll_loss2d), the legacy size_average/reduce arguments, Conv2d's padding
modes, layer_norm's output layout, and the errors torch raises for mixed dtypes and bool pooling."""
import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same_error, same_outcome

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
    ours, theirs = assert_same_error(lambda: F.nll_loss(x, t), lambda: NNF.nll_loss(tx, tt))
    assert str(ours) == str(theirs)


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


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "zeros"])
@pytest.mark.parametrize("padding", [1, (1, 2), "same", "valid"])
def test_conv2d_padding_modes_match_torch(mode, padding):
    ours = internals.nn.Conv2d(2, 3, 3, padding=padding, padding_mode=mode, dtype=internals.float64)
    theirs = torch.nn.Conv2d(2, 3, 3, padding=padding, padding_mode=mode, dtype=torch.float64)
    ours.load_state_dict({k: internals.from_torch(v.detach()) for k, v in theirs.state_dict().items()})
    assert repr(ours) == repr(theirs)       # extra_repr names the padding mode
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
    ours, theirs = assert_same_error(lambda: ERRORS[name](internals, F), lambda: ERRORS[name](torch, NNF))
    assert str(ours) == str(theirs)


MSE_DTYPES = ["float32", "float16", "int64", "int32", "bool", "complex64"]


@pytest.mark.parametrize("reduction", [0, 1])
@pytest.mark.parametrize("target_dtype", MSE_DTYPES)
@pytest.mark.parametrize("self_dtype", MSE_DTYPES)
def test_mse_loss_operator_checks_dtypes_in_its_kernel(self_dtype, target_dtype, reduction):
    """The operator itself (not only F.mse_loss) computes in the common dtype and refuses
    the dtypes torch's loop has no case for (integers, bool, complex)."""
    def run(lib):
        a = lib.tensor([1.5, 2.0, -1.0]).to(getattr(lib, self_dtype))
        b = lib.tensor([1.0, 0.0, 3.0]).to(getattr(lib, target_dtype))
        return lib.ops.aten.mse_loss(a, b, reduction)
    same_outcome(run)


@pytest.mark.parametrize("grad_dtype", ["float32", "int64", "float16"])      # no complex32 in internals
@pytest.mark.parametrize("target_dtype", ["float32", "int64", "bool", "complex64"])
@pytest.mark.parametrize("self_dtype", MSE_DTYPES)
def test_mse_loss_backward_writes_self_dtype_or_refuses_an_unsafe_cast(self_dtype, target_dtype, grad_dtype):
    """Torch's backward writes into a contiguous tensor of ``self``'s dtype: a common dtype that
    cannot be cast into it raises, integers compute with the norm truncated, bool and complex
    have no loop."""
    def run(lib, reduction=1, n=4):
        a = lib.arange(float(n)).reshape(2, n // 2).t().to(getattr(lib, self_dtype))
        b = lib.ones(n // 2, 2).to(getattr(lib, target_dtype))
        g = lib.tensor(3.0).to(getattr(lib, grad_dtype))
        return lib.ops.aten.mse_loss_backward(g, a, b, reduction)
    same_outcome(run)
    same_outcome(lambda lib: run(lib, 2, 2))


def _loss_operand(lib, dtype, transposed=False, shift=0.0):
    x = (lib.arange(6.0).reshape(3, 2) * 0.37 - 0.8 + shift).to(getattr(lib, dtype))
    return x.t() if transposed else x


LOSS_OPERATORS = {
    "huber_loss": (lambda lib, a, b, r: lib.ops.aten.huber_loss(a, b, r, 0.5),
                   lambda lib, g, a, b, r: lib.ops.aten.huber_loss_backward(g, a, b, r, 0.5)),
    "smooth_l1_loss": (lambda lib, a, b, r: lib.ops.aten.smooth_l1_loss(a, b, r, 0.5),
                       lambda lib, g, a, b, r: lib.ops.aten.smooth_l1_loss_backward(g, a, b, r, 0.5)),
    "smooth_l1_loss_beta_0": (lambda lib, a, b, r: lib.ops.aten.smooth_l1_loss(a, b, r, 0.0),
                              lambda lib, g, a, b, r: lib.ops.aten.smooth_l1_loss_backward(g, a, b, r, 0.0)),
    "binary_cross_entropy": (
        lambda lib, a, b, r: lib.ops.aten.binary_cross_entropy(a.sigmoid(), b.sigmoid(), None, r),
        lambda lib, g, a, b, r: lib.ops.aten.binary_cross_entropy_backward(g, a.sigmoid(), b.sigmoid(), None, r)),
}


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32"), ("float16", "float32"),
                                    ("int64", "float32"), ("int64", "int64"), ("float32", "int64")])
@pytest.mark.parametrize("name", list(LOSS_OPERATORS))
def test_pointwise_loss_operators_promote_or_refuse_as_torch(name, dtypes):
    """huber_loss writes into a tensor of the input's dtype (float64 targets do not make a float64
    loss), smooth_l1_loss into the common dtype, binary_cross_entropy refuses mixed dtypes;
    integer loops do not exist."""
    forward, _ = LOSS_OPERATORS[name]
    for reduction in (0, 1):
        same_outcome(lambda lib, r=reduction: forward(lib, _loss_operand(lib, dtypes[0]),
                                                      _loss_operand(lib, dtypes[1], shift=1.0), r))


@pytest.mark.parametrize("dtypes", [("float32", "float32", "float64"), ("float32", "float16", "float32"),
                                    ("float64", "float32", "float32"), ("int64", "int64", "int64"),
                                    ("float32", "int64", "float32"), ("int64", "float32", "int64")])
@pytest.mark.parametrize("name", list(LOSS_OPERATORS))
def test_pointwise_loss_backward_operators_check_dtypes_as_torch(name, dtypes):
    """The backward loops: smooth L1 promotes and casts safely into the input's dtype, Huber and
    binary cross-entropy take one dtype only (each naming the one it expected)."""
    _, backward = LOSS_OPERATORS[name]
    grad, x, target = dtypes
    same_outcome(lambda lib: backward(lib, lib.tensor(1.5).to(getattr(lib, grad)), _loss_operand(lib, x),
                                      _loss_operand(lib, target, shift=1.0), 1))


@pytest.mark.parametrize("name", list(LOSS_OPERATORS))
def test_pointwise_loss_layouts_and_empty_means_as_torch(name):
    """Gradients are contiguous (binary cross-entropy's follow the input), the unreduced loss of
    a transposed input is laid out as torch lays it, and an empty 'mean' has a gradient."""
    forward, backward = LOSS_OPERATORS[name]
    for reduction in (0, 2):
        same_outcome(lambda lib, r=reduction: forward(lib, _loss_operand(lib, "float32", transposed=True),
                                                      _loss_operand(lib, "float32", shift=1.0).t().contiguous(), r))
        same_outcome(lambda lib, r=reduction: backward(
            lib, _loss_operand(lib, "float32", True) if r == 0 else lib.tensor(1.0),
            _loss_operand(lib, "float32").t().contiguous().t(), _loss_operand(lib, "float32", shift=1.0), r))
    same_outcome(lambda lib: backward(lib, lib.tensor(1.0), lib.ones(0, 3), lib.ones(0, 3), 1))
