"""The CTC loss against torch: ``F.ctc_loss``, ``nn.CTCLoss``, ``torch.ctc_loss`` and the
``_ctc_loss`` operators. Values and gradients within a few ulps (torch's loops and internals'
take the same log-space sums in the same order, but each ``exp`` and ``log`` is the C library's,
which may differ in the last place), shapes, strides, dtypes and ``grad_fn`` names exactly;
padded and concatenated targets, lengths as tuples and as tensors, every reduction, another
blank, empty inputs and targets, infinite losses with and without ``zero_infinity``, the refusal
of a second derivative, fake tensors, and torch's errors for bad arguments."""
import numpy as np
import pytest
import torch
from helpers import LIBM_ULPS, Adapter, assert_same, check_opinfo_samples, same_error

import internals
from internals._subclasses.fake_tensor import DynamicOutputShapeException, FakeTensorMode

# torch's loops and internals' take the same log-space sums in the same order, in the input's
# precision: on this machine losses and gradients come out bit for bit equal (30 random batches
# of 50 frames, both dtypes). Each exp and log is the C library's, though, which may differ in
# the last place on another CPU, and every frame's alpha carries the rounding of the frame
# before: the losses are compared within a few LIBM_ULPS. A gradient entry is exp(lp) minus a
# posterior, and the two nearly cancel where the model is sure: its error is measured against
# the probabilities' scale (1), an absolute floor, not in ulps of the small difference.
ULPS = 8 * LIBM_ULPS
GRAD_ATOL = {torch.float32: 2e-6, torch.float64: 1e-14}


def _inputs(T=7, N=3, C=5, S=4, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    log_probs = torch.randn(T, N, C, generator=g, dtype=dtype).log_softmax(2)
    targets = torch.randint(1, C, (N, S), generator=g)
    return log_probs, targets


def _ours(t):
    return internals.from_torch(t) if isinstance(t, torch.Tensor) else t


def _run(lib, log_probs, targets, il, tl, **kwargs):
    """The loss and the gradient of its sum (times a fixed weight per element)."""
    x = (log_probs.detach().clone() if lib is torch else internals.from_torch(log_probs)).requires_grad_()
    convert = (lambda t: t) if lib is torch else _ours
    loss = lib.nn.functional.ctc_loss(x, convert(targets), convert(il), convert(tl), **kwargs)
    weight = convert(torch.linspace(0.5, 1.5, loss.numel(), dtype=log_probs.dtype).reshape(loss.shape))
    (grad,) = lib.autograd.grad((loss * weight).sum(), x)
    return loss, grad


def _compare(log_probs, targets, il, tl, **kwargs):
    loss_t, grad_t = _run(torch, log_probs, targets, il, tl, **kwargs)
    loss_o, grad_o = _run(internals, log_probs, targets, il, tl, **kwargs)
    assert_same(loss_o, loss_t, ulps=ULPS)
    assert type(loss_o.grad_fn).__name__ == type(loss_t.grad_fn).__name__
    assert_same(grad_o, grad_t, rtol=1e-6 if log_probs.dtype == torch.float32 else 1e-12,
                atol=GRAD_ATOL[log_probs.dtype])
    return loss_t, grad_t


def _ulps_compare(ours_fn, theirs_fn, sample, ours_sample, tol=None):
    (x, args, kwargs), (ours_x, ours_args, ours_kwargs) = sample, ours_sample
    assert_same(ours_fn(ours_x, *ours_args, **ours_kwargs), theirs_fn(x, *args, **kwargs), ulps=ULPS)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_opinfo_samples(dtype):
    """torch's own samples: 50 frames, 16 sequences, 20 labels, targets of 10 to 29 labels."""
    adapter = Adapter(internals.nn.functional.ctc_loss, kwargs=("reduction", "zero_infinity", "blank"))
    check_opinfo_samples("nn.functional.ctc_loss", dtype, adapter, compare=_ulps_compare)


def _concatenated(targets, tl):
    return torch.cat([row[:n] for row, n in zip(targets, tl)])


LENGTHS = {       # input lengths, target lengths (for T=7, N=3, S=4)
    "full": ([7, 7, 7], [4, 4, 4]),
    "ragged": ([7, 5, 6], [4, 2, 3]),
    "an empty target": ([7, 6, 7], [3, 0, 1]),
    "an empty input": ([7, 0, 4], [2, 0, 1]),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("lengths", ["tuple", "tensor"])
@pytest.mark.parametrize("case", LENGTHS)
def test_values_gradients_and_nodes(case, lengths, layout, reduction):
    log_probs, targets = _inputs()
    il, tl = LENGTHS[case]
    if layout == "concatenated":
        targets = _concatenated(targets, tl)
    if lengths == "tensor":
        il, tl = torch.tensor(il), torch.tensor(tl)
    _compare(log_probs, targets, il, tl, reduction=reduction)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("blank", [0, 2, 4])
def test_dtypes_and_blanks(dtype, blank):
    """A target holds no blank, so with another blank the targets are drawn around it; repeated
    labels (which must be separated by a blank) are frequent with five labels."""
    log_probs, targets = _inputs(T=12, N=4, C=5, S=5, seed=blank, dtype=dtype)
    targets = torch.where(targets == blank, 0, targets) if blank else targets
    _compare(log_probs, targets, (12, 11, 9, 12), (5, 3, 4, 1), blank=blank, reduction="none")


def test_repeated_labels_need_a_blank_between():
    """A target 'aa' needs three frames (a, blank, a): with two frames its loss is infinite."""
    log_probs, _ = _inputs(T=3, N=2, C=3)
    targets = torch.tensor([[1, 1], [1, 2]])
    loss, _ = _compare(log_probs, targets, (3, 2), (2, 2), reduction="none")
    assert torch.isfinite(loss[0]) and torch.isfinite(loss[1])
    loss, _ = _compare(log_probs[:2], targets, (2, 2), (2, 2), reduction="none")
    assert torch.isinf(loss[0]) and torch.isfinite(loss[1])


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_infinite_losses(zero_infinity, reduction):
    """A target longer than its input has no path: the loss is +inf and, without
    ``zero_infinity``, its gradient is NaN where torch's is; with it, both are zero."""
    log_probs, targets = _inputs(T=5, N=3, C=4, S=4)
    _compare(log_probs, targets, (5, 3, 5), (2, 4, 3), reduction=reduction, zero_infinity=zero_infinity)


def test_unbatched_input():
    log_probs, targets = _inputs(T=6, N=1, C=4, S=3)
    for reduction in ("none", "mean", "sum"):
        _compare(log_probs[:, 0], targets[0], torch.tensor(6), torch.tensor(3), reduction=reduction)
        _compare(log_probs[:, 0], targets[0, :2], (5,), (2,), reduction=reduction)


def test_strided_inputs_and_int32_targets():
    """Log-probs read through their strides (a batch-first tensor transposed), int32 targets
    (converted to int64 by the composite), targets read through a stride."""
    g = torch.Generator().manual_seed(3)
    log_probs = torch.randn(3, 8, 5, generator=g, dtype=torch.float64).log_softmax(2).transpose(0, 1)
    targets = torch.randint(1, 5, (3, 8), generator=g, dtype=torch.int32)[:, ::2]
    _compare(log_probs, targets, (8, 7, 6), (4, 3, 2), reduction="none")


def test_ctc_loss_module_and_torch_namespace():
    log_probs, targets = _inputs()
    il, tl = LENGTHS["ragged"]
    outs = []
    for lib in (torch, internals):
        x = log_probs if lib is torch else _ours(log_probs)
        t = targets if lib is torch else _ours(targets)
        module = lib.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
        outs.append((module(x, t, il, tl), lib.ctc_loss(x, t, il, tl, 0, 0, False),
                     *lib._ctc_loss(x, t, lib.tensor(il), lib.tensor(tl))))
    for ours, theirs in zip(outs[1][:3], outs[0][:3]):
        assert_same(ours, theirs, ulps=ULPS)
    # log_alpha: only the entries the recursion reaches are defined (torch leaves the rest unset)
    la_o, la_t = outs[1][3].to_torch(), outs[0][3]
    assert la_o.shape == la_t.shape and la_o.stride() == la_t.stride()
    for b, (i, n) in enumerate(zip(il, tl)):
        reached = la_t[b, :i, : 2 * n + 1]
        np.testing.assert_allclose(la_o[b, :i, : 2 * n + 1].numpy(), reached.numpy(), rtol=1e-12)


def test_grad_fn_names_of_the_operators():
    log_probs, targets = _inputs()
    names = []
    for lib in (torch, internals):
        x = (log_probs.clone() if lib is torch else _ours(log_probs)).requires_grad_()
        t = targets if lib is torch else _ours(targets)
        names.append([type(out.grad_fn).__name__ for out in (
            lib._ctc_loss(x, t, [7, 7, 7], [4, 4, 4])[0],
            lib._ctc_loss(x, t, lib.tensor([7, 7, 7]), lib.tensor([4, 4, 4]))[0],
            lib.ctc_loss(x, t, lib.tensor([7, 7, 7]), lib.tensor([4, 4, 4]), reduction=0))])
    assert names[0] == names[1] == ["CtcLossBackward0", "CtcLossBackward1", "CtcLossBackward0"]


@pytest.mark.parametrize("lengths", ["tuple", "tensor"])
def test_second_derivative_refused_as_torch(lengths):
    """torch's ``_ctc_loss_backward`` has no derivative: create_graph gives a gradient that
    requires grad, and differentiating it raises."""
    log_probs, targets = _inputs()

    def run(L):
        x = (log_probs.clone() if L is torch else _ours(log_probs)).requires_grad_()
        il, tl = ((7, 6, 5), (4, 3, 2)) if lengths == "tuple" else (L.tensor([7, 6, 5]), L.tensor([4, 3, 2]))
        loss = L._ctc_loss(x * 1, targets if L is torch else _ours(targets), il, tl)[0].sum()
        (g,) = L.autograd.grad(loss, x, create_graph=True)
        assert g.requires_grad
        return L.autograd.grad(g.sum(), x)
    same_error(run)


def test_fake_tensors_refuse_the_forward_and_lay_out_the_backward():
    """log_alpha is as wide as the longest target: torch's fake mode refuses ``_ctc_loss``; the
    backward's gradient is laid out as log_probs, contiguous."""
    log_probs, targets = _inputs()
    x, t = _ours(log_probs), _ours(targets)
    nll, log_alpha = internals._ctc_loss(x, t, [7, 7, 7], [4, 4, 4])
    real = internals.ops.aten._ctc_loss_backward(internals.ones(3, dtype=internals.float64), x, t, [7, 7, 7],
                                                 [4, 4, 4], nll, log_alpha, 0)
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(v) for v in (internals.ones(3, dtype=internals.float64), x, t, nll, log_alpha)]
    with mode:
        with pytest.raises(DynamicOutputShapeException):
            internals._ctc_loss(fakes[1], fakes[2], [7, 7, 7], [4, 4, 4])
        fake = internals.ops.aten._ctc_loss_backward(*fakes[:3], [7, 7, 7], [4, 4, 4], *fakes[3:], 0)
    assert (tuple(fake.shape), fake.stride(), fake.dtype) == (tuple(real.shape), real.stride(), real.dtype)


def _lp(L, *shape, dtype=None):
    return L.zeros(*shape, dtype=dtype or L.float32).log_softmax(-1)


ERRORS = {
    "float targets to _ctc_loss": lambda L: L._ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2), [5, 5], [2, 2]),
    "int32 log_probs": lambda L: L.ctc_loss(L.zeros(5, 2, 4, dtype=L.int32), L.ones(2, 2, dtype=L.int64),
                                            [5, 5], [2, 2]),
    "float16 log_probs": lambda L: L._ctc_loss(_lp(L, 5, 2, 4).half(), L.ones(2, 2, dtype=L.int64), [5, 5], [2, 2]),
    "2-d log_probs to _ctc_loss": lambda L: L._ctc_loss(_lp(L, 5, 4), L.ones(2, 2, dtype=L.int64), [5], [2]),
    "3-d targets": lambda L: L._ctc_loss(_lp(L, 5, 2, 4), L.ones(1, 2, 2, dtype=L.int64), [5, 5], [2, 2]),
    "blank past the labels": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), [5, 5], [2, 2],
                                                  blank=4),
    "negative blank": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), [5, 5], [2, 2], blank=-1),
    "too few input lengths": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), [5], [2, 2]),
    "too few target lengths": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), [5, 5], [2]),
    "negative target length": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), [5, 5], [2, -1]),
    "target length past the padding": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), [5, 5],
                                                           [2, 3]),
    "padded rows for another batch": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(1, 2, dtype=L.int64), [5, 5],
                                                          [2, 2]),
    "concatenated of another total": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(4, dtype=L.int64), [5, 5],
                                                          [2, 1]),
    "input length past T": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), [5, 6], [2, 2]),
    "negative input length": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), [5, -1], [2, 2]),
    "float input lengths": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), L.tensor([5.0, 5.0]),
                                                L.tensor([2, 2])),
    "bool target lengths": lambda L: L.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), L.tensor([5, 5]),
                                                L.tensor([True, True])),
    "float lengths to _ctc_loss.Tensor": lambda L: L._ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64),
                                                               L.tensor([5.0, 5.0]), L.tensor([2, 2])),
    "ints for lengths": lambda L: L.ctc_loss(_lp(L, 5, 4), L.ones(2, dtype=L.int64), 5, 2),
    "bad reduction": lambda L: L.nn.functional.ctc_loss(_lp(L, 5, 2, 4), L.ones(2, 2, dtype=L.int64), [5, 5],
                                                        [2, 2], reduction="avg"),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_match_torch(case):
    if case == "ints for lengths":        # the TypeError lists the overloads, as the package's parser does
        with pytest.raises(TypeError):
            ERRORS[case](torch)
        with pytest.raises(TypeError):
            ERRORS[case](internals)
        return
    same_error(ERRORS[case])


def test_cuda_kernels_match_torch_cpu():
    """The same recursions as CUDA kernels, one thread per sequence (on Numba's simulator here):
    float64, so that the simulator's Python arithmetic rounds as the loops do; targets left on
    the CPU are moved over by the composite, as torch's."""
    log_probs, targets = _inputs(T=5, N=2, C=4, S=2)
    il, tl = (5, 4), (2, 1)
    x = internals.from_torch(log_probs).to("cuda").requires_grad_()
    loss = internals.nn.functional.ctc_loss(x, internals.from_torch(targets), internals.tensor(il),
                                            internals.tensor(tl), reduction="sum")
    (grad,) = internals.autograd.grad(loss, x)
    x_t = log_probs.clone().requires_grad_()
    loss_t = torch.nn.functional.ctc_loss(x_t, targets, torch.tensor(il), torch.tensor(tl), reduction="sum")
    (grad_t,) = torch.autograd.grad(loss_t, x_t)
    assert loss.device.type == grad.device.type == "cuda"
    assert_same(loss.to("cpu"), loss_t, ulps=ULPS)
    assert_same(grad.to("cpu"), grad_t, rtol=1e-12, atol=GRAD_ATOL[torch.float64])


def test_a_second_derivative_meets_torchs_not_implemented_node():
    """_ctc_loss_backward has no formula in torch: a gradient taken with create_graph ends in a
    NotImplemented node linked to log_probs and to the loss (log_alpha gets no gradient)."""
    log_probs = torch.randn(5, 2, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1)).log_softmax(2)
    seen = []
    for lib, c in ((internals, internals.from_torch), (torch, lambda t: t)):
        lp = c(log_probs).requires_grad_()
        _, log_alpha = lib.ops.aten._ctc_loss(lp, lib.tensor([[1, 2], [1, 1]]), [5, 5], [2, 2])
        g, = lib.autograd.grad(lib.nn.functional.ctc_loss(lp, lib.tensor([[1, 2], [1, 1]]), [5, 5], [2, 2]), lp,
                               create_graph=True)
        with pytest.raises(RuntimeError) as error:
            g.sum().backward()
        seen.append((log_alpha.requires_grad, type(g.grad_fn).__name__.removesuffix("Node"),
                     [type(n).__name__ for n, _ in g.grad_fn.next_functions], str(error.value)))
    assert seen[0] == seen[1]
