"""Differential tests of the layers against torch: convolution, max pooling, batch
and layer norm, embedding, and the modules built on them (Conv2d, MaxPool2d, BatchNorm1d/2d,
LayerNorm, Embedding, Flatten, GELU, SiLU, Sigmoid, Tanh).

PyTorch's own OpInfo samples first (as given and non-contiguous); then random geometries with
hypothesis, on non-contiguous inputs, comparing values, gradients of every input and grad_fn
names; the operators a dispatch mode sees; the modules built from the same seed in both
libraries (no weights copied); the running statistics; errors; hostile indices; and the cuda
device (Numba's simulator without a GPU).
"""
import math
import warnings

import pytest
import torch
from helpers import (
    Adapter,
    assert_same,
    assert_same_error,
    assert_within_ulps_of_largest,
    check_opinfo_samples,
    logging_modes,
    opinfo_cases,
    same_error,
)
from hypothesis import given
from hypothesis import strategies as hs

import internals
from internals.nn.modules import _repr_fields

F, NNF = internals.nn.functional, torch.nn.functional
# im2col + matmul sums a window's products in another order than torch's oneDNN kernels, and the
# normalizations compute their statistics in two passes where torch's loops use one.
TOL32 = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12)}
CONV_TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-12, 1e-12)}


def _batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    return F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)


ADAPTERS = {
    "nn.functional.conv2d": Adapter(F.conv2d, kwargs=("bias", "stride", "padding", "dilation", "groups"),
                                    tol=CONV_TOL),
    "nn.functional.max_pool2d": Adapter(F.max_pool2d, kwargs=("kernel_size", "stride", "padding", "dilation",
                                                              "ceil_mode", "return_indices")),
    "nn.functional.batch_norm": Adapter(_batch_norm, kwargs=("weight", "bias", "training", "momentum", "eps"),
                                        tol=TOL32),
    "nn.functional.layer_norm": Adapter(F.layer_norm, kwargs=("weight", "bias", "eps"), tol=TOL32),
    # OpInfo's embedding takes the weight first: ``op(weight, indices)``; its samples with
    # ``max_norm`` or ``sparse`` (not implemented here) are skipped, at most half of them
    "nn.functional.embedding": Adapter(lambda weight, indices, **kw: F.embedding(indices, weight, **kw),
                                       kwargs=("padding_idx", "scale_grad_by_freq"), min_ran=0.5),
}
DTYPES = (torch.float32, torch.float64)
# max_pool2d's OpInfo gives 1,440 samples (six shapes, 144 mixes of kernel, stride, padding,
# dilation, ceil_mode and return_indices, each twice or more), all through the one pooling loop
# compiled per dtype: float32 runs them all; float64 every 7th, which still holds all six shapes
# and all 144 mixes.
MAX_POOL_STEP = 7


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, DTYPES))
def test_opinfo_samples(name, dtype):
    step = MAX_POOL_STEP if name == "nn.functional.max_pool2d" and dtype != torch.float32 else 1
    check_opinfo_samples(name, dtype, ADAPTERS[name], step=step)


# ---------------------------------------------------------------------------- random geometries
def _pair(t):
    """torch's leaf tensor and internals' copy of it; from 2 dims on, both non-contiguous (the
    transpose of a contiguous copy of the transpose)."""
    theirs = t.transpose(-1, -2).contiguous().transpose(-1, -2) if t.dim() >= 2 else t.clone()
    theirs.requires_grad_()
    return internals.from_torch(theirs.detach()).requires_grad_(), theirs


def _grads_match(ours, theirs, out_ours, out_theirs, tol):
    g = torch.randn(out_theirs.shape, dtype=out_theirs.dtype)
    out_theirs.backward(g)
    out_ours.backward(internals.from_torch(g))
    for o, t in zip(ours, theirs):
        assert (o.grad is None) == (t.grad is None)
        if t.grad is not None:
            assert_same(o.grad, t.grad, exact_layout=False, rtol=tol, atol=tol)


@given(n=hs.integers(1, 2), groups=hs.sampled_from([1, 2]), cin=hs.integers(1, 2), cout=hs.integers(1, 2),
       h=hs.integers(3, 7), w=hs.integers(3, 7), k=hs.tuples(hs.integers(1, 3), hs.integers(1, 3)),
       stride=hs.tuples(hs.integers(1, 3), hs.integers(1, 2)), padding=hs.tuples(hs.integers(0, 2), hs.integers(0, 1)),
       dilation=hs.tuples(hs.integers(1, 2), hs.integers(1, 2)), bias=hs.booleans())
def test_conv2d_matches_torch(n, groups, cin, cout, h, w, k, stride, padding, dilation, bias):
    torch.manual_seed(0)
    x = torch.randn(n, cin * groups, h, w, dtype=torch.float64)
    weight = torch.randn(cout * groups, cin, *k, dtype=torch.float64)
    b = torch.randn(cout * groups, dtype=torch.float64) if bias else None
    args = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    ours, theirs = zip(*[_pair(t) for t in (x, weight, b) if t is not None])
    try:
        expected = NNF.conv2d(*theirs, **args) if bias else NNF.conv2d(*theirs, None, **args)
    except RuntimeError:
        assert_same_error(lambda: F.conv2d(*ours, **args) if bias else F.conv2d(*ours, None, **args),
                          lambda: NNF.conv2d(*theirs, **args) if bias else NNF.conv2d(*theirs, None, **args))
        return
    out = F.conv2d(*ours, **args) if bias else F.conv2d(*ours, None, **args)
    assert out.grad_fn.name() == expected.grad_fn.name() == "ConvolutionBackward0"
    assert_same(out, expected, rtol=1e-12, atol=1e-12)
    _grads_match(ours, theirs, out, expected, 1e-12)


@given(n=hs.integers(1, 2), c=hs.integers(1, 3), h=hs.integers(1, 8), w=hs.integers(1, 8),
       k=hs.tuples(hs.integers(1, 3), hs.integers(1, 3)), stride=hs.one_of(hs.none(), hs.integers(1, 3)),
       padding=hs.integers(0, 1), dilation=hs.integers(1, 2), ceil_mode=hs.booleans(), relu=hs.booleans())
def test_max_pool2d_matches_torch(n, c, h, w, k, stride, padding, dilation, ceil_mode, relu):
    torch.manual_seed(1)
    x = torch.randn(n, c, h, w)
    x = x.relu() if relu else x          # after ReLU, windows tie at 0: the first maximum must win
    args = dict(kernel_size=k, stride=stride, padding=padding, dilation=dilation, ceil_mode=ceil_mode,
                return_indices=True)
    ours, theirs = _pair(x)
    try:
        expected, expected_at = NNF.max_pool2d(theirs, **args)
    except RuntimeError:
        assert_same_error(lambda: F.max_pool2d(ours, **args), lambda: NNF.max_pool2d(theirs, **args))
        return
    out, at = F.max_pool2d(ours, **args)
    assert out.grad_fn.name() == expected.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert_same(out, expected)
    assert_same(at, expected_at)
    _grads_match([ours], [theirs], out, expected, 0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int64, torch.float64])
def test_max_pool2d_other_dtypes_and_nan(dtype):
    x = torch.tensor([[[1, 5, 2], [5, 0, 3], [4, 4, 9]]], dtype=torch.float64)
    if dtype.is_floating_point:
        x[0, 2, 0] = float("nan")
    x = x.to(dtype)
    out, at = F.max_pool2d(internals.from_torch(x), 2, 1, return_indices=True)
    expected, expected_at = NNF.max_pool2d(x, 2, 1, return_indices=True)
    assert_same(out, expected)
    assert_same(at, expected_at)


@given(n=hs.integers(2, 4), c=hs.integers(1, 3), extra=hs.sampled_from([(), (3,), (2, 3)]), training=hs.booleans(),
       affine=hs.booleans(), momentum=hs.sampled_from([0.1, 0.5]))
def test_batch_norm_matches_torch(n, c, extra, training, affine, momentum):
    torch.manual_seed(2)
    x = torch.randn(n, c, *extra, dtype=torch.float64) * 3 + 1
    stats = [torch.randn(c, dtype=torch.float64), torch.rand(c, dtype=torch.float64) + 0.5]
    ours_stats = [internals.from_torch(s) for s in stats]
    params = [torch.randn(c, dtype=torch.float64), torch.randn(c, dtype=torch.float64)] if affine else []
    ours, theirs = zip(*[_pair(t) for t in (x, *params)])
    expected = NNF.batch_norm(theirs[0], *stats, *(theirs[1:] or (None, None)), training, momentum)
    out = F.batch_norm(ours[0], *ours_stats, *(ours[1:] or (None, None)), training, momentum)
    assert out.grad_fn.name() == expected.grad_fn.name() == "NativeBatchNormBackward0"
    assert_same(out, expected, exact_layout=False, rtol=1e-12, atol=1e-12)
    for o, t in zip(ours_stats, stats):          # the running statistics, updated in place
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    _grads_match(ours, theirs, out, expected, 1e-10)


@given(shape=hs.sampled_from([(2, 5), (3, 2, 4), (2, 3, 2, 2)]), k=hs.integers(1, 2), affine=hs.booleans(),
       bias=hs.booleans())
def test_layer_norm_matches_torch(shape, k, affine, bias):
    torch.manual_seed(3)
    normalized = shape[-k:]
    x = torch.randn(*shape, dtype=torch.float64) * 2
    params = [torch.randn(normalized, dtype=torch.float64)] if affine else []
    params += [torch.randn(normalized, dtype=torch.float64)] if affine and bias else []
    ours, theirs = zip(*[_pair(t) for t in (x, *params)])
    padded_t = list(theirs[1:]) + [None] * (3 - len(theirs))
    padded_o = list(ours[1:]) + [None] * (3 - len(ours))
    expected = NNF.layer_norm(theirs[0], normalized, *padded_t[:2])
    out = F.layer_norm(ours[0], normalized, *padded_o[:2])
    assert out.grad_fn.name() == expected.grad_fn.name() == "NativeLayerNormBackward0"
    assert_same(out, expected, exact_layout=False, rtol=1e-12, atol=1e-12)
    _grads_match(ours, theirs, out, expected, 1e-10)
    mean, rstd = internals.native_layer_norm(ours[0], normalized, None, None, 1e-5)[1:]
    expected_mean, expected_rstd = torch.native_layer_norm(theirs[0], normalized, None, None, 1e-5)[1:]
    assert_same(mean, expected_mean, rtol=1e-12, atol=1e-12)
    assert_same(rstd, expected_rstd, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("padding_idx, scale", [(None, False), (1, False), (-1, True), (None, True)])
def test_embedding_matches_torch(padding_idx, scale):
    torch.manual_seed(4)
    weight = torch.randn(6, 3, dtype=torch.float64)
    idx = torch.tensor([[1, 2, 1, 5], [0, 5, 1, 1]])
    ours, theirs = _pair(weight)
    expected = NNF.embedding(idx, theirs, padding_idx, scale_grad_by_freq=scale)
    out = F.embedding(internals.from_torch(idx), ours, padding_idx, scale_grad_by_freq=scale)
    assert out.grad_fn.name() == expected.grad_fn.name() == "EmbeddingBackward0"
    assert_same(out, expected)
    _grads_match([ours], [theirs], out, expected, 1e-15)


# ---------------------------------------------------------------------------- operators seen
def _logged(lib, program):
    log_t, log_i = [], []
    theirs, ours = logging_modes(log_t, log_i)
    with (theirs if lib is torch else ours):
        program(lib)
    return log_t if lib is torch else log_i


LAYERS = {
    "conv": lambda lib: lib.nn.Conv2d(2, 3, 3, padding=1),
    "pool": lambda lib: lib.nn.MaxPool2d(2),
    "batchnorm": lambda lib: lib.nn.BatchNorm2d(2),
    "layernorm": lambda lib: lib.nn.LayerNorm(4),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_dispatch_mode_sees_torch_operators(name):
    """Forward and backward of each layer log the operators torch's do (torch's backward also
    logs ``detach`` of saved tensors, the copies it keeps for ``retain_graph`` views; the engine
    seeds the gradient with ``ones_like``; both left out here, see tests/aten/test_op_log_parity.py)."""
    layers = {}
    for lib in (torch, internals):
        lib.manual_seed(0)
        layers[lib] = (LAYERS[name](lib), lib.randn(2, 2, 4, 4, requires_grad=True))

    def program(lib):
        layer, x = layers[lib]
        layer(x).sum().backward()
    noise = ("aten.detach.default", "aten.ones_like.default", "aten.empty.memory_format")
    logs = [[op for op in _logged(lib, program) if op not in noise] for lib in (torch, internals)]
    assert logs[1] == logs[0]


def test_embedding_logs_torch_operators():
    def program(lib):
        weight = lib.ones(5, 2, requires_grad=True)
        lib.nn.functional.embedding(lib.tensor([[1, 2], [4, 1]]), weight).sum().backward()
    noise = ("aten.detach.default", "aten.ones_like.default", "aten.lift_fresh.default")
    logs = [[op for op in _logged(lib, program) if op not in noise] for lib in (torch, internals)]
    assert logs[1] == logs[0]


# ---------------------------------------------------------------------------- modules
def _net(nn):
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.LayerNorm(16), nn.GELU(), nn.Linear(16, 5), nn.Tanh(), nn.SiLU(), nn.Sigmoid())


def test_modules_from_the_same_seed_equal_torch():
    """Built from one seed in each library (no weights copied): the same parameters, buffers,
    repr, outputs, gradients and running statistics."""
    nets, outs = [], []
    for lib in (torch, internals):
        lib.manual_seed(0)
        net = _net(lib.nn)
        x = lib.randn(3, 1, 4, 4)
        out = net(x)
        out.sum().backward()
        nets.append(net)
        outs.append(out)
    ours, theirs = nets[1], nets[0]
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    for (name, o), (_, t) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert_same(o, t, rtol=1e-6, atol=1e-6), name
    assert_same(outs[1], outs[0].detach(), rtol=1e-5, atol=1e-6)
    for (name, o), (_, t) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_same(o.grad, t.grad, rtol=1e-4, atol=1e-5), name
    assert int(ours[1].num_batches_tracked) == 1


def test_batch_norm_eval_and_momentum_none():
    for momentum in (0.1, None):
        mods = []
        for lib in (torch, internals):
            lib.manual_seed(5)
            bn = lib.nn.BatchNorm1d(3, momentum=momentum)
            for _ in range(3):
                bn(lib.randn(4, 3))
            bn.eval()
            mods.append((bn, bn(lib.randn(4, 3, 2))))
        (theirs, expected), (ours, out) = mods
        assert_same(out, expected, rtol=1e-6, atol=1e-6)
        assert_same(ours.running_var, theirs.running_var, rtol=1e-6, atol=1e-7)
        assert int(ours.num_batches_tracked) == 3


def test_layer_repr_and_options():
    for build in (lambda nn: nn.Conv2d(4, 6, (3, 2), stride=2, padding=(1, 0), dilation=2, groups=2, bias=False),
                  lambda nn: nn.Conv2d(1, 2, 3, padding="same"),
                  lambda nn: nn.MaxPool2d(3, 1, 1, ceil_mode=True),
                  lambda nn: nn.BatchNorm2d(3, affine=False, track_running_stats=False),
                  lambda nn: nn.LayerNorm((2, 3), elementwise_affine=False),
                  lambda nn: nn.Embedding(10, 4, padding_idx=-2, scale_grad_by_freq=True),
                  lambda nn: nn.Flatten(0, 2), lambda nn: nn.GELU("tanh"), lambda nn: nn.SiLU(inplace=True)):
        assert repr(build(internals.nn)) == repr(build(torch.nn))


NORMS = {"BatchNorm1d": lambda nn, **kw: nn.BatchNorm2d(3, **kw),
         "LayerNorm": lambda nn, **kw: nn.LayerNorm(3, **kw),
         "GroupNorm": lambda nn, **kw: nn.GroupNorm(1, 3, **kw)}


@pytest.mark.parametrize("layer", sorted(NORMS))
def test_norm_reprs_follow_the_installed_torch(layer, monkeypatch):
    """``bias=`` is in the norm layers' reprs only where the torch beside the package prints it
    (2.13 on; Colab's older torch does not), so a chapter comparing the two reprs holds on both."""
    build = NORMS[layer]
    assert _repr_fields.torch_prints_bias(layer) == ("bias=" in repr(build(torch.nn)))
    assert repr(build(internals.nn)) == repr(build(torch.nn))
    for torch_prints in (True, False):
        monkeypatch.setattr(_repr_fields, "torch_prints_bias", lambda name, answer=torch_prints: answer)
        assert ("bias=True" in repr(build(internals.nn))) == torch_prints
        assert ("bias=False" in repr(build(internals.nn, bias=False))) == torch_prints


def test_conv2d_padding_same_and_unbatched():
    torch.manual_seed(6)
    x, w = torch.randn(2, 5, 6), torch.randn(3, 2, 3, 3)
    for padding in ("same", "valid"):
        assert_same(F.conv2d(internals.from_torch(x), internals.from_torch(w), padding=padding, dilation=2),
                    NNF.conv2d(x, w, padding=padding, dilation=2), rtol=1e-5, atol=1e-5)
    # An odd total padding: torch pads the end one more, and warns with this text (TORCH_WARN_ONCE:
    # once per process, so torch's own warning may already have gone out in this test worker;
    # the package's goes out once too, from a fresh start here).
    internals.c10.exception.reset_warn_once("_warn_uneven_same_padding")
    even = torch.randn(3, 2, 2, 4)
    with pytest.warns(UserWarning) as ours:
        out = F.conv2d(internals.from_torch(x), internals.from_torch(even), padding="same")
    assert str(ours[0].message) == ("Using padding='same' with even kernel lengths and odd dilation may require a "
                                    "zero-padded copy of the input be created")
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        F.conv1d(internals.from_torch(x[:, :, 0]), internals.from_torch(even[..., 0]), padding="same")
    assert again == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = NNF.conv2d(x, even, padding="same")
    assert_same(out, expected, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------- errors
ERRORS = {
    "conv channels": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 2, 4, 4), lib.ones(1, 1, 2, 2)),
    "conv dtypes": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 4, 4, dtype=lib.float64), lib.ones(1, 1, 2, 2)),
    "conv kernel too big": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 1, 1), lib.ones(1, 1, 2, 2)),
    "conv 2d input": lambda lib: lib.nn.functional.conv2d(lib.ones(4, 4), lib.ones(1, 1, 2, 2)),
    "conv bool": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 4, 4, dtype=lib.bool),
                                                      lib.ones(1, 1, 2, 2, dtype=lib.bool)),
    "conv bad padding string": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 4, 4), lib.ones(1, 1, 2, 2),
                                                                    padding="full"),
    "pool big pad": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), 2, padding=2),
    "pool too small": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), 5),
    "pool zero stride": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), 2, 0),
    "pool 2d input": lambda lib: lib.nn.functional.max_pool2d(lib.ones(4, 4), 2),
    "bn one value": lambda lib: lib.nn.functional.batch_norm(lib.ones(1, 3), lib.zeros(3), lib.ones(3),
                                                             training=True),
    "bn channels": lambda lib: lib.nn.functional.batch_norm(lib.ones(2, 3), lib.zeros(4), lib.ones(4)),
    "bn2d dims": lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(2, 3)),
    "ln shape": lambda lib: lib.nn.functional.layer_norm(lib.ones(2, 3), [4]),
    "emb float indices": lambda lib: lib.nn.functional.embedding(lib.ones(2), lib.ones(3, 2)),
    "emb out of range": lambda lib: lib.nn.functional.embedding(lib.tensor([5]), lib.ones(3, 2)),
    "emb padding_idx": lambda lib: lib.nn.Embedding(3, 2, padding_idx=3),
    "conv module groups": lambda lib: lib.nn.Conv2d(3, 4, 2, groups=2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    ours, theirs = assert_same_error(lambda: ERRORS[name](internals), lambda: ERRORS[name](torch))
    assert str(ours).replace("internals.Size", "torch.Size") == str(theirs)


def test_pool_backward_refuses_indices_outside_the_plane():
    """The backward loop writes where the indices point: a caller's bad index must be refused
    before it runs, not written outside the gradient's buffer."""
    x = internals.randn(1, 1, 4, 4)
    grad = internals.ones(1, 1, 2, 2)
    for bad in (16, -1, 10 ** 9):
        indices = internals.tensor([[[[0, 1], [2, bad]]]])
        with pytest.raises(RuntimeError, match="outside its 4x4 input plane"):
            internals.ops.aten.max_pool2d_with_indices_backward(grad, x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices)
    with pytest.raises(RuntimeError, match=r"Expected a tensor of dimension 4 and tensor.size\[2\] == 2"):
        internals.ops.aten.max_pool2d_with_indices_backward(grad, x, [2, 2], [2, 2], [0, 0], [1, 1], False,
                                                            internals.zeros(1, 1, 3, 2, dtype=internals.int64))


# ---------------------------------------------------------------------------- cuda
@pytest.mark.slow
def test_layers_on_cuda_match_cpu():
    """The CUDA im2col/col2im and pooling kernels (on the simulator without a GPU) give the CPU's
    results, forward and backward, for a small conv -> batch norm -> pool -> layer norm chain."""
    results = []
    for device in ("cpu", "cuda"):
        internals.manual_seed(0)
        net = internals.nn.Sequential(internals.nn.Conv2d(2, 3, 3, stride=2, padding=1, dilation=1),
                                      internals.nn.BatchNorm2d(3), internals.nn.MaxPool2d(2, 1, 1),
                                      internals.nn.LayerNorm(4)).double().to(device)
        x = internals.randn(2, 2, 6, 6, dtype=internals.float64).to(device).requires_grad_()
        out = net(x)
        out.pow(2).sum().backward()
        results.append([out.cpu(), x.grad.cpu(), net[0].weight.grad.cpu(), net[1].running_var.cpu()])
    for cpu, cuda in zip(*results):
        assert_same(cuda, cpu.to_torch(), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- a CNN, step for step
def test_cnn_trains_like_torch_from_the_same_seed():
    """Chapter 10's loop in small: built, shuffled, dropped-out and trained (AdamW, StepLR) from one
    seed in each library, nothing copied across; every loss and the final state equal torch's."""
    def run(lib):
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.25), nn.Linear(16, 3))
        x, y = lib.rand(40, 1, 4, 4), lib.randint(0, 3, (40,))
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(x, y), 8, shuffle=True,
                                           generator=lib.Generator().manual_seed(1))
        opt = lib.optim.AdamW(model.parameters(), lr=1e-2)
        schedule = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        losses = []
        for _ in range(2):
            for xb, yb in loader:
                loss = lib.nn.functional.cross_entropy(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                schedule.step()
                losses.append(loss.item())
        return losses, model.state_dict()

    (losses_t, state_t), (losses_i, state_i) = run(torch), run(internals)
    assert len(losses_i) == len(losses_t) == 10
    assert max(abs(a - b) for a, b in zip(losses_i, losses_t)) <= 1e-5
    assert list(state_i) == list(state_t)
    for k in state_t:
        assert_same(state_i[k], state_t[k], rtol=1e-5, atol=1e-5)


def test_unflatten_module_matches_torch():
    """nn.Unflatten: a view of the input, torch's repr and torch's argument errors."""
    for lib in (internals, torch):
        x = lib.arange(24.0).reshape(2, 12)
        y = lib.nn.Unflatten(1, (3, 4))(x)
        assert (tuple(y.shape), y.stride(), y.data_ptr() == x.data_ptr()) == ((2, 3, 4), (12, 4, 1), True)
    for make in (lambda nn: nn.Unflatten(1, (3, 4)), lambda nn: nn.Unflatten(-1, [2, -1])):
        assert repr(make(internals.nn)) == repr(make(torch.nn))
    for bad in (lambda nn: nn.Unflatten(1, 6), lambda nn: nn.Unflatten(1, (2, 3.0))):
        assert_same_error(lambda b=bad: b(internals.nn), lambda b=bad: b(torch.nn))


def test_embedding_from_pretrained_matches_torch():
    """The given tensor becomes the weight (shared storage), frozen unless freeze=False; the
    options reach the lookup; a tensor that is not 2-d is refused as torch refuses it."""
    weights = torch.randn(5, 3)
    for freeze in (True, False):
        theirs = torch.nn.Embedding.from_pretrained(weights, freeze=freeze, padding_idx=1, max_norm=1.0)
        ours = internals.nn.Embedding.from_pretrained(internals.from_torch(weights), freeze=freeze, padding_idx=1,
                                                      max_norm=1.0)
        assert repr(ours) == repr(theirs)
        assert ours.weight.requires_grad == theirs.weight.requires_grad == (not freeze)
        idx = [[0, 1, 4], [4, 2, 1]]
        assert_same(ours(internals.tensor(idx)), theirs(torch.tensor(idx)), rtol=1e-6, atol=1e-7)
    shared = internals.randn(4, 2)
    assert internals.nn.Embedding.from_pretrained(shared).weight.data_ptr() == shared.data_ptr()
    assert_same_error(lambda: internals.nn.Embedding.from_pretrained(internals.ones(3)),
                      lambda: torch.nn.Embedding.from_pretrained(torch.ones(3)))


@pytest.mark.parametrize("shape, order, normalized", [((0, 4, 6, 6), (0, 3, 2, 1), (4,)), ((3, 0, 5), (1, 0, 2), (5,))])
def test_layer_norm_of_an_empty_permuted_input_is_laid_out_as_torchs(shape, order, normalized):
    """An empty tensor is contiguous whatever its strides, so no copy happens; torch's output is
    still allocated contiguous, where the composed result kept the permuted strides."""
    values = torch.zeros(shape).permute(order)
    theirs = torch.nn.functional.layer_norm(values, normalized)
    ours = internals.nn.functional.layer_norm(internals.from_torch(values), normalized)
    assert (tuple(ours.shape), ours.stride()) == (tuple(theirs.shape), theirs.stride())


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape, order", [((3, 4, 6, 6), (0, 1, 3, 2)), ((5, 4, 3), (2, 1, 0)),
                                          ((3, 6, 6, 4), (0, 3, 1, 2))])
def test_batch_norm_output_layout_follows_torchs_suggested_format(shape, order, training):
    """A transposed input gives a contiguous output (torch allocates in the suggested format);
    only a channels-last input keeps its layout. The values were right, the strides the input's."""
    values = torch.randn(shape, generator=torch.Generator().manual_seed(0)).permute(order)
    channels = values.shape[1]
    theirs = torch.nn.functional.batch_norm(values, torch.zeros(channels), torch.ones(channels), training=training)
    ours = internals.nn.functional.batch_norm(internals.from_torch(values), internals.zeros(channels),
                                              internals.ones(channels), training=training)
    assert ours.stride() == theirs.stride()
    torch.testing.assert_close(ours.to_torch(), theirs)


@pytest.mark.parametrize("spatial", [1, 2, 3])
@pytest.mark.parametrize("dtypes", [("float64", "float32", "float32"), ("float64", "float32", "float64"),
                                    ("float32", "float32", "int64"), ("int8", "int8", "float32"),
                                    ("float32", "float32", "complex128")], ids="-".join)
def test_convolution_checks_the_bias_dtype_before_the_weight_dtype_as_torch(spatial, dtypes):
    """A bias of a dtype other than the input's is named in C++'s words ("Input type (double) and
    bias type (float) should be the same") before a weight of another dtype is."""
    def program(lib):
        x, w, b = (getattr(lib, name) for name in dtypes)
        conv = getattr(lib.nn.functional, f"conv{spatial}d")
        return conv(lib.ones(1, 1, *[2] * spatial, dtype=x), lib.ones(1, 1, *[1] * spatial, dtype=w),
                    lib.ones(1, dtype=b))
    same_error(program)


def _batch_norm_second_gradients(lib, shape, affine, weight_grad, loss):
    x = (lib.linspace(-2., 2., math.prod(shape), dtype=lib.float64).reshape(shape) ** 3).requires_grad_()
    w = lib.linspace(0.5, 1.5, shape[1], dtype=lib.float64).requires_grad_(weight_grad) if affine else None
    b = lib.linspace(-.5, .5, shape[1], dtype=lib.float64).requires_grad_() if affine else None
    out = lib.nn.functional.batch_norm(x, None, None, w, b, training=True)
    inputs = [t for t in (x, w, b) if t is not None and t.requires_grad]
    first = lib.autograd.grad(loss(out), inputs, create_graph=True)
    live = [g for g in first if g.requires_grad]
    return [out, *first, *lib.autograd.grad(sum((g * g).sum() for g in live), inputs, allow_unused=True,
                                            create_graph=True)]


@pytest.mark.parametrize("loss", ["weighted", "cube"])
@pytest.mark.parametrize("affine, weight_grad", [(True, False), (False, False), (True, True)])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 4), (2, 3, 2, 2)])
def test_batch_norm_second_gradients_nodes_as_torch(shape, affine, weight_grad, loss):
    """In training, the input's second gradient is γ times the first gradient's terms when the weight
    takes no gradient (torch's MulBackward0, γ = 1 without a weight), an add when it does."""
    def f(out):     # a weighted sum: its gradient, a constant, takes none itself (a plain sum's is 0)
        c = out.new_tensor([(i % 5 + 1.) ** 2 for i in range(out.numel())]).reshape(out.shape)
        return (out * c).sum() if loss == "weighted" else (out ** 3).sum()
    ours = _batch_norm_second_gradients(internals, shape, affine, weight_grad, f)
    theirs = _batch_norm_second_gradients(torch, shape, affine, weight_grad, f)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if t is not None:
            assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
            assert_within_ulps_of_largest(o.detach(), t.detach(), 256)
