"""``max_unpool2d`` / ``max_unpool3d`` (``aten/native/max_unpooling.py``), ``F.max_unpool1d/2d/3d``
and ``nn.MaxUnpool1d/2d/3d`` against torch.

Unpooling moves values: each input value lands where its index points in a zeroed plane (or
volume), so values and gradients (a gather at the same indices) are compared bit for bit, in
every floating type torch's kernel takes. Two inputs naming one position is the one case torch
leaves to chance (its CPU loop splits the elements among threads): the package writes them in the
plane's order, which is torch's answer on one thread, so torch runs on one thread where the
indices repeat. Indices from outside the plane raise torch's error before anything is written."""

import numpy as np
import pytest
import torch
from helpers import (
    Adapter,
    assert_fake_matches_real,
    assert_same,
    assert_second_derivatives_match_torch,
    check_opinfo_samples,
    opinfo_cases,
    same_outcome,
    torch_on_one_thread,  # repeated indices: one thread keeps the last value, in order
)

import internals

_KW = ("kernel_size", "stride", "padding", "output_size")
ADAPTERS = {
    "nn.functional.max_unpool1d": Adapter(internals.nn.functional.max_unpool1d, kwargs=_KW),
    "nn.functional.max_unpool1d.grad": Adapter(internals.nn.functional.max_unpool1d, kwargs=_KW),
    "nn.functional.max_unpool2d": Adapter(internals.nn.functional.max_unpool2d, kwargs=_KW),
    "nn.functional.max_unpool2d.grad": Adapter(internals.nn.functional.max_unpool2d, kwargs=_KW),
    "nn.functional.max_unpool3d": Adapter(internals.nn.functional.max_unpool3d, kwargs=_KW),
    "nn.functional.max_unpool3d.grad": Adapter(internals.nn.functional.max_unpool3d, kwargs=_KW),
}


# The samples are max pooling's (every batched shape, kernel, stride, padding and ceil_mode, pooled
# with indices: up to 192 per operator), all moved by the one unpooling loop compiled per dtype.
# float32 runs them all; the other dtypes every 5th, which still holds every shape, every value of
# each argument and (2-d and 3-d) all 12 mixes of stride, padding and ceil_mode.
OTHER_DTYPES_STEP = 5


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.float16,
                                                                torch.bfloat16)))
def test_opinfo_samples(name, dtype):
    """PyTorch's own samples (some with repeated indices), as given and made non-contiguous."""
    with torch_on_one_thread():
        check_opinfo_samples(name, dtype, ADAPTERS[name], step=1 if dtype == torch.float32 else OTHER_DTYPES_STEP)


def _t(L, shape, seed=0, dtype="float64", requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    x = L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape)
    return x.requires_grad_(requires_grad)


def _layout(L, x, layout):
    if layout == "channels_last":
        return x.contiguous(memory_format=L.channels_last if x.dim() == 4 else L.channels_last_3d)
    if layout == "transposed":
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    return x


# input shape, pooling arguments, unpooling arguments: the indices come from torch's own max pool
CASES = {
    "2d": ((2, 3, 6, 6), "max_pool2d", dict(kernel_size=2), "max_unpool2d", {}),
    "2d_unbatched_padded": ((3, 5, 7), "max_pool2d", dict(kernel_size=3, stride=2, padding=1), "max_unpool2d",
                            dict(output_size=(5, 7))),
    "2d_overlapping_windows": ((1, 2, 5, 5), "max_pool2d", dict(kernel_size=3, stride=1), "max_unpool2d",
                               dict(output_size=[1, 2, 5, 5])),
    "2d_rect_output_size": ((2, 2, 7, 6), "max_pool2d", dict(kernel_size=(2, 3), stride=(2, 2)), "max_unpool2d",
                            dict(output_size=(7, 6))),
    "3d": ((2, 2, 4, 4, 6), "max_pool3d", dict(kernel_size=2), "max_unpool3d", {}),
    "3d_unbatched_padded": ((2, 5, 4, 5), "max_pool3d", dict(kernel_size=3, stride=2, padding=1), "max_unpool3d",
                            dict(output_size=(5, 4, 5))),
    "3d_rect": ((1, 2, 5, 6, 4), "max_pool3d", dict(kernel_size=(2, 3, 2), stride=(2, 3, 1)), "max_unpool3d",
                dict(output_size=(5, 6, 4))),
    "1d": ((2, 3, 9), "max_pool1d", dict(kernel_size=2), "max_unpool1d", dict(output_size=[9])),
    "1d_unbatched": ((3, 8), "max_pool1d", dict(kernel_size=3, stride=2, padding=1), "max_unpool1d", {}),
}


def _pool_then_unpool(L, name, layout, dtype="float64", requires_grad=True):
    shape, pool, pool_kw, unpool, unpool_kw = CASES[name]
    F = L.nn.functional
    x = _t(L, shape, dtype=dtype)
    pooled, indices = getattr(F, pool)(x, return_indices=True, **pool_kw)
    if pool == "max_pool3d" and layout == "channels_last" and pooled.dim() == 5:
        pooled = pooled.contiguous(memory_format=L.channels_last_3d)
    else:
        pooled = _layout(L, pooled, layout) if pooled.dim() >= 4 or layout == "transposed" else pooled
    pooled = (pooled.detach() * 1).requires_grad_(requires_grad)
    kw = {k: v for k, v in pool_kw.items() if k != "kernel_size"}
    return pooled, indices, getattr(F, unpool)(pooled, indices, pool_kw["kernel_size"], **kw, **unpool_kw)


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed"])
@pytest.mark.parametrize("name", list(CASES))
def test_values_layout_nodes_and_two_gradients_are_torchs_bit_for_bit(name, layout):
    if layout == "channels_last" and len(CASES[name][0]) < 4:
        pytest.skip("channels_last is a 4-d or 5-d layout")

    def run(L):
        pooled, _, y = _pool_then_unpool(L, name, layout)
        nodes = (y.grad_fn.name(), [n.name() for n, _ in y.grad_fn.next_functions if n is not None])
        w = _t(L, tuple(y.shape), seed=2, requires_grad=True)
        g, = L.autograd.grad((y * w).sum(), pooled, create_graph=True)
        g_nodes = (g.grad_fn.name(), [n.name() for n, _ in g.grad_fn.next_functions if n is not None])
        v = _t(L, tuple(g.shape), seed=3)
        gg, = L.autograd.grad((g * v).sum(), w)      # the gradient is linear in w: the unpooling again
        return y, g, gg, nodes, g_nodes
    with torch_on_one_thread():
        theirs = run(torch)
    ours = run(internals)
    for o, t in zip(ours[:3], theirs[:3]):
        assert_same(o, t, rtol=0, atol=0)
    assert ours[3:] == theirs[3:]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", ["2d", "3d_unbatched_padded", "1d"])
def test_the_16_and_32_bit_floats_move_as_torchs(name, dtype):
    def run(L):
        pooled, indices, y = _pool_then_unpool(L, name, "contiguous", dtype=dtype)
        g, = L.autograd.grad(y, pooled, _t(L, tuple(y.shape), seed=4, dtype=dtype))
        return y, g
    with torch_on_one_thread():
        theirs = run(torch)
    for o, t in zip(run(internals), theirs):
        assert_same(o, t, rtol=0, atol=0)


def _aten(L, dims, x, indices, size, **extra):
    if dims == 2:
        return L.ops.aten.max_unpool2d(x, indices, size, **extra)
    return L.ops.aten.max_unpool3d(x, indices, size, [2, 2, 2], [0, 0, 0], **extra)


def _pooled(L, dims, dtype="float32", batch=2):
    x = _t(L, (batch, 3) + (4,) * dims, dtype="float64")
    pooled, indices = getattr(L.nn.functional, f"max_pool{dims}d")(x, 2, return_indices=True)
    return pooled.to(getattr(L, dtype)), indices


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", "complex64"])
def test_types_torchs_kernel_has_no_loop_for_are_refused_unless_the_output_is_empty(dtype, dims):
    same_outcome(lambda L: _aten(L, dims, *_pooled(L, dims, dtype), [4] * dims))
    same_outcome(lambda L: _aten(L, dims, *_pooled(L, dims, dtype), [0] + [4] * (dims - 1)))
    same_outcome(lambda L: _aten(L, dims, *_pooled(L, dims, dtype, batch=0), [4] * dims))


def _with(indices, at, value):
    indices = indices.clone()
    indices.view(-1)[at] = value
    return indices


BAD = {     # (dims, program(L, pooled, indices))
    "index_past_the_plane": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x, _with(i, 5, 16), [4, 4])),
    "negative_index": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x, _with(i, 7, -1), [4, 4])),
    "huge_index": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x, _with(i, 0, 2 ** 40), [4, 4])),
    "output_size_too_small_for_the_indices": (2, lambda L, x, i: L.ops.aten.max_unpool2d(
        x, L.full_like(i, 10), [3, 3])),
    "int32_indices": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x, i.int(), [4, 4])),
    "three_output_sizes": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x, i, [4, 4, 4])),
    "output_size_before_rank": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x[0, 0], i[0, 0], [4, 4, 4])),
    "2d_input": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x[0, 0], i[0, 0], [4, 4])),
    "5d_input": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x[None], i[None], [4, 4])),
    "indices_of_another_shape": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x, i[:1], [4, 4])),
    "empty_channels": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x[:, :0], i[:, :0], [4, 4])),
    "negative_output_size": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x, i, [-1, 4])),
    "zero_output_size": (2, lambda L, x, i: L.ops.aten.max_unpool2d(x, i, [0, 4])),
    "3d_index_past_the_volume": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x, _with(i, 3, 64), [4, 4, 4],
                                                                             [2, 2, 2], [0, 0, 0])),
    "3d_int32_indices_before_rank": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x[0, 0], i[0, 0].int(), [4, 4, 4],
                                                                                 [2, 2, 2], [0, 0, 0])),
    "3d_rank": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x[0, 0], i[0, 0], [4, 4, 4], [2, 2, 2], [0, 0, 0])),
    "3d_two_output_sizes": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x, i, [4, 4], [2, 2, 2], [0, 0, 0])),
    "3d_two_strides": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x, i, [4, 4, 4], [2, 2], [0, 0, 0])),
    "3d_two_paddings": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x, i, [4, 4, 4], [2, 2, 2], [0, 0])),
    "3d_indices_of_another_shape": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x[:1], i, [4, 4, 4], [0, 2, 2],
                                                                                [0, 0, 0])),
    "3d_empty_channels": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x[:, :0], i[:, :0], [4, 4, 4], [0, 2, 2],
                                                                      [0, 0, 0])),
    "3d_zero_stride": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x, i, [4, 4, 4], [0, 2, 2], [0, 0, 0])),
    "3d_negative_output_size": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x, i, [4, -4, 4], [2, 2, 2],
                                                                            [0, 0, 0])),
    "3d_negative_padding_unchecked": (3, lambda L, x, i: L.ops.aten.max_unpool3d(x, i, [4, 4, 4], [2, 2, 2],
                                                                                  [-1, 0, 0])),
    "F_output_size_out_of_reach": (2, lambda L, x, i: L.nn.functional.max_unpool2d(x, i, 2, output_size=[6, 6])),
    "F_output_size_of_three": (2, lambda L, x, i: L.nn.functional.max_unpool2d(x, i, 2, output_size=[1, 4, 4])),
    "F_zero_stride": (2, lambda L, x, i: L.nn.functional.max_unpool2d(x, i, 2, stride=0)),
    "F_3d_two_kernel_sizes": (3, lambda L, x, i: L.nn.functional.max_unpool3d(x, i, (2, 2), padding=1)),
    "F_1d_of_a_1d_input": (2, lambda L, x, i: L.nn.functional.max_unpool1d(x[0, 0, 0], i[0, 0, 0], 2)),
}


# Cases where several indices fall outside the output: which one torch's message names depends on
# how its loop splits the planes between threads, so only the class is compared.
SEVERAL_BAD_INDICES = {"F_zero_stride"}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torchs_error_in_torchs_words(name):
    dims, program = BAD[name]
    same_outcome(lambda L: program(L, *_pooled(L, dims)), message=name not in SEVERAL_BAD_INDICES)


@pytest.mark.parametrize("where", ["inside", "far_outside"])
def test_hostile_indices_write_nothing_anywhere(where):
    """A bad index raises before the loop: the ``out`` view and the storage around it keep their values."""
    x, indices = _pooled(internals, 2)
    bad = _with(indices, 11, 16 if where == "inside" else -(2 ** 33))
    storage = internals.full((3 * 2 * 3 * 4 * 4,), 7.0)
    out = storage[2 * 3 * 4 * 4: 4 * 3 * 4 * 4].view(2, 3, 4, 4)
    with pytest.raises(RuntimeError, match="Found an invalid max index"):
        internals.ops.aten.max_unpool2d.out(x, bad, [4, 4], out=out)
    assert storage.eq(7.0).all().item()
    with pytest.raises(RuntimeError, match="Found an invalid max index"):
        internals.nn.functional.max_unpool2d(x.to("cuda"), bad.to("cuda"), 2)


def test_out_variants_resize_and_lay_out_as_torch():
    def fitting_3d_input(L):      # a 3-d input: ``resize_`` keeps a fitting out's strides
        x, i = _pooled(L, 2)
        out = L.empty(3, 4, 4).transpose(1, 2)
        return L.ops.aten.max_unpool2d.out(x[0], i[0], [4, 4], out=out) is out, out

    def fitting_4d_input(L):      # a 4-d input: restrided to its suggested format
        x, i = _pooled(L, 2)
        out = L.empty(2, 3, 4, 4).transpose(2, 3)
        return L.ops.aten.max_unpool2d.out(x.contiguous(memory_format=L.channels_last), i, [4, 4], out=out), out
    for program in (fitting_3d_input, fitting_4d_input):
        same_outcome(program)
    same_outcome(lambda L: L.ops.aten.max_unpool2d.out(*_pooled(L, 2), [4, 4], out=L.empty(5)))
    same_outcome(lambda L: L.ops.aten.max_unpool3d.out(*_pooled(L, 3), [4, 4, 4], [2, 2, 2], [0, 0, 0],
                                                       out=L.empty(7)))
    same_outcome(lambda L: L.ops.aten.max_unpool3d.out(*_pooled(L, 3), [4, 4, 4], [2, 2, 2], [0, 0, 0],
                                                       out=L.empty(2, 3, 4, 4, 4).transpose(3, 4)))
    same_outcome(lambda L: L.ops.aten.max_unpool2d.out(*_pooled(L, 2), [4, 4], out=L.empty(0, dtype=L.float64)))


def test_fake_tensors_get_the_real_layout():
    def operands():
        x, i = _pooled(internals, 2)
        return x.contiguous(memory_format=internals.channels_last), i
    assert_fake_matches_real(lambda L, x, i: L.ops.aten.max_unpool2d(x, i, [5, 5]), operands)
    assert_fake_matches_real(lambda L, x, i: L.ops.aten.max_unpool2d(x[0], i[0], [4, 4]), operands)

    def operands_3d():
        return _pooled(internals, 3)
    assert_fake_matches_real(lambda L, x, i: L.ops.aten.max_unpool3d(x, i, [4, 4, 5], [2, 2, 2], [0, 0, 0]),
                             operands_3d)


def test_the_modules_match_torch_and_print_alike():
    def run(L):
        x = _t(L, (2, 2, 6, 6, 6))
        pool3, unpool3 = L.nn.MaxPool3d(2, stride=2, return_indices=True), L.nn.MaxUnpool3d(2, stride=2)
        pool2, unpool2 = L.nn.MaxPool2d(3, 2, padding=1, return_indices=True), L.nn.MaxUnpool2d(3, 2, padding=1)
        pool1, unpool1 = L.nn.MaxPool1d(2, return_indices=True), L.nn.MaxUnpool1d(2)
        outs = (unpool3(*pool3(x)), unpool2(*pool2(x[0]), output_size=(6, 6)),
                unpool1(*pool1(x[0, 0, 0]), output_size=[6]))
        return outs, [repr(m) for m in (unpool3, unpool2, unpool1, L.nn.MaxUnpool2d((2, 1), stride=1))]
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[0], theirs[0]):
        assert_same(o, t, rtol=0, atol=0)
    assert ours[1] == theirs[1]


def test_cuda_kernels_give_torchs_values():
    """A thread per plane on the device: repeated indices too land as on the CPU."""
    for name in ("2d_overlapping_windows", "3d_unbatched_padded", "1d"):
        _, _, pool_kw, unpool, unpool_kw = CASES[name]
        kw = {k: v for k, v in pool_kw.items() if k != "kernel_size"}

        def run(L, device, name=name, unpool=unpool, unpool_kw=unpool_kw, pool_kw=pool_kw, kw=kw):
            pooled, indices, _ = _pool_then_unpool(L, name, "contiguous", requires_grad=False)
            x = pooled.to(device).requires_grad_(True)
            y = getattr(L.nn.functional, unpool)(x, indices.to(device), pool_kw["kernel_size"], **kw, **unpool_kw)
            g, = L.autograd.grad(y, x, _t(L, tuple(y.shape), seed=5).to(device))
            return y.cpu(), g.cpu()
        with torch_on_one_thread():
            theirs = run(torch, "cpu")
        for o, t in zip(run(internals, "cuda"), theirs):
            assert_same(o, t, rtol=0, atol=0)


# Differentiated twice through the gather the gradient is (tests/autograd/test_autograd.py counts
# the nodes these reach).
SECOND_ORDER = {
    "max_unpool2d": lambda L: (lambda x: (L.nn.functional.max_unpool2d(
        *L.nn.functional.max_pool2d(x * x, 2, 1, return_indices=True), 2, 1) ** 2, x))(
            _t(L, (1, 2, 4, 5), 6, requires_grad=True)),
    "max_unpool3d": lambda L: (lambda x: (L.nn.functional.max_unpool3d(
        *L.nn.functional.max_pool3d(x * x, 2, 2, return_indices=True), 2, 2) ** 2, x))(
            _t(L, (1, 2, 4, 4, 4), 7, requires_grad=True)),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives_match_torch(name):
    with torch_on_one_thread():
        assert_second_derivatives_match_torch(SECOND_ORDER[name])
