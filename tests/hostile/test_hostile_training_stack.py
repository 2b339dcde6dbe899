"""The training stack given unusual but legal arguments, and illegal ones: losses, layers, their
first and second gradients, optimizers, schedulers, data loading, save/load, the CUDA simulator.

Every case runs the same program on ``torch`` and on ``internals`` and compares what comes back:
values (exactly, or within the ulps CONTRIBUTING.md names), dtype, shape, strides, ``grad_fn``
names, gradients of first and second order, and the exception class where torch refuses."""
import io

import pytest
import torch
from helpers import LIBM_ULPS, PRODUCT_ULPS

import internals

# A loss or a layer chains library functions (log, exp) with a reduction: each rounds on its own
# CPU path, so the last bits of the composite may move by the sum of both allowances.
COMPOSITE_ULPS = 2 * (LIBM_ULPS + PRODUCT_ULPS)

# A normalisation's backward (and its double backward) sums products of centred values that
# cancel: torch's kernels and the package's group those sums differently, and the cancellation
# magnifies the difference of their last bits (float64 group norm: 129 ulps of a small element,
# 2e-14 relative). A wrong formula is off by far more.
NORM_ULPS = 2 ** 12


def _describe(value):
    """What is compared exactly besides tensor values: a tensor's layout and node, or the value."""
    if isinstance(value, (torch.Tensor, internals.Tensor)):
        return ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape), tuple(value.stride()),
                value.storage_offset(), type(value.grad_fn).__name__ if value.grad_fn is not None else None,
                value.requires_grad)
    return value


def _compare(ours, theirs, ulps, where="result"):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, internals.Tensor), f"{where}: {type(ours).__name__} is not a tensor"
        assert _describe(ours) == _describe(theirs), f"{where}: {_describe(ours)} != {_describe(theirs)}"
        _within_ulps_of_largest(ours.detach().to_torch(), theirs.detach(), ulps, where)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), f"{where}: keys {list(ours)} != {list(theirs)}"
        for k in theirs:
            _compare(ours[k], theirs[k], ulps, f"{where}[{k!r}]")
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), f"{where}: {ours!r} != {theirs!r}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _compare(o, t, ulps, f"{where}[{i}]")
    elif isinstance(theirs, float) and isinstance(ours, float):
        internals.testing.assert_within_ulps(torch.tensor(ours, dtype=torch.float64),
                                             torch.tensor(theirs, dtype=torch.float64), ulps)
    elif isinstance(theirs, (torch.dtype, internals.dtype)):
        assert str(ours).split(".")[-1] == str(theirs).split(".")[-1], where
    elif type(theirs).__module__.startswith("torch"):      # an optimizer, a sampler: its class and printout
        assert type(ours).__name__ == type(theirs).__name__, where
        if " at 0x" not in repr(theirs):
            assert repr(ours) == repr(theirs), f"{where}: {ours!r} != {theirs!r}"
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


def _within_ulps_of_largest(got, expected, ulps, where):
    """``assert_within_ulps``, where an element may also be off by ``ulps`` ulps of the tensor's
    largest finite magnitude: gradients (softmax minus one-hot, second derivatives) are
    differences of near-equal terms, whose small results carry the rounding of the large ones."""
    try:
        internals.testing.assert_within_ulps(got, expected, ulps)
    except AssertionError as first:
        if not expected.is_floating_point() or expected.numel() == 0:
            raise AssertionError(f"{where}: {first}") from None
        finite = torch.isfinite(expected)
        scale = expected[finite].abs().max() if finite.any() else torch.tensor(0.0, dtype=expected.dtype)
        ulp = internals.testing._ulp_of(scale.reshape(1))[0].item()
        apart = torch.where(finite, (got.double() - expected.double()).abs(), 0.0)
        if not (torch.isnan(got) == torch.isnan(expected)).all() or apart.max() > ulps * ulp:
            raise AssertionError(f"{where}: {first}") from None


def twin(program, ulps=0):
    """``program(lib)`` in both libraries: the same results, or the same exception class."""
    try:
        theirs = program(torch)
    except Exception as theirs_error:                       # noqa: BLE001 - the class is compared
        with pytest.raises(Exception) as ours_error:
            program(internals)
        assert type(ours_error.value) is type(theirs_error), (
            f"internals raised {type(ours_error.value).__name__}: {ours_error.value}\n"
            f"torch raised {type(theirs_error).__name__}: {theirs_error}")
        return None
    ours = program(internals)
    _compare(ours, theirs, ulps)
    return ours, theirs


def sample(L, *shape, dtype="float64", seed=0, low=-2.0, high=2.0, grad=True):
    """The same numbers in both libraries: drawn by torch, converted to ``L``'s tensor."""
    g = torch.Generator().manual_seed(seed)
    t = (torch.rand(*shape, generator=g, dtype=torch.float64) * (high - low) + low).to(getattr(torch, dtype))
    x = t if L is torch else internals.from_torch(t)
    return x.requires_grad_(grad) if x.is_floating_point() else x


def labels(L, *shape, classes, seed=1):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(classes, shape, generator=g)
    return t if L is torch else internals.from_torch(t)


def with_grads(L, out, inputs, second=True):
    """``out``, the gradients of ``out`` (weighted by a fixed cotangent) wrt ``inputs``, and the
    gradients of those wrt ``inputs`` again (where the first ones depend on them)."""
    inputs = [x for x in inputs if x.requires_grad]
    cot = L.linspace(0.5, 1.5, max(out.numel(), 1), dtype=out.dtype).reshape(out.shape)
    grads = L.autograd.grad(out, inputs, cot, create_graph=second, allow_unused=True)
    result = [out, list(grads)]
    if second:
        live = [g for g in grads if g is not None and g.requires_grad]
        if live:
            total = sum((g * g).sum() for g in live)
            result.append(list(L.autograd.grad(total, inputs, allow_unused=True)))
    return result


# ============================================================================= losses
F = "nn.functional"


def _f(L, name):
    return getattr(L.nn.functional, name)


CE_CASES = [
    dict(shape=(5, 4), reduction="mean"),
    dict(shape=(5, 4), reduction="sum"),
    dict(shape=(5, 4), reduction="none"),
    dict(shape=(5, 4), reduction="mean", ignore_index=2),
    dict(shape=(5, 4), reduction="mean", ignore_index=-1),
    dict(shape=(5, 4), reduction="sum", ignore_index=1, label_smoothing=0.2),
    dict(shape=(5, 4), reduction="mean", label_smoothing=0.3),
    dict(shape=(5, 4), reduction="none", label_smoothing=0.1, weight=True),
    dict(shape=(5, 4), reduction="mean", label_smoothing=0.1, weight=True),
    dict(shape=(5, 4), reduction="mean", weight=True, ignore_index=0),
    dict(shape=(5, 4), reduction="sum", weight=True),
    dict(shape=(4,), reduction="mean"),
    dict(shape=(4,), reduction="none", label_smoothing=0.5),
    dict(shape=(4,), reduction="mean", weight=True),
    dict(shape=(0, 4), reduction="mean"),
    dict(shape=(0, 4), reduction="sum"),
    dict(shape=(0, 4), reduction="none"),
    dict(shape=(0, 4), reduction="mean", label_smoothing=0.2),
    dict(shape=(2, 4, 3), reduction="mean"),
    dict(shape=(2, 4, 3, 2), reduction="none", weight=True),
    dict(shape=(2, 4, 3, 2), reduction="mean", weight=True, label_smoothing=0.25, ignore_index=3),
    dict(shape=(2, 4, 3), reduction="sum", ignore_index=1),
    dict(shape=(5, 4), reduction="mean", probs=True),
    dict(shape=(5, 4), reduction="none", probs=True, label_smoothing=0.3),
    dict(shape=(5, 4), reduction="sum", probs=True, weight=True),
    dict(shape=(2, 4, 3), reduction="mean", probs=True, weight=True, label_smoothing=0.1),
    dict(shape=(4,), reduction="mean", probs=True),
    dict(shape=(0, 4), reduction="mean", probs=True),
    dict(shape=(5, 4), reduction="mean", all_ignored=True),
    dict(shape=(5, 4), reduction="mean", all_ignored=True, label_smoothing=0.1),
    dict(shape=(5, 4), reduction="mean", ignore_index=2, noncontiguous=True),
    dict(shape=(5, 4), reduction="mean", label_smoothing=1.0),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CE_CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_cross_entropy(case, dtype):
    case = dict(case)
    shape = case.pop("shape")
    weight, probs = case.pop("weight", False), case.pop("probs", False)
    all_ignored, noncontig = case.pop("all_ignored", False), case.pop("noncontiguous", False)

    def run(L):
        x = sample(L, *shape, dtype=dtype)
        if noncontig:
            x = sample(L, shape[1], shape[0], dtype=dtype).t()
        classes = shape[1] if len(shape) > 1 else shape[0]
        batch = (shape[0],) + shape[2:] if len(shape) > 1 else ()
        if probs:
            t = sample(L, *shape, dtype=dtype, seed=3, low=0, high=1).softmax(1 if len(shape) > 1 else 0)
        elif all_ignored:
            t = L.full(batch, -100, dtype=L.long)
        else:
            t = labels(L, *batch, classes=classes)
        w = sample(L, classes, dtype=dtype, seed=4, low=0.2, high=2.0, grad=False) if weight else None
        out = L.nn.functional.cross_entropy(x, t, weight=w, **case)
        return with_grads(L, out, [x, t] if probs else [x])
    twin(run, ulps=COMPOSITE_ULPS if dtype == "float64" else 4 * COMPOSITE_ULPS)


@pytest.mark.parametrize("kw", [dict(reduction="none"), dict(reduction="sum"), dict(ignore_index=1),
                                dict(weight=True), dict(weight=True, ignore_index=0, reduction="sum"),
                                dict(weight=True, reduction="none")])
@pytest.mark.parametrize("shape", [(5, 3), (3,), (0, 3), (2, 3, 4), (2, 3, 2, 2)])
def test_nll_loss(shape, kw):
    kw = dict(kw)
    weight = kw.pop("weight", False)

    def run(L):
        x = sample(L, *shape)
        batch = (shape[0],) + shape[2:] if len(shape) > 1 else ()
        classes = shape[1] if len(shape) > 1 else shape[0]
        w = sample(L, classes, seed=4, low=0.2, high=2.0, grad=False) if weight else None
        out = L.nn.functional.nll_loss(x, labels(L, *batch, classes=classes), weight=w, **kw)
        return with_grads(L, out, [x])
    twin(run, ulps=PRODUCT_ULPS)


@pytest.mark.parametrize("call", [
    "L.nn.functional.cross_entropy(sample(L, 3, 4), L.tensor([0, 1, 4]))",
    "L.nn.functional.cross_entropy(sample(L, 3, 4), L.tensor([0, 1, 2]), label_smoothing=1.5)",
    "L.nn.functional.cross_entropy(sample(L, 3, 4), L.tensor([0, 1, 2]), label_smoothing=-0.1)",
    "L.nn.functional.cross_entropy(sample(L, 3, 4), L.tensor([0, 1]))",
    "L.nn.functional.cross_entropy(sample(L, 3, 4), L.tensor([0., 1, 2]))",
    "L.nn.functional.cross_entropy(sample(L, 3, 4), sample(L, 3, 5))",
    "L.nn.functional.cross_entropy(sample(L, 3, 4), L.tensor([0, 1, 2]), weight=L.ones(3, dtype=L.float64))",
    "L.nn.functional.cross_entropy(sample(L, 3, 4), L.tensor([0, 1, 2]), reduction='avg')",
    "L.nn.functional.cross_entropy(sample(L, 3, 4), L.tensor([0, 1, 2]).int())",
    "L.nn.functional.cross_entropy(sample(L, 3, 4), sample(L, 3, 4).float())",
    "L.nn.functional.nll_loss(sample(L, 3, 4), L.tensor([0, 1, -5]))",
    "L.nn.functional.nll_loss(sample(L, 3, 4), L.tensor([0, 1, -5]), ignore_index=-5)",
    "L.nn.functional.nll_loss(sample(L, 2, 3, 4, 5, 6), L.zeros(2, 4, 5, 6, dtype=L.long))",
    "L.nn.functional.nll_loss(sample(L, 2, 3, 4), L.zeros(2, 5, dtype=L.long))",
    "L.nn.functional.binary_cross_entropy(sample(L, 3, low=0, high=1), sample(L, 4, low=0, high=1))",
    "L.nn.functional.binary_cross_entropy(sample(L, 3, low=0.5, high=2), sample(L, 3, low=0, high=1))",
    "L.nn.functional.mse_loss(sample(L, 3), sample(L, 4))",
    "L.nn.functional.kl_div(sample(L, 3), sample(L, 3), reduction='bogus')",
    "L.nn.functional.smooth_l1_loss(sample(L, 3), sample(L, 3), beta=-1.0)",
    "L.nn.functional.huber_loss(sample(L, 3), sample(L, 3), delta=0.0)",
    "L.nn.functional.huber_loss(sample(L, 3), sample(L, 3), delta=-1.0)",
])
def test_loss_refusals(call):
    twin(lambda L: eval(call), ulps=PRODUCT_ULPS)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_binary_cross_entropy_at_zero_and_one_divides_by_torchs_float_epsilon(reduction):
    """An input of exactly 0 or 1 makes x(1 − x) zero: the gradient divides by Loss.cpp's
    epsilon, a float (9.99999996e-13, not 1e-12), which shows in a float64 gradient's 10th digit.
    The second gradients (their own constant, a double 1e-12) are compared too."""
    def run(L):
        x = L.tensor([0.0, 1.0, 0.5, 1e-13], dtype=L.float64, requires_grad=True)
        t = L.tensor([1.0, 0.0, 1.0, 0.3], dtype=L.float64, requires_grad=True)
        return with_grads(L, L.nn.functional.binary_cross_entropy(x, t, reduction=reduction), [x, t])
    twin(run, ulps=COMPOSITE_ULPS)


@pytest.mark.parametrize("kw", [dict(), dict(reduction="none"), dict(reduction="sum", weight=True),
                                dict(ignore_index=2), dict(label_smoothing=0.2)], ids=str)
@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
def test_one_sample_with_its_target_in_a_one_element_vector(name, kw):
    """(C,) scores with a (1,) target: torch's forward reads the one target and gives a 0-d loss
    for every reduction; its backward's shape check refuses the pair (a RuntimeError)."""
    kw = dict(kw)
    if name == "nll_loss" and kw.pop("label_smoothing", None):
        pytest.skip("nll_loss has no label smoothing")
    weight = kw.pop("weight", False)

    def run(L):
        w = sample(L, 4, seed=4, low=0.2, high=2.0, grad=False) if weight else None
        x = sample(L, 4)
        out = getattr(L.nn.functional, name)(x, L.tensor([2]), weight=w, **kw)
        return [out.detach()]
    twin(run, ulps=COMPOSITE_ULPS)
    twin(lambda L: L.autograd.grad(getattr(L.nn.functional, name)(x := sample(L, 4), L.tensor([2])), [x]))
    twin(lambda L: getattr(L.nn.functional, name)(sample(L, 4), L.tensor([2, 1])))


POINTWISE_LOSSES = [
    ("mse_loss", {}), ("l1_loss", {}),
    ("smooth_l1_loss", {"beta": 0.0}), ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 3.0}),
    ("huber_loss", {"delta": 0.5}), ("huber_loss", {"delta": 2.5}),
    ("binary_cross_entropy_with_logits", {}), ("binary_cross_entropy_with_logits", {"pos_weight": True}),
    ("binary_cross_entropy_with_logits", {"weight": True}),
    ("binary_cross_entropy_with_logits", {"weight": True, "pos_weight": True}),
    ("binary_cross_entropy", {"probs": True}), ("binary_cross_entropy", {"probs": True, "weight": True}),
    ("kl_div", {}), ("kl_div", {"log_target": True}),
    ("soft_margin_loss", {}),
    ("poisson_nll_loss", {}), ("poisson_nll_loss", {"log_input": False, "positive": True}),
    ("poisson_nll_loss", {"full": True, "positive": True}),
    ("poisson_nll_loss", {"full": True, "log_input": False, "positive": True}),
]


POINTWISE_CASES = [(name, kw, reduction) for name, kw in POINTWISE_LOSSES
                   for reduction in ["none", "sum", "mean"] + (["batchmean"] if name == "kl_div" else [])]


@pytest.mark.parametrize("shape", [(3, 4), (4,), (), (0, 3)], ids=str)
@pytest.mark.parametrize("name, kw, reduction", POINTWISE_CASES,
                         ids=[f"{n}{sorted(k)}-{r}" for n, k, r in POINTWISE_CASES])
def test_pointwise_losses_and_their_second_gradients(name, kw, shape, reduction):
    kw = dict(kw)
    probs, positive = kw.pop("probs", False), kw.pop("positive", False)
    weight, pos_weight = kw.pop("weight", False), kw.pop("pos_weight", False)

    def run(L):
        x = sample(L, *shape, low=0.05, high=0.95) if probs or positive else sample(L, *shape)
        t = sample(L, *shape, seed=2, low=0.0, high=1.0) if name.startswith("binary") or probs or positive \
            else sample(L, *shape, seed=2)
        extra = {}
        if weight:
            extra["weight"] = sample(L, *shape[-1:], seed=5, low=0.1, high=2.0)
        if pos_weight:
            extra["pos_weight"] = sample(L, *shape[-1:], seed=6, low=0.1, high=2.0)
        out = getattr(L.nn.functional, name)(x, t, reduction=reduction, **kw, **extra)
        return with_grads(L, out, [x, t, *extra.values()])
    twin(run, ulps=COMPOSITE_ULPS)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("name", ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
                                  "multilabel_soft_margin_loss", "multi_margin_loss",
                                  "triplet_margin_loss", "gaussian_nll_loss"])
@pytest.mark.parametrize("batch", [3, 0])
def test_other_losses_with_reductions(name, reduction, batch):
    def run(L):
        x = sample(L, batch, 4)
        f = getattr(L.nn.functional, name)
        if name == "margin_ranking_loss":
            out = f(x[:, 0], x[:, 1], L.tensor([1., -1., 1.], dtype=L.float64)[:batch], margin=0.3, reduction=reduction)
        elif name == "hinge_embedding_loss":
            out = f(x, (L.arange(batch * 4).reshape(batch, 4) % 2 * 2 - 1).double(), margin=0.7, reduction=reduction)
        elif name == "cosine_embedding_loss":
            out = f(x, sample(L, batch, 4, seed=2), L.tensor([1, -1, 1])[:batch], margin=0.1, reduction=reduction)
        elif name == "multilabel_soft_margin_loss":
            out = f(x, (sample(L, batch, 4, seed=2, grad=False) > 0).double(), reduction=reduction)
        elif name == "multi_margin_loss":
            out = f(x, labels(L, batch, classes=4), p=2, margin=0.5,
                    weight=L.tensor([0.5, 1., 2., 1.], dtype=L.float64), reduction=reduction)
        elif name == "triplet_margin_loss":
            out = f(x, sample(L, batch, 4, seed=2), sample(L, batch, 4, seed=3), margin=0.5, p=1.5, swap=True,
                    reduction=reduction)
        else:
            out = f(x, sample(L, batch, 4, seed=2), sample(L, batch, 1, seed=3, low=0.1, high=1), full=True,
                    eps=1e-3, reduction=reduction)
        return with_grads(L, out, [x])
    twin(run, ulps=COMPOSITE_ULPS)


# ============================================================================= layers
CONV_CASES = [
    dict(dims=1, padding="same", dilation=2, kernel=3),
    dict(dims=1, padding="same", dilation=1, kernel=4),
    dict(dims=1, padding="valid", stride=2, kernel=3),
    dict(dims=1, groups=2, kernel=2, padding=1, padding_mode="reflect"),
    dict(dims=1, groups=4, kernel=3, padding=2, padding_mode="circular"),
    dict(dims=2, padding="same", dilation=(1, 2), kernel=(2, 3)),
    dict(dims=2, padding="same", kernel=4, padding_mode="replicate"),
    dict(dims=2, groups=2, stride=(2, 1), kernel=3, padding=(1, 0)),
    dict(dims=2, groups=4, kernel=1),
    dict(dims=2, kernel=3, padding=1, channels_last=True),
    dict(dims=2, kernel=3, padding=1, groups=2, channels_last=True, bias=False),
    dict(dims=2, kernel=2, dilation=2, padding=2, padding_mode="zeros", unbatched=True),
    dict(dims=2, kernel=3, padding="same", padding_mode="circular"),
    dict(dims=2, kernel=3, padding=1, noncontiguous=True),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_conv_modules_with_unusual_arguments(case, dtype):
    case = dict(case)
    dims, cl, unbatched = case.pop("dims"), case.pop("channels_last", False), case.pop("unbatched", False)
    noncontig, kernel = case.pop("noncontiguous", False), case.pop("kernel")

    def run(L):
        L.manual_seed(0)
        conv = getattr(L.nn, f"Conv{dims}d")(4, 4, kernel, **case).to(getattr(L, dtype))
        spatial = (6, 5, 4)[:dims]
        x = sample(L, 2, 4, *spatial, dtype=dtype)
        if noncontig:
            x = sample(L, 2, 4, *spatial[:-1], 2 * spatial[-1], dtype=dtype)[..., ::2]
        if cl:
            x = x.detach().to(memory_format=L.channels_last).requires_grad_()
        if unbatched:
            x = x[0].detach().requires_grad_()
        out = conv(x)
        return with_grads(L, out, [x, *conv.parameters()], second=dtype == "float64")
    twin(run, ulps=4 * COMPOSITE_ULPS if dtype == "float32" else COMPOSITE_ULPS)


POOL_CASES = [
    ("max_pool2d", dict(kernel_size=3, stride=2, ceil_mode=True)),
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, return_indices=True)),
    ("max_pool2d", dict(kernel_size=2, dilation=2, return_indices=True)),
    ("max_pool2d", dict(kernel_size=(3, 1), stride=(1, 2), padding=(1, 0))),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", dict(kernel_size=3, padding=1, divisor_override=2)),
    ("avg_pool2d", dict(kernel_size=2, stride=3, ceil_mode=True, count_include_pad=False)),
    ("adaptive_avg_pool2d", dict(output_size=(3, None))),
    ("adaptive_avg_pool2d", dict(output_size=4)),
    ("adaptive_max_pool2d", dict(output_size=(2, 3), return_indices=True)),
]


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "noncontiguous", "unbatched"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kw", POOL_CASES, ids=[f"{n}-{'-'.join(map(str, k.values()))}" for n, k in POOL_CASES])
def test_pooling_with_unusual_arguments(name, kw, dtype, layout):
    one_d = name.endswith("1d")
    if layout == "channels_last" and one_d:
        pytest.skip("channels_last is a 4-d layout")

    def run(L):
        shape = (2, 3, 7) if one_d else (2, 3, 7, 6)
        x = sample(L, *shape, dtype=dtype)
        if layout == "channels_last":
            x = x.detach().to(memory_format=L.channels_last).requires_grad_()
        elif layout == "noncontiguous":
            x = sample(L, *shape[:-1], 2 * shape[-1], dtype=dtype)[..., 1::2]
        elif layout == "unbatched":
            x = x[0].detach().requires_grad_()
        out = getattr(L.nn.functional, name)(x, **kw)
        # Not compared: the layout of a channels_last input's all-zero second-order gradient
        # (torch's is contiguous, the package's channels_last).
        second = dtype == "float64" and layout != "channels_last"
        if isinstance(out, tuple):
            return [out[1], with_grads(L, out[0], [x], second=second)]
        return with_grads(L, out, [x], second=second)
    twin(run, ulps=COMPOSITE_ULPS if dtype == "float64" else 4 * COMPOSITE_ULPS)


NORM_CASES = [
    ("BatchNorm1d", dict(affine=False), (4, 3)),
    ("BatchNorm1d", dict(track_running_stats=False), (4, 3, 5)),
    ("BatchNorm1d", dict(momentum=None), (4, 3)),
    ("BatchNorm2d", dict(momentum=None, affine=False), (2, 3, 4, 2)),
    ("BatchNorm2d", dict(track_running_stats=False, affine=False), (2, 3, 2, 2)),
    ("BatchNorm2d", dict(eps=0.5, momentum=0.9), (2, 3, 2, 3)),
    ("InstanceNorm1d", dict(affine=True), (2, 3, 5)),
    ("InstanceNorm1d", dict(track_running_stats=True), (2, 3, 5)),
    ("InstanceNorm2d", dict(affine=True, track_running_stats=True, momentum=None), (2, 3, 3, 4)),
    ("LayerNorm", dict(normalized_shape=(4,), elementwise_affine=False), (2, 3, 4)),
    ("LayerNorm", dict(normalized_shape=(3, 4), bias=False), (2, 3, 4)),
    ("GroupNorm", dict(num_groups=1, num_channels=3), (2, 3, 4)),
    ("GroupNorm", dict(num_groups=3, num_channels=3, affine=False), (2, 3, 2, 2)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kw, shape", NORM_CASES, ids=[f"{n}-{'-'.join(f'{a}={b}' for a, b in k.items())}"
                                                              for n, k, _ in NORM_CASES])
def test_normalisation_train_eval_train(name, kw, shape, dtype):
    """Three forward passes (train, eval, train again) with their gradients, and the buffers
    after each: ``momentum=None`` keeps a cumulative average, ``num_batches_tracked`` counts."""
    def run(L):
        kw2 = dict(kw)
        if name.startswith(("Batch", "Instance")):
            kw2 = {"num_features": shape[1], **kw2}
        m = getattr(L.nn, name)(**kw2).to(getattr(L, dtype))
        results = []
        for step, mode in enumerate(["train", "eval", "train", "train"]):
            getattr(m, mode)()
            x = sample(L, *shape, dtype=dtype, seed=step)
            results.append(with_grads(L, m(x), [x, *m.parameters()], second=dtype == "float64"))
            results.append({k: v.clone() for k, v in m.state_dict().items()})
        return results
    twin(run, ulps=NORM_ULPS)


# ============================================================================= optimizers
OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True, weight_decay=0.2)),
    ("SGD", dict(lr=0.1, momentum=0.9, foreach=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, fused=True)),
    ("SGD", dict(lr=0.1, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, dampening=0.1)),
    ("SGD", dict(lr=-0.1)),
    ("SGD", dict(lr=0.1, momentum=-0.5)),
    ("SGD", dict(lr=0.1, fused=True, foreach=True)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, amsgrad=True, maximize=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, betas=(0.0, 0.5), eps=1e-3)),
    ("Adam", dict(lr=0.05, foreach=True, amsgrad=True)),
    ("Adam", dict(lr=0.05, fused=True)),
    ("Adam", dict(lr=0.05, capturable=True)),
    ("Adam", dict(lr=0.05, decoupled_weight_decay=True, weight_decay=0.3)),
    ("Adam", dict(lr=0.05, betas=(1.0, 0.9))),
    ("Adam", dict(lr=0.05, betas=(torch.tensor([0.3]), torch.tensor(0.0)))),
    ("AdamW", dict(lr=torch.tensor(0.05), amsgrad=True)),
    ("Adam", dict(lr=0.05, eps=-1.0)),
    ("Adam", dict(lr=0.05, weight_decay=-1.0)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, amsgrad=True, weight_decay=0.5, maximize=True)),
    ("AdamW", dict(lr=0.05, weight_decay=0.0, betas=(0.5, 0.6))),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, maximize=True, alpha=0.5, eps=1e-3)),
    ("RMSprop", dict(lr=0.01, capturable=True)),
    ("RMSprop", dict(lr=0.01, alpha=-0.5)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1, fused=True)),
    ("Adagrad", dict(lr=0.1, eps=0.0)),
    ("Adagrad", dict(lr=0.1, lr_decay=-1.0)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05, momentum_decay=0.1, decoupled_weight_decay=True, weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=2, lambd=0.1)),
    ("Adafactor", dict(lr=0.05, weight_decay=0.1)),
]


def _as_lib(L, value):
    """A hyperparameter (a tensor, or a tuple of them) in ``L``'s tensors."""
    if isinstance(value, tuple):
        return tuple(_as_lib(L, v) for v in value)
    return internals.from_torch(value) if isinstance(value, torch.Tensor) and L is internals else value


def _grads_for(L, params, step):
    """A gradient for each parameter, as a loss of the parameters would give (fixed in both
    libraries); the second parameter has none on odd steps (``zero_grad`` left it None)."""
    for i, p in enumerate(params):
        if i == 1 and step % 2:
            p.grad = None
            continue
        p.grad = (L.sin(p.detach() * (step + 1)) + 0.1 * (i + 1)).to(p.dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kw", OPTIMIZERS, ids=[f"{n}-{'-'.join(f'{a}={b}' for a, b in k.items())}"
                                                      for n, k, in OPTIMIZERS])
def test_optimizer_trajectory_with_a_state_dict_round_trip(name, kw, dtype):
    """Six steps: the state dict saved after three is loaded into a fresh optimizer over fresh
    parameters that goes on; a parameter group is added after four; the second parameter skips
    odd steps. The parameters and the full state dict after every step are compared."""
    def run(L):
        params = [sample(L, 3, 2, dtype=dtype, seed=i).detach().requires_grad_() for i in range(2)]
        kw2 = {k: _as_lib(L, v) for k, v in kw.items()}
        opt = getattr(L.optim, name)(params, **kw2)
        results = []
        for step in range(6):
            if step == 3:
                saved = opt.state_dict()
                params = [p.detach().clone().requires_grad_() for p in params]
                opt = getattr(L.optim, name)(params, **kw2)
                opt.load_state_dict(saved)
            if step == 4:
                extra = sample(L, 4, dtype=dtype, seed=9).detach().requires_grad_()
                opt.add_param_group({"params": [extra], "lr": 0.02})
                params = params + [extra]
            _grads_for(L, params, step)
            opt.step()
            results.append([p.detach().clone() for p in params])
            results.append(opt.state_dict())
            opt.zero_grad(set_to_none=step % 2 == 0)
            results.append([p.grad for p in params])
        return results
    twin(run, ulps=COMPOSITE_ULPS)


@pytest.mark.parametrize("call", [
    "L.optim.SGD([L.ones(2, requires_grad=True)], lr=0.1).add_param_group({'params': [L.ones(2)], 'momentum': -1})",
    "L.optim.SGD([{'params': [L.ones(2, requires_grad=True)]}, {'params': []}], lr=0.1)",
    "L.optim.SGD([], lr=0.1)",
    "L.optim.SGD(L.ones(2, requires_grad=True), lr=0.1)",
    "L.optim.SGD([L.ones(2, requires_grad=True)], lr=L.tensor(0.1))",
    "L.optim.Adam([L.ones(2, requires_grad=True)], lr=L.tensor([0.1, 0.2]))",
    "L.optim.Adam([L.ones(2, requires_grad=True)], lr=L.tensor(0.1), foreach=True)",
    "L.optim.Adam([L.ones(2, requires_grad=True)], lr=L.tensor(0.1), foreach=True, capturable=True)",
    "L.optim.Adam([L.ones(2, requires_grad=True)], betas=(0, 0.5))",
    "L.optim.Adam([L.ones(2, requires_grad=True)], betas=(L.tensor(0.9), 0.5))",
    "L.optim.Adam([L.ones(2, requires_grad=True)], betas=(L.tensor([0.9]), L.tensor([0.5, 0.1])))",
    "L.optim.AdamW([L.ones(2, requires_grad=True)], betas=(L.tensor(0.9), L.tensor(0.5)), foreach=True)",
    "L.optim.AdamW([L.ones(2, requires_grad=True)], lr=L.tensor([[0.1]]), foreach=True)",
    "L.optim.RMSprop([L.ones(2, requires_grad=True)], lr=L.tensor([0.1, 0.2]))",
    "_duplicate_group(L)",
    "_overlapping_groups(L)",
    "_load_mismatched_state(L)",
    "L.optim.SGD([L.ones(2, requires_grad=True)], lr=0.1).param_groups[0]['params'][0].tolist()",
    "L.optim.SGD([L.ones(2, requires_grad=True)])",
    "L.optim.Adam([L.ones(2, dtype=L.long)], lr=0.1).step()",
    "_step_with_closure(L)",
    "_lbfgs_with_a_parameter_without_gradient(L)",
    "L.optim.LBFGS([L.ones(2, requires_grad=True)], line_search_fn='strong_wolfe').step(lambda: L.tensor(3.0))",
    "L.optim.NAdam([{'params': [L.ones(2, requires_grad=True)]}, {'params': []}], momentum_decay=-1)",
    "L.optim.Adafactor([L.ones(2, dtype=L.long, requires_grad=False)], lr=0.1).step()",
])
def test_optimizer_construction_and_refusals(call):
    twin(lambda L: eval(call))


def _duplicate_group(L):
    p = L.ones(2, requires_grad=True)
    return len(L.optim.SGD([p, p], lr=0.1).param_groups[0]["params"])


def _overlapping_groups(L):
    p = L.ones(2, requires_grad=True)
    L.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def _load_mismatched_state(L):
    a = L.optim.SGD([L.ones(2, requires_grad=True)], lr=0.1)
    b = L.optim.SGD([L.ones(2, requires_grad=True), L.ones(3, requires_grad=True)], lr=0.1)
    b.load_state_dict(a.state_dict())


def _step_with_closure(L):
    p = L.ones(3, requires_grad=True)
    opt = L.optim.SGD([p], lr=0.5, momentum=0.5)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    return [opt.step(closure), opt.step(closure), p.detach()]


def _lbfgs_with_a_parameter_without_gradient(L):
    """A parameter the loss does not reach keeps a None gradient: LBFGS reads it as zeros."""
    p, unused = L.ones(3, requires_grad=True), L.ones(2, requires_grad=True)
    opt = L.optim.LBFGS([p, unused], max_iter=3)

    def closure():
        opt.zero_grad()
        loss = ((p - 2) ** 2).sum()
        loss.backward()
        return loss
    return [opt.step(closure), p.detach(), unused.detach(), unused.grad]


# ============================================================================= schedulers
SCHEDULES = [
    "Seq(L, o, [S.LinearLR(o, 0.1, 1.0, total_iters=2), S.ExponentialLR(o, 0.9)], milestones=[2])",
    "Seq(L, o, [S.ConstantLR(o, 0.5, total_iters=3), S.StepLR(o, 2, 0.5), S.CosineAnnealingLR(o, 4)], "
    "milestones=[2, 5])",
    "S.ChainedScheduler([S.ConstantLR(o, 0.2, total_iters=3), S.ExponentialLR(o, 0.8)])",
    "S.ChainedScheduler([S.StepLR(o, 2, 0.1), S.MultiplicativeLR(o, lambda e: 0.95)], optimizer=o)",
    "S.MultiStepLR(o, [1, 3, 3, 6], gamma=0.5)",
    "S.PolynomialLR(o, total_iters=4, power=2.0)",
    "S.CosineAnnealingLR(o, T_max=3, eta_min=0.01)",
    "S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.001)",
    "S.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode='triangular2', cycle_momentum=False)",
    "S.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=1, mode='exp_range', gamma=0.9)",
    "S.OneCycleLR(o, max_lr=0.5, total_steps=10, anneal_strategy='linear', three_phase=True)",
    "S.OneCycleLR(o, max_lr=[0.5, 0.3], total_steps=10)",
    "S.LinearLR(o, start_factor=0.0, total_iters=2)",
    "S.LinearLR(o, start_factor=1.5)",
    "S.ConstantLR(o, factor=2.0)",
    "S.StepLR(o, 0)",
    "Seq(L, o, [S.ExponentialLR(o, 0.9)], milestones=[2])",
    "Seq(L, o, [S.ExponentialLR(o, 0.9), S.ExponentialLR(o, 0.5)], milestones=[2, 3])",
    "S.ChainedScheduler([])",
]


def Seq(L, o, schedulers, milestones):
    return L.optim.lr_scheduler.SequentialLR(o, schedulers, milestones=milestones)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_scheduler_chains_with_a_state_dict_round_trip(schedule):
    """Twelve steps; after five the scheduler's state dict goes into a fresh scheduler of the same
    build. ``get_last_lr`` and every group's lr and momentum are compared each step."""
    def build(L, o):
        S = L.optim.lr_scheduler                  # noqa: F841 - read by eval
        return eval(schedule)

    def run(L):
        p = [L.ones(2, requires_grad=True), L.ones(1, requires_grad=True)]
        o = L.optim.SGD([{"params": [p[0]]}, {"params": [p[1]], "lr": 0.3}], lr=0.1, momentum=0.9)
        s = build(L, o)
        results = [s.get_last_lr()]
        for step in range(12):
            o.step()
            s.step()
            if step == 5:
                state = s.state_dict()
                s = build(L, o)
                s.load_state_dict(state)
            results.append([s.get_last_lr(), [(g["lr"], g["momentum"]) for g in o.param_groups], s.last_epoch])
        return results
    twin(run, ulps=LIBM_ULPS)


# ============================================================================= utils.data
class Squares:
    """A map-style dataset of (tensor, int, dict) items, built in either library."""

    def __init__(self, L, n=10):
        self.L, self.n = L, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.L.tensor([i, i * i], dtype=self.L.float32), i, {"name": f"s{i}", "half": i / 2}


LOADERS = [
    "dict(batch_size=3)",
    "dict(batch_size=3, drop_last=True)",
    "dict(batch_size=4, shuffle=True, generator=L.Generator().manual_seed(5))",
    "dict(batch_size=4, shuffle=True, drop_last=True)",
    "dict(batch_size=None)",
    "dict(batch_size=None, shuffle=True)",
    "dict(batch_sampler=[[0, 3], [9], [1, 2, 5]])",
    "dict(batch_sampler=L.utils.data.BatchSampler(L.utils.data.SequentialSampler(range(10)), 4, True))",
    "dict(batch_sampler=[[0, 3]], batch_size=2)",
    "dict(batch_sampler=[[0, 3]], shuffle=True)",
    "dict(batch_sampler=[[0, 3]], drop_last=True)",
    "dict(batch_sampler=[[0, 3]], sampler=[1, 2])",
    "dict(sampler=[4, 1, 1, 7], batch_size=3)",
    "dict(sampler=[4, 1], shuffle=True)",
    "dict(sampler=L.utils.data.SubsetRandomSampler([1, 5, 7, 8], generator=L.Generator().manual_seed(2)), "
    "batch_size=2)",
    "dict(sampler=L.utils.data.WeightedRandomSampler([0.1, 5., 0., 2.], 6, generator=L.Generator().manual_seed(3)))",
    "dict(sampler=L.utils.data.WeightedRandomSampler([0.1, 5., 0., 2.], 3, replacement=False, "
    "generator=L.Generator().manual_seed(3)), batch_size=2)",
    "dict(sampler=L.utils.data.RandomSampler(range(10), replacement=True, num_samples=7, "
    "generator=L.Generator().manual_seed(4)), batch_size=3)",
    "dict(sampler=L.utils.data.RandomSampler(range(10), num_samples=13, generator=L.Generator().manual_seed(4)))",
    "dict(batch_size=3, collate_fn=lambda b: [item[1] for item in b])",
    "dict(batch_size=3, collate_fn=L.utils.data.default_convert)",
    "dict(batch_size=0)",
    "dict(batch_size=-2)",
    "dict(batch_size=2, num_workers=-1)",
    "dict(batch_size=2, timeout=-1.0)",
    "dict(batch_size=2, prefetch_factor=2)",
    "dict(batch_size=2, persistent_workers=True)",
    "dict(batch_size=2, worker_init_fn=lambda i: 1 / 0)",
    "dict(batch_size=2, shuffle=True, generator=L.Generator().manual_seed(1), drop_last=True, "
    "collate_fn=lambda b: b)",
]


@pytest.mark.parametrize("kwargs", LOADERS)
def test_dataloader_options(kwargs):
    """Every batch of two passes (and ``len``), after the same seed; or the same refusal."""
    def run(L):
        L.manual_seed(0)
        loader = L.utils.data.DataLoader(Squares(L), **eval(kwargs))
        return [len(loader), list(loader), list(loader)]
    twin(run)


@pytest.mark.parametrize("program", [
    "L.utils.data.default_collate([(1, 2.5), (3, 4.0)])",
    "L.utils.data.default_collate([{'a': L.tensor(1), 'b': [L.ones(2), 'x']}, "
    "{'a': L.tensor(2), 'b': [L.zeros(2), 'y']}])",
    "L.utils.data.default_collate([True, False])",
    "L.utils.data.default_collate([np.array([1, 2]), np.array([3, 4])])",
    "L.utils.data.default_collate([np.float32(1.5), np.float32(2)])",
    "L.utils.data.default_collate([np.array(['a'])])",
    "L.utils.data.default_collate([L.ones(2), L.ones(3)])",
    "L.utils.data.default_collate([(1, 2), (3,)])",
    "L.utils.data.default_collate([])",
    "L.utils.data.default_collate([None, None])",
    "L.utils.data.default_collate([L.ones(2, 3).t(), L.zeros(2, 3).t()])",
    "L.utils.data.default_collate([L.tensor(1, dtype=L.int8), L.tensor(2, dtype=L.int8)])",
    "L.utils.data.default_convert([np.array([1., 2.]), (np.int64(3), 'a')])",
    "L.utils.data.random_split(range(10), [0.5, 0.3, 0.2], generator=L.Generator().manual_seed(0))",
    "L.utils.data.random_split(range(10), [0.25, 0.25, 0.5], generator=L.Generator().manual_seed(0))",
    "L.utils.data.random_split(range(10), [3, 3], generator=L.Generator().manual_seed(0))",
    "L.utils.data.random_split(range(10), [0.5, 0.6])",
    "L.utils.data.ConcatDataset([range(3), range(4)])[-2]",
    "L.utils.data.ConcatDataset([range(3), range(4)])[-8]",
    "L.utils.data.ConcatDataset([])",
    "L.utils.data.Subset(range(10), [9, 2])[-1]",
    "L.utils.data.TensorDataset(L.ones(3), L.ones(4))",
    "list(L.utils.data.BatchSampler(range(7), 3, drop_last=False))",
    "len(L.utils.data.BatchSampler(range(7), 3, drop_last=True))",
    "L.utils.data.BatchSampler(range(7), 0, drop_last=True)",
    "L.utils.data.BatchSampler(range(7), 2, drop_last=1)",
    "L.utils.data.RandomSampler(range(3), num_samples=0)",
    "L.utils.data.RandomSampler(range(3), replacement=1)",
    "list(L.utils.data.WeightedRandomSampler([1., 2.], 3, replacement=False))",
    "L.utils.data.WeightedRandomSampler([[1., 2.]], 3)",
    "L.utils.data.WeightedRandomSampler([1., 2.], -1)",
])
def test_collate_samplers_and_datasets(program):
    import numpy as np  # noqa: F401 - read by eval

    def run(L):
        result = eval(program)
        if isinstance(result, list) and result and hasattr(result[0], "indices"):
            return [list(r) for r in result]
        if isinstance(result, (tuple, list)) or isinstance(result, (torch.Tensor, internals.Tensor, dict)):
            return result
        return [result]
    twin(run)


def test_dataloader_workers_seed_each_worker_as_torch_does():
    """Two worker processes: each item records the worker's id and seed and the first draw of
    its global generator, which torch seeds from the loader's base seed."""
    def run(L):
        L.manual_seed(7)
        loader = L.utils.data.DataLoader(_WorkerProbe(L), batch_size=2, num_workers=2,
                                         worker_init_fn=_note_worker, generator=L.Generator().manual_seed(3))
        return list(loader)
    twin(run)


class _WorkerProbe:
    def __init__(self, L):
        self.L = L

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = self.L.utils.data.get_worker_info()
        return self.L.tensor([i, info.id, info.seed % 1000, _INIT_CALLS.get("calls", 0)]), self.L.rand(2)


_INIT_CALLS = {}


def _note_worker(worker_id):
    _INIT_CALLS["calls"] = _INIT_CALLS.get("calls", 0) + 1 + worker_id


# ============================================================================= save / load
def _shared_family(L):
    base = L.arange(24, dtype=L.float64).reshape(4, 6)
    other = L.arange(5, dtype=L.int16)
    return {"base": base, "views": [base[1:, ::2], base.t(), (base[2], {"deep": base.reshape(-1)[3:9]})],
            "other": other, "again": other[1:], "empty": base[:0], "scalar": base[3, 5],
            "params": [L.nn.Parameter(L.ones(2))], "n": 3, "s": "text"}


@pytest.mark.parametrize("writer, reader", [("torch", "torch"), ("internals", "internals"),
                                            ("internals", "torch"), ("torch", "internals")])
def test_nested_containers_keep_their_shared_storages(writer, reader):
    """After loading, the views share their storage again: writing through one is seen by the
    others; each keeps its offset and strides."""
    libs = {"torch": torch, "internals": internals}

    buf = io.BytesIO()
    libs[writer].save(_shared_family(libs[writer]), buf)
    theirs = torch.load(io.BytesIO(buf.getvalue()))
    ours = libs[reader].load(io.BytesIO(buf.getvalue()))
    flat_t = [theirs["base"], *theirs["views"][:2], theirs["views"][2][0], theirs["views"][2][1]["deep"],
              theirs["other"], theirs["again"], theirs["empty"], theirs["scalar"], theirs["params"][0]]
    flat_o = [ours["base"], *ours["views"][:2], ours["views"][2][0], ours["views"][2][1]["deep"],
              ours["other"], ours["again"], ours["empty"], ours["scalar"], ours["params"][0]]
    assert [_describe(t) for t in flat_o] == [_describe(t) for t in flat_t]
    assert (ours["n"], ours["s"]) == (3, "text")
    assert type(ours["params"][0]).__name__ == "Parameter"
    ours["base"][2, 3] = -1.0
    ours["other"][2] = -7
    theirs["base"][2, 3] = -1.0
    theirs["other"][2] = -7
    for o, t in zip(flat_o, flat_t):
        assert o.tolist() == t.tolist()
    assert len({o.untyped_storage().data_ptr() for o in flat_o[:5]}) == 1


# ============================================================================= module and state-dict hooks
def test_module_hooks_state_dict_hooks_in_torchs_order():
    def run(L):
        log = []
        m = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.ReLU(), L.nn.Linear(3, 1)).double()
        m[0].register_forward_pre_hook(lambda mod, args: log.append("pre0") or (args[0] * 2,))
        m[0].register_forward_hook(lambda mod, args, out: log.append("fwd0") or out + 1)
        m[2].register_forward_hook(lambda mod, args, kwargs, out: log.append(("fwd2", sorted(kwargs))),
                                   with_kwargs=True)
        h = m[1].register_forward_hook(lambda mod, args, out: log.append("relu"))
        m.register_full_backward_pre_hook(lambda mod, gout: log.append(("bpre", gout[0].shape)))
        m[0].register_full_backward_hook(lambda mod, gin, gout: log.append(("b0", [g is None for g in gin])))
        m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("sd-pre", prefix)))
        m[0].register_state_dict_post_hook(lambda mod, sd, prefix, local: log.append(("sd-post", list(sd))))
        m[2]._register_load_state_dict_pre_hook(lambda *a: log.append(("load-pre", a[1])))
        m.register_load_state_dict_post_hook(lambda mod, keys: log.append(("load-post", keys.missing_keys)))
        L.manual_seed(0)
        x = sample(L, 4, 2)
        out = m(x)
        h.remove()
        out2 = m(x)
        (out.sum() + out2.sum()).backward()
        sd = m.state_dict()
        m.load_state_dict(sd)
        return [out, out2, x.grad, log, list(sd)]
    twin(run, ulps=COMPOSITE_ULPS)


# ============================================================================= the CUDA simulator
CUDA_PROGRAMS = [
    "L.nn.functional.cross_entropy(x, t, label_smoothing=0.1, reduction='sum')",
    "L.nn.functional.cross_entropy(x, t, ignore_index=1, weight=w)",
    "L.nn.functional.nll_loss(L.log_softmax(x, 1), t, reduction='none')",
    "L.nn.functional.mse_loss(x, x.flip(0))",
    "L.nn.functional.smooth_l1_loss(x, x.flip(1), beta=0.3)",
    "L.nn.functional.binary_cross_entropy_with_logits(x, x.sigmoid().flip(0), pos_weight=w)",
    "L.nn.functional.layer_norm(x, (4,))",
    "L.nn.functional.softmax(x, 0)",
    "L.nn.functional.gelu(x, approximate='tanh')",
    "L.nn.functional.linear(x, x[:2], w[:2])",
]


@pytest.mark.slow
@pytest.mark.parametrize("program", CUDA_PROGRAMS)
def test_cuda_device_gives_torchs_cpu_results_and_gradients(program):
    """``device="cuda"`` (Numba's simulator without a GPU) against torch on the CPU: values,
    gradients and the device the gradient lands on."""
    def run(L):
        device = "cuda" if L is internals else "cpu"
        x = sample(L, 3, 4, dtype="float32").detach().to(device).requires_grad_()
        t = labels(L, 3, classes=4).to(device)             # noqa: F841 - read by eval
        w = sample(L, 4, dtype="float32", seed=7, low=0.2, high=2.0, grad=False).to(device)  # noqa: F841
        out = eval(program)
        cot = L.linspace(-1.0, 2.0, out.numel()).reshape(out.shape).to(device)
        (g,) = L.autograd.grad(out, [x], cot)
        return [out.detach().cpu(), g.cpu(), g.device.type, type(out.grad_fn).__name__]
    ours, theirs = run(internals), run(torch)
    assert ours[2] == "cuda" and ours[3] == theirs[3]
    _compare(ours[:2], theirs[:2], 4 * COMPOSITE_ULPS)


# ============================================================================= threads
def test_training_steps_on_threads_do_not_mix():
    """Four threads each train their own model and optimizer: every thread ends where one
    training on its own ends (no state shared between the steps)."""
    from helpers import in_threads

    def train(L, seed):
        g = torch.Generator().manual_seed(seed)
        w0 = torch.randn(3, 2, generator=g, dtype=torch.float64)
        m = L.nn.Linear(2, 3).double()
        with L.no_grad():
            m.weight.copy_(w0 if L is torch else internals.from_torch(w0))
            m.bias.zero_()
        opt = L.optim.Adam(m.parameters(), lr=0.1, amsgrad=True)
        x = sample(L, 5, 2, seed=seed, grad=False)
        for _ in range(5):
            opt.zero_grad()
            L.nn.functional.cross_entropy(m(x), L.tensor([0, 1, 2, 1, 0]), label_smoothing=0.1).backward()
            opt.step()
        return m.weight.detach().clone()

    got = {}
    errors = in_threads(lambda k: got.__setitem__(k, train(internals, k)))
    assert errors == []
    for k in range(4):
        _compare(got[k], train(torch, k), COMPOSITE_ULPS)
