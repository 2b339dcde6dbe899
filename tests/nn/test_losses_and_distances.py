"""Differential tests of the regression losses and similarities against torch: ``smooth_l1_loss``
and ``huber_loss`` (aten operators with their own backward kernels; ``smooth_l1_loss`` and
``mse_loss`` declared structured, as torch declares them), ``kl_div``,
``cosine_similarity`` and ``pairwise_distance`` (torch's composites), and their modules; ``pdist``.

PyTorch's OpInfo samples (as given and non-contiguous); gradients of both inputs and second
derivatives with node names; float32 results bit for bit where the operators round as torch's
loops do; errors and warnings; module reprs. Then ``F.l1_loss``/``nn.L1Loss`` (OpInfo samples,
everyday calls and its gradient, at the end).

Tests ``internals.aten.native.loss`` and ``internals.nn`` (aten/src/ATen/native/Loss.cpp,
torch/nn/modules/loss.py).
"""
import warnings

import pytest
import torch
from helpers import (
    LIBM_ULPS,
    TORCH_DTYPES,
    Adapter,
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_ops_out_resized_with_torchs_warning,
    assert_out_variant_matches_torch,
    assert_same,
    assert_same_error,
    check_opinfo_samples,
    opinfo_cases,
    run,
    same_error,
)
from helpers import run_everyday_call as _run

import internals
from internals.aten.native import loss

F, NNF = internals.nn.functional, torch.nn.functional
# the reductions sum in another order than torch's vectorised loops; norms take a square root
SUM_TOL = {torch.float32: (1e-6, 1e-6), torch.float64: (1e-14, 1e-14)}
ADAPTERS = {
    "nn.functional.smooth_l1_loss": Adapter(F.smooth_l1_loss, kwargs=("reduction", "beta"), tol=SUM_TOL),
    "nn.functional.huber_loss": Adapter(F.huber_loss, kwargs=("reduction", "delta"), tol=SUM_TOL),
    "nn.functional.kl_div": Adapter(F.kl_div, kwargs=("reduction", "log_target"), tol=SUM_TOL),
    "nn.functional.cosine_similarity": Adapter(F.cosine_similarity, kwargs=("dim", "eps"), tol=SUM_TOL),
    "nn.functional.pairwise_distance": Adapter(F.pairwise_distance, kwargs=("p", "eps", "keepdim"), tol=SUM_TOL),
}
L1_ADAPTERS = {
    "nn.functional.l1_loss": Adapter(internals.nn.functional.l1_loss, kwargs=("reduction",)),
}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64))
                         + opinfo_cases(L1_ADAPTERS, TORCH_DTYPES))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, {**ADAPTERS, **L1_ADAPTERS}[name])


CASES = {
    **{f"smooth_l1 {r} beta={b}": (lambda lib, x, t, r=r, b=b: lib.nn.functional.smooth_l1_loss(x, t, reduction=r,
                                                                                                beta=b))
       for r in ("none", "mean", "sum") for b in (1.0, 0.3, 0.0)},
    **{f"huber {r}": (lambda lib, x, t, r=r: lib.nn.functional.huber_loss(x, t, reduction=r, delta=0.7))
       for r in ("none", "mean", "sum")},
    "huber weighted": lambda lib, x, t: lib.nn.functional.huber_loss(x, t, delta=0.4, weight=t.detach() + 1),
    **{f"kl_div {r}": (lambda lib, x, t, r=r: lib.nn.functional.kl_div(x.log_softmax(1), t.softmax(1), reduction=r))
       for r in ("batchmean", "sum", "mean", "none")},
    "kl_div log_target": lambda lib, x, t: lib.nn.functional.kl_div(x.log_softmax(1), t.log_softmax(1),
                                                                    reduction="batchmean", log_target=True),
    "cosine_similarity": lambda lib, x, t: lib.nn.functional.cosine_similarity(x, t),
    "cosine_similarity broadcast": lambda lib, x, t: lib.nn.functional.cosine_similarity(x, t[:1], dim=-1),
    "cosine_similarity tiny": lambda lib, x, t: lib.nn.functional.cosine_similarity(x * 1e-12, t, eps=1e-3),
    "pairwise_distance": lambda lib, x, t: lib.nn.functional.pairwise_distance(x, t),
    "pairwise_distance p=1 keepdim": lambda lib, x, t: lib.nn.functional.pairwise_distance(x, t, 1.0, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_gradients_and_second_order(name):
    """The output, both inputs' gradients, the gradient of their squared sum, and the nodes."""
    results = []
    for lib in (torch, internals):
        gen = torch.Generator().manual_seed(5)
        x0, t0 = (torch.randn(4, 6, generator=gen, dtype=torch.float64) * 2 for _ in range(2))
        x, t = ((v if lib is torch else internals.from_torch(v)).requires_grad_() for v in (x0, t0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = CASES[name](lib, x, t)
        g = lib.ones(y.shape, dtype=lib.float64) * 0.5
        gx, gt = lib.autograd.grad(y, (x, t), g, create_graph=True)
        second = lib.autograd.grad((gx * gx).sum() + (gt * gt).sum(), (x, t), allow_unused=True)
        results.append([y, gx, gt, *second, type(y.grad_fn).__name__, type(gx.grad_fn).__name__])
    (*values_t, y_node_t, g_node_t), (*values_i, y_node_i, g_node_i) = results
    assert (y_node_i, g_node_i) == (y_node_t, g_node_t)
    for o, t in zip(values_i, values_t):
        assert (o is None) == (t is None)
        if t is not None:
            assert_same(o, t, exact_layout=False, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["none", "sum"])
def test_float32_pointwise_losses_round_as_torchs(name, reduction):
    """The pointwise steps are torch's loop's, in its order: float32 results and gradients bit for bit."""
    gen = torch.Generator().manual_seed(6)
    x, t = (torch.randn(64, 33, generator=gen) * 2 for _ in range(2))
    x.requires_grad_()
    xi = internals.from_torch(x.detach()).requires_grad_()
    kwargs = {"beta": 0.3} if name == "smooth_l1_loss" else {"delta": 0.3}
    theirs = getattr(NNF, name)(x, t, reduction=reduction, **kwargs)
    ours = getattr(F, name)(xi, internals.from_torch(t), reduction=reduction, **kwargs)
    if reduction == "none":
        assert_same(ours, theirs, rtol=0, atol=0)
    theirs.sum().backward()
    ours.sum().backward()
    assert_same(xi.grad, x.grad, rtol=0, atol=0)


X = "lib.tensor([[-2.0, -0.5, 0.0], [0.5, 1.5, 7.0]])"
Y = "lib.tensor([[1.0, -0.25, 0.0], [0.5, 2.0, 3.0]])"
PROGRAMS = [
    f"lib.nn.functional.smooth_l1_loss({X}, {Y}, beta=-1.0)", f"lib.nn.functional.huber_loss({X}, {Y}, delta=0.0)",
    f"lib.nn.functional.smooth_l1_loss({X}, {Y}[0])", f"lib.nn.functional.huber_loss({X}, {Y}, reduction='avg')",
    f"lib.nn.functional.smooth_l1_loss({X}, {Y}, size_average=False)",
    f"lib.nn.functional.huber_loss({X}, {Y}, weight={Y}[0])",
    f"lib.nn.functional.kl_div({X}, {Y})", f"lib.nn.functional.kl_div({X}, {Y}, reduce=False)",
    f"lib.nn.functional.kl_div({X}, {Y}, reduction='avg')",
    f"lib.nn.functional.kl_div({X}.long(), {Y})", f"lib.nn.functional.kl_div({X}[0, 0], {Y}[0, 0], 'batchmean')",
    f"lib.nn.functional.cosine_similarity({X}.long(), {Y}.long())",
    f"lib.nn.functional.cosine_similarity({X}.long(), {Y})", f"lib.nn.functional.cosine_similarity({X}, {Y}, 0)",
    f"lib.nn.functional.pairwise_distance({X}, {Y}[1])", f"lib.nn.functional.pairwise_distance({X}[0], {Y}[0])",
    f"lib.nn.functional.huber_loss({X}.double(), {Y}.double(), reduction='none')",
    f"lib.nn.functional.smooth_l1_loss({X}.t(), {Y}.t(), reduction='none', beta=0.5)",
    "lib.nn.HuberLoss(delta='1')",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    """Results (values to the last digit, shape, strides, dtype, node), warnings and errors."""
    ours, theirs = _run(internals, program), _run(torch, program)
    if ours[0] == "error" or theirs[0] == "error":
        assert ours == theirs
        return
    (meta_i, messages_i), (meta_t, messages_t) = ours, theirs
    messages_i = [(kind, text.replace("internals.Size", "torch.Size")) for kind, text in messages_i]
    assert (meta_i[:3], meta_i[4], messages_i) == (meta_t[:3], meta_t[4], messages_t)
    torch.testing.assert_close([float(v) for v in meta_i[3]], [float(v) for v in meta_t[3]], rtol=1e-6, atol=1e-7,
                               equal_nan=True)


def test_module_reprs_and_forward():
    x, y = torch.randn(3, 5), torch.randn(3, 5)
    for make in (lambda nn: nn.SmoothL1Loss(), lambda nn: nn.SmoothL1Loss(reduction="sum", beta=0.5),
                 lambda nn: nn.HuberLoss(delta=2.0), lambda nn: nn.KLDivLoss(reduction="batchmean"),
                 lambda nn: nn.KLDivLoss(log_target=True, reduction="sum"), lambda nn: nn.CosineSimilarity(0),
                 lambda nn: nn.PairwiseDistance(1.0, keepdim=True)):
        ours, theirs = make(internals.nn), make(torch.nn)
        assert repr(ours) == repr(theirs)
        assert_same(ours(internals.from_torch(x), internals.from_torch(y)), theirs(x, y), exact_layout=False,
                    rtol=1e-6, atol=1e-6)


def test_errors_of_the_modules_match_torch():
    assert_same_error(lambda: internals.nn.HuberLoss(delta=None), lambda: torch.nn.HuberLoss(delta=None))


def _weight_requiring_grad(lib, call):
    """A loss called with a class weight (or pos_weight) that requires grad: torch has no formula
    for those inputs and refuses them while grad mode is on, instead of leaving them no gradient."""
    x = lib.tensor([[0.5, -1.0, 2.0], [0.3, 0.1, -0.4]], dtype=lib.float64, requires_grad=True)
    weight = lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64, requires_grad=True)
    F_ = lib.nn.functional
    calls = {
        "nll_loss": lambda: F_.nll_loss(x, lib.tensor([0, 2]), weight=weight),
        "cross_entropy": lambda: F_.cross_entropy(x, lib.tensor([0, 2]), weight=weight),
        "binary_cross_entropy": lambda: F_.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid(), weight=weight),
        "bce_with_logits weight": lambda: F_.binary_cross_entropy_with_logits(x, x.detach().sigmoid(), weight=weight),
        "bce_with_logits pos_weight": lambda: F_.binary_cross_entropy_with_logits(x, x.detach().sigmoid(),
                                                                                  pos_weight=weight),
        "batch_norm running_mean": lambda: F_.batch_norm(x, weight, weight.detach().abs(), training=True),
    }
    try:
        return "value", calls[call]().tolist()
    except RuntimeError as error:
        return "RuntimeError", str(error)


@pytest.mark.parametrize("call", ["nll_loss", "cross_entropy", "binary_cross_entropy", "bce_with_logits weight",
                                  "bce_with_logits pos_weight", "batch_norm running_mean"])
def test_inputs_without_a_formula_refuse_requires_grad_as_torch(call):
    assert _weight_requiring_grad(internals, call) == _weight_requiring_grad(torch, call)


# ---- mse_loss and smooth_l1_loss: structured (Loss.cpp), out= primary, the functional form derived
@pytest.mark.parametrize("name", ["mse_loss", "smooth_l1_loss"])
def test_declared_structured_as_torch_declares_them(name):
    assert_derived_from_structured_out(name, "out", loss)


def _transposed(L):
    return L.linspace(-3., 3., 12).reshape(4, 3).t()


STRUCTURED_OUT_CASES = {
    "mse none, laid out by the transposed input, into a wider out": lambda L: L.ops.aten.mse_loss.out(
        _transposed(L), L.zeros(3, 1), 0, out=L.empty(0, dtype=L.float64)),
    "mse mean into a 0-dim out": lambda L: L.ops.aten.mse_loss.out(_transposed(L), L.ones(4), 1, out=L.empty(0)),
    "mse sum into a narrower float out": lambda L: L.ops.aten.mse_loss.out(
        _transposed(L), L.ones(4), 2, out=L.empty(0, dtype=L.float16)),
    "smooth_l1 none keeps out's strides": lambda L: L.ops.aten.smooth_l1_loss.out(
        _transposed(L), L.zeros(3, 1), 0, 0.5, out=L.empty(4, 3).t()),
    "smooth_l1 mean with beta 0": lambda L: L.ops.aten.smooth_l1_loss.out(
        _transposed(L), L.zeros(3, 1), 1, 0., out=L.empty(0)),
    "smooth_l1 sum of float64 and float32": lambda L: L.ops.aten.smooth_l1_loss.out(
        _transposed(L).double(), L.zeros(3, 1), 2, 1.5, out=L.empty(0, dtype=L.float64)),
}


@pytest.mark.parametrize("case", STRUCTURED_OUT_CASES)
def test_structured_out_matches_torch(case):
    assert_out_variant_matches_torch(STRUCTURED_OUT_CASES[case])


@pytest.mark.parametrize("name, args", [("mse_loss", (1,)), ("smooth_l1_loss", (2, 0.5))])
def test_a_reduced_loss_resizes_a_0_dim_out_with_torchs_warning(name, args, capfd):
    """The meta step resizes ``out`` to the broadcast shape first (a 0-dim out warns), then to 0-dim."""
    assert_ops_out_resized_with_torchs_warning(
        lambda L: getattr(L.ops.aten, name).out(_transposed(L), L.ones(4), *args, out=L.empty(())), capfd)


STRUCTURED_ERRORS = {
    "mse of integers": lambda L: L.ops.aten.mse_loss(L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64), 0),
    "mse cannot cast down": lambda L: L.ops.aten.mse_loss.out(L.ones(3), L.ones(3), 1, out=L.empty((), dtype=L.int64)),
    "mse shapes": lambda L: L.ops.aten.mse_loss(L.ones(3), L.ones(2), 1),
    "smooth_l1 negative beta": lambda L: L.ops.aten.smooth_l1_loss(L.ones(3), L.ones(3), 1, -1.),
    "smooth_l1 of integers": lambda L: L.ops.aten.smooth_l1_loss(L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64)),
}


@pytest.mark.parametrize("case", STRUCTURED_ERRORS)
def test_structured_errors_match_torch(case):
    same_error(STRUCTURED_ERRORS[case])


FAKE_PROGRAMS = {
    "mse none": lambda L, x: L.ops.aten.mse_loss(x.t(), x.t()[0], 0),
    "mse mean": lambda L, x: L.nn.functional.mse_loss(x, x),
    "smooth_l1 none into out": lambda L, x: L.ops.aten.smooth_l1_loss.out(x, x, 0, 1., out=L.empty(0)),
    "smooth_l1 sum": lambda L, x: L.ops.aten.smooth_l1_loss(x.t(), x.t(), 2, 0.5),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_run_the_meta_step(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program])


def _weighted_losses(lib):
    F = lib.nn.functional
    x, t = lib.zeros(1, 3, 2, 2), lib.zeros(1, 2, 2, dtype=lib.int64)
    rows, row_targets = x[0, :, 0].t(), t[0, 0]
    double = lib.ones(3, dtype=lib.float64)
    return {
        "nll_double_weight": lambda: F.nll_loss(rows, row_targets, weight=double),
        "nll_long_weight": lambda: F.nll_loss(rows, row_targets, weight=lib.ones(3, dtype=lib.int64)),
        "nll_double_weight_none": lambda: F.nll_loss(rows, row_targets, weight=double, reduction="none"),
        "nll_double_weight_bad_target": lambda: F.nll_loss(rows, row_targets + 5, weight=double),
        "nll_backward_double_weight": lambda: lib.ops.aten.nll_loss_backward(
            lib.tensor(1.), rows, row_targets, double, 1, -100, lib.tensor(2.)),
        "cross_entropy_smoothing_double_weight": lambda: F.cross_entropy(rows, row_targets, weight=double,
                                                                         label_smoothing=0.1),
        "nll2d_double_weight": lambda: F.nll_loss(x, t, weight=double),
        "nll2d_double_weight_none": lambda: F.nll_loss(x, t, weight=double, reduction="none"),
        "nll2d_long_input": lambda: F.nll_loss(x.long(), t),
        "nll2d_weight_size": lambda: F.nll_loss(x, t, weight=lib.ones(4)),
        "nll2d_weight_size_and_shape": lambda: F.nll_loss(x, t[:, :1], weight=lib.ones(4)),
        "nll2d_float_target_and_weight_size": lambda: F.nll_loss(x, t.float(), weight=lib.ones(4)),
        "nll2d_backward_double_total_weight": lambda: lib.ops.aten.nll_loss2d_backward(
            lib.tensor(1.), x, t, None, 1, -100, lib.tensor(4., dtype=lib.float64)),
        "nll2d_backward_long_input": lambda: lib.ops.aten.nll_loss2d_backward(
            lib.tensor(1), x.long(), t, None, 1, -100, lib.tensor(4)),
        "cross_entropy_2d_double_weight": lambda: F.cross_entropy(x, t, weight=double),
        "multi_margin_double_weight_bad_target": lambda: F.multi_margin_loss(lib.zeros(2, 3), lib.tensor([0, 5]),
                                                                             weight=double),
        "multi_margin_long_input_int_target": lambda: F.multi_margin_loss(lib.zeros(2, 3, dtype=lib.int64),
                                                                          lib.tensor([0, 1], dtype=lib.int32)),
        "multi_margin_long_input_bad_target": lambda: F.multi_margin_loss(lib.zeros(2, 3, dtype=lib.int64),
                                                                          lib.tensor([0, 7])),
    }


@pytest.mark.parametrize("name", list(_weighted_losses(torch)))
def test_class_weights_of_another_dtype_and_the_checks_order_match_torch(name):
    """torch's loss loops read the class weights as the input's dtype ("expected scalar type Float
    but found Double"), where they were promoted and the loss computed (nll_loss2d even returned
    float64); nll_loss2d checks the target's dtype, the weight's size, the shapes, then dispatches
    on the input (an integer input used to be computed); multi_margin_loss dispatches on the input
    before reading the targets and weights and checking the targets' range."""
    ours, theirs = assert_same_error(_weighted_losses(internals)[name], _weighted_losses(torch)[name])
    assert str(ours) == str(theirs)


def test_l1_loss_second_derivative_of_a_transposed_input_is_laid_out_as_torchs():
    """l1_loss is |input - target|, whose second derivative passes through sgn's: torch's is an
    efficient zero tensor of the input's sizes (contiguous), not zeros shaped like the incoming
    gradient, so a transposed input's second derivative comes back transposed, as torch's."""
    def second(lib):
        a = lib.arange(12.0, dtype=lib.float64).reshape(4, 3).sin().requires_grad_()
        b = lib.arange(24.0, dtype=lib.float64).reshape(3, 8).cos().requires_grad_()
        g = lib.autograd.grad(lib.nn.functional.l1_loss(a.t(), b[:, ::2], reduction="none").sum(), [a, b],
                              create_graph=True)
        return lib.autograd.grad(sum((t * t).sum() for t in g), [a, b])
    for ours, theirs in zip(second(internals), second(torch)):
        assert_same(ours, theirs)


# ---- pdist: the distances between the rows of one matrix
@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, 0.5, float("inf")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pdist_values_nodes_and_gradients_match_torch(p, dtype):
    """Each pair's sum of |a_k - b_k|^p is left to right in both (torch's loop and cdist's), so
    only the power's and the root's library math may differ: within ulps. A repeated row makes a
    zero distance, whose gradient both set to zero; torch gives the backward no derivative."""
    results = []
    for lib in (torch, internals):
        x = (lib.arange(15, dtype=getattr(lib, dtype)).reshape(5, 3) * 0.37).sin()
        x = lib.cat([x, x[:1]]).t().contiguous().t().requires_grad_()       # not contiguous: pdist copies it
        d = lib.nn.functional.pdist(x, p)
        g, = lib.autograd.grad(d, x, lib.arange(float(d.numel()), dtype=d.dtype), create_graph=True)
        with pytest.raises(NotImplementedError) as refused:
            lib.autograd.grad(g.sum(), x)
        results.append((d, g, type(d.grad_fn).__name__, str(refused.value)))
    (d_t, g_t, node_t, refusal_t), (d_i, g_i, node_i, refusal_i) = results
    assert_same(d_i, d_t, ulps=LIBM_ULPS)
    assert_same(g_i, g_t, rtol=1e-4 if dtype == "float32" else 1e-12, atol=1e-6 if dtype == "float32" else 1e-14)
    assert node_i == node_t and refusal_i == refusal_t


@pytest.mark.parametrize("program", [
    "lib.pdist(lib.ones(1, 4))", "lib.pdist(lib.ones(3, 0))", "lib.pdist(lib.ones(0, 2))",
    "lib.pdist(lib.ones(2, 3, 4))", "lib.pdist(lib.ones(3, 4).long())", "lib.pdist(lib.ones(3, 4), -1)",
    "lib.pdist(lib.ones(3, 4, dtype=lib.float16))",
])
def test_pdist_edges_and_errors(program):
    assert _run(internals, program) == _run(torch, program)


def _same(program, **env):
    assert run(internals, program, **env) == run(torch, program, **env)


# ---------------------------------------------------------------------------------- L1 loss
L1 = [
    "lib.nn.functional.l1_loss(lib.arange(6.).reshape(2, 3), lib.ones(2, 3))",
    "lib.nn.L1Loss(reduction='none')(lib.arange(6.).reshape(2, 3), lib.ones(3))",
    "lib.nn.L1Loss(reduction='sum')(lib.arange(6.).reshape(2, 3), lib.ones(2, 3))",
    "lib.nn.L1Loss()(lib.arange(6.).reshape(2, 3).requires_grad_(), lib.ones(2, 3))",
    "lib.nn.L1Loss(reduction='bad')(lib.ones(2), lib.ones(2))",
]


@pytest.mark.parametrize("program", L1)
def test_l1_loss(program):
    _same(program)


def test_l1_loss_gradient():
    grads = []
    for lib in (internals, torch):
        x = lib.tensor([[0.5, 2.0, 1.0], [-1.0, 3.0, 1.5]], requires_grad=True)
        lib.nn.L1Loss()(x, lib.ones(2, 3)).backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
