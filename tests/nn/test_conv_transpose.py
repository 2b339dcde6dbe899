"""Differential tests of the transposed convolutions against torch: ``F.conv_transpose1d``,
``F.conv_transpose2d`` (``convolution`` with ``transposed=True``, the plain convolution's adjoint:
``col2im`` of ``weightᵀ @ input``) and ``nn.ConvTranspose1d``/``ConvTranspose2d``.

PyTorch's OpInfo samples; a grid of geometries (stride, padding, dilation, groups, an output
padding past the stride but below the dilation) with values, every input's gradient and node
names; the operators a dispatch mode sees; errors with torch's messages; the modules' weight
layout, initialisation from one seed, reprs and ``output_size``.
"""
import itertools

import pytest
import torch
from helpers import (
    Adapter,
    assert_same,
    assert_same_error,
    check_opinfo_samples,
    logging_modes,
    opinfo_cases,
)

import internals

F, NNF = internals.nn.functional, torch.nn.functional
# col2im sums each output element's products in another order than torch's kernels
TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-12, 1e-12)}
KWARGS = ("bias", "stride", "padding", "output_padding", "groups", "dilation")
ADAPTERS = {"nn.functional.conv_transpose1d": Adapter(F.conv_transpose1d, kwargs=KWARGS, tol=TOL),
            "nn.functional.conv_transpose2d": Adapter(F.conv_transpose2d, kwargs=KWARGS, tol=TOL)}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64)))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


GEOMETRIES = [g for g in itertools.product([1, 2, 3], [0, 2], [1, 2], [1, 2], [0, 1])
              if g[4] < max(g[0], g[2])] + [(1, 0, 3, 1, 2)]     # output padding past the stride


@pytest.mark.parametrize("spatial", [1, 2])
@pytest.mark.parametrize("stride, padding, dilation, groups, output_padding", GEOMETRIES)
def test_values_gradients_and_nodes_match_torch(spatial, stride, padding, dilation, groups, output_padding):
    torch.manual_seed(0)
    shape, kernel = [(7,), (5, 4)][spatial - 1], [(3,), (3, 2)][spatial - 1]
    theirs = [torch.randn(2, 2 * groups, *shape, dtype=torch.float64).transpose(0, 1).contiguous().transpose(0, 1),
              torch.randn(2 * groups, 3, *kernel, dtype=torch.float64), torch.randn(3 * groups, dtype=torch.float64)]
    theirs = [t.requires_grad_() for t in theirs]
    ours = [internals.from_torch(t.detach()).requires_grad_() for t in theirs]
    name = f"conv_transpose{spatial}d"
    kwargs = dict(stride=stride, padding=padding, output_padding=output_padding, groups=groups, dilation=dilation)
    out_t, out_i = getattr(NNF, name)(*theirs, **kwargs), getattr(F, name)(*ours, **kwargs)
    assert_same(out_i, out_t, rtol=1e-12, atol=1e-12)
    assert type(out_i.grad_fn).__name__ == type(out_t.grad_fn).__name__ == "ConvolutionBackward0"
    g = torch.randn(out_t.shape, dtype=torch.float64)
    grads = internals.autograd.grad(out_i, ours, internals.from_torch(g))
    for o, t in zip(grads, torch.autograd.grad(out_t, theirs, g)):
        assert_same(o, t, exact_layout=False, rtol=1e-12, atol=1e-12)


BIAS_DTYPES = [(torch.float64, torch.float32), (torch.float32, torch.float64), (torch.float32, torch.int64),
               (torch.float16, torch.float32), (torch.bfloat16, torch.float32), (torch.int64, torch.float32),
               (torch.float32, torch.complex64)]


@pytest.mark.parametrize("spatial", [1, 2, 3])
@pytest.mark.parametrize("dtype, bias_dtype", BIAS_DTYPES, ids=str)
def test_a_bias_of_another_dtype_is_added_as_torchs_kernels_add_it(spatial, dtype, bias_dtype):
    """torch's 1-d and 2-d transposed kernel adds the bias with ``add_``: a bias of another dtype is
    promoted and the sum cast to the output's dtype, or refused as ``add_`` refuses it; its 3-d
    kernel refuses any bias of a dtype other than the input's. The gradients keep each input's dtype."""
    def run(lib):
        x = lib.arange(1.0, 5.0).reshape(1, 1, *[2] * (spatial - 1), -1).to(getattr(lib, str(dtype)[6:]))
        w = lib.ones(1, 2, *[1] * spatial, dtype=x.dtype) / 2
        b = lib.tensor([0.3, -1.7], dtype=getattr(lib, str(bias_dtype)[6:]))
        grads = x.dtype is lib.float64 and b.is_floating_point()
        for t in (x, w, b) if grads else ():
            t.requires_grad_()
        out = getattr(lib.nn.functional, f"conv_transpose{spatial}d")(x, w, b, stride=2)
        return [out] + (list(lib.autograd.grad(out, (x, w, b), lib.ones_like(out))) if grads else [])
    try:
        theirs = run(torch)
    except RuntimeError:
        return assert_same_error(lambda: run(internals), lambda: run(torch))
    for o, t in zip(run(internals), theirs, strict=True):
        assert_same(o, t, rtol=0, atol=0)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("other", ["weight", "bias"])
def test_16_bit_operands_of_another_type_as_this_cpus_torch(dtype, transposed, other):
    """Where oneDNN computes bfloat16 or half natively (AVX-512, AVX-512 FP16, AVX2-VNNI-2;
    ``ONEDNN_MAX_CPU_ISA`` caps it), torch sends these convolutions there, and oneDNN wants the
    weight and bias in the input's type; elsewhere the slow kernels take a bias of another type.
    Either way the same call must run or fail here as torch's does on this CPU, with its message."""
    def run(lib):
        x = lib.arange(1.0, 9.0).reshape(1, 1, 2, 4).to(getattr(lib, str(dtype)[6:]))
        w = lib.ones(1, 2 if transposed else 1, 1, 1, dtype=x.dtype) / 2
        b = lib.tensor([0.3, -1.7][:w.shape[1] if transposed else 1], dtype=x.dtype)
        w, b = (w.float(), b) if other == "weight" else (w, b.float())
        return getattr(lib.nn.functional, "conv_transpose2d" if transposed else "conv2d")(x, w, b, stride=2)
    try:
        theirs = run(torch)
    except RuntimeError:
        ours, theirs = assert_same_error(lambda: run(internals), lambda: run(torch))
        assert str(ours) == str(theirs)
        return
    assert_same(run(internals), theirs, rtol=0, atol=0)


def test_unbatched_float32_and_empty_batch():
    torch.manual_seed(0)
    for x, w in ((torch.randn(4, 5, 5), torch.randn(4, 2, 3, 3)), (torch.randn(0, 4, 5, 5), torch.randn(4, 2, 3, 3)),
                 (torch.randn(4, 6), torch.randn(4, 2, 3))):
        fn = "conv_transpose2d" if w.dim() == 4 else "conv_transpose1d"
        ours = getattr(F, fn)(internals.from_torch(x), internals.from_torch(w), stride=2)
        assert_same(ours, getattr(NNF, fn)(x, w, stride=2), rtol=1e-5, atol=1e-5)


def _logged(lib):
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    x, w = lib.ones(1, 2, 3, 3, requires_grad=True), lib.ones(2, 3, 2, 2, requires_grad=True)
    with mode_t if lib is torch else mode_i:
        lib.nn.functional.conv_transpose2d(x, w, stride=2).sum().backward()
    return log_t if lib is torch else log_i


def test_a_dispatch_mode_sees_torch_operators():
    theirs = [op for op in _logged(torch) if "conv" in op]
    assert theirs == ["aten.convolution.default", "aten.convolution_backward.default"]
    assert [op for op in _logged(internals) if "conv" in op] == theirs


ERRORS = {
    "output padding": lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 2, 3, 3), lib.ones(2, 1, 3, 3),
                                                                      stride=2, output_padding=2),
    "1-d output padding": lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(1, 2, 3), lib.ones(2, 1, 3),
                                                                          output_padding=1),
    "channels": lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 3, 3, 3), lib.ones(2, 1, 3, 3)),
    "bias": lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 2, 3, 3), lib.ones(2, 1, 3, 3), lib.ones(2)),
    "2-d input": lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(3, 3), lib.ones(2, 1, 3, 3)),
    "output_size": lambda lib: lib.nn.ConvTranspose2d(2, 1, 3, stride=2)(lib.ones(1, 2, 3, 3), output_size=[9, 9]),
    "output_size length": lambda lib: lib.nn.ConvTranspose1d(2, 1, 3)(lib.ones(1, 2, 3), output_size=[1, 2]),
    "padding mode": lambda lib: lib.nn.ConvTranspose2d(2, 1, 3, padding_mode="reflect"),
    "empty weight": lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 2, 3, 3), lib.ones(2, 0, 2, 2)),
    "1-d empty weight": lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(1, 2, 3), lib.ones(2, 0, 2)),
    "3-d empty weight": lambda lib: lib.nn.functional.conv_transpose3d(lib.ones(1, 2, 3, 3, 3),
                                                                        lib.ones(2, 0, 2, 2, 2)),
    "empty weight, empty batch": lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(0, 2, 3, 3),
                                                                                lib.ones(2, 0, 2, 2)),
    # a padding string is a tuple of its characters to torch's transposed modules: the call refuses it
    "padding string": lambda lib: lib.nn.ConvTranspose2d(2, 2, 2, padding="ab")(lib.ones(1, 2, 3, 3)),
    "padding same": lambda lib: lib.nn.ConvTranspose3d(2, 2, 2, padding="same")(lib.ones(1, 2, 3, 3, 3)),
    "output too small": lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 2, 3, 3), lib.ones(2, 2, 2, 2),
                                                                        padding=5),
    "1-d output too small": lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(1, 2, 3), lib.ones(2, 2, 2),
                                                                            padding=(5,)),
    "output size zero": lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 2, 3, 3), lib.ones(2, 2, 2, 2),
                                                                       padding=(0, 2)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    ours, theirs = assert_same_error(lambda: ERRORS[name](internals), lambda: ERRORS[name](torch))
    assert str(ours).replace("internals", "torch") == str(theirs)


def test_modules_initialise_print_and_pick_output_sizes_like_torch():
    for lib in (torch, internals):
        lib.manual_seed(3)
    ours, theirs = [lib.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
                    for lib in (internals, torch)]
    assert repr(ours) == repr(theirs) and ours.weight.shape == theirs.weight.shape == (4, 3, 3, 3)
    assert_same(ours.weight.detach(), theirs.weight.detach())
    assert_same(ours.bias.detach(), theirs.bias.detach())
    for size in ([9, 9], [1, 6, 10, 10]):
        shape = theirs(torch.ones(1, 4, 5, 5), output_size=size).shape
        assert ours(internals.ones(1, 4, 5, 5), output_size=size).shape == shape
    one_d = [lib.nn.ConvTranspose1d(2, 3, 4, stride=2, bias=False, dilation=2) for lib in (internals, torch)]
    assert repr(one_d[0]) == repr(one_d[1]) and one_d[0].bias is None
    assert one_d[0](internals.ones(2, 5)).shape == one_d[1](torch.ones(2, 5)).shape


@pytest.mark.parametrize("padding", ["same", "valid", "bogus"])
def test_a_padding_string_is_kept_as_torchs_tuple_of_characters(padding):
    """torch's ConvTranspose*d put padding through _pair/_triple: a string becomes the tuple of
    its characters, which the module prints and keeps (no ValueError at construction)."""
    for cls in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
        ours, theirs = (getattr(lib.nn, cls)(2, 2, 2, padding=padding) for lib in (internals, torch))
        assert repr(ours) == repr(theirs) and ours.padding == theirs.padding
