"""Fractional max pooling (``F.fractional_max_pool2d/3d``, their ``*_with_indices`` forms,
``nn.FractionalMaxPool2d/3d``) and ``F.max_pool2d_with_indices``, against torch.

The windows start at pseudo-random places drawn with ``rand`` (one sample per spatial dim for
each (batch, plane)): seeded alike, both libraries pick the same windows, so the maxima and the
indices are compared bit for bit (pooling moves values, it computes none), with the gradients
(twice: the backward is linear), node names, and the errors of bad arguments.
"""
import pytest
import torch
from helpers import assert_same, same_outcome, torch_on_one_thread

import internals


def _pool(lib, dims, shape, dtype, **kwargs):
    """A seeded pooling of a ramp with repeated values (ties) and one NaN window, its indices,
    the gradient of a weighted sum and the next draw of the generator."""
    lib.manual_seed(3)
    n = 1
    for s in shape:
        n *= s
    x = (lib.arange(n, dtype=dtype) * 7 % 11).reshape(shape)
    x[..., 0, 0] = float("nan")
    x = x.requires_grad_()
    f = getattr(lib.nn.functional, f"fractional_max_pool{dims}d")
    out, indices = f(x, return_indices=True, **kwargs)
    weights = lib.arange(out.numel(), dtype=dtype).reshape(out.shape)
    g, = lib.autograd.grad((out * weights).sum(), x, create_graph=True)
    return out, indices, g, type(out.grad_fn).__name__, lib.rand(2)


CASES = [
    (2, (2, 3, 7, 6), dict(kernel_size=2, output_size=(4, 3))),
    (2, (3, 9, 8), dict(kernel_size=(3, 2), output_ratio=(0.5, 0.5))),
    (2, (1, 2, 5, 5), dict(kernel_size=2, output_size=4)),
    (3, (2, 2, 5, 6, 7), dict(kernel_size=2, output_size=(3, 4, 3))),
    (3, (2, 6, 5, 6), dict(kernel_size=(2, 3, 2), output_ratio=0.5)),
]


@pytest.mark.parametrize("dims, shape, kwargs", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_seeded_windows_give_torchs_maxima_indices_and_gradients(dims, shape, kwargs, dtype):
    with torch_on_one_thread():
        theirs = _pool(torch, dims, shape, getattr(torch, dtype), **kwargs)
    ours = _pool(internals, dims, shape, getattr(internals, dtype), **kwargs)
    for mine, their in zip(ours[:3], theirs[:3]):
        assert_same(mine, their, rtol=0, atol=0)
    assert ours[3] == theirs[3]
    assert_same(ours[4], theirs[4], rtol=0, atol=0)        # the generator advanced alike


@pytest.mark.parametrize("dims", [2, 3])
def test_second_derivative_gathers_from_the_same_places(dims):
    def program(lib):
        lib.manual_seed(0)
        x = lib.arange(2 * 3 * 6 ** dims, dtype=lib.float64).reshape(2, 3, *[6] * dims) % 13
        x = x.requires_grad_()
        out = getattr(lib.nn.functional, f"fractional_max_pool{dims}d")(x, 2, output_size=3)
        g, = lib.autograd.grad((out * out).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        return g, gg, type(g.grad_fn).__name__
    ours, theirs = program(internals), program(torch)
    assert_same(ours[0], theirs[0], rtol=0, atol=0)
    assert_same(ours[1], theirs[1], rtol=0, atol=0)
    assert ours[2] == theirs[2]


def test_modules_keep_their_samples_as_a_buffer():
    results = []
    for lib in (torch, internals):
        samples = lib.tensor([[[0.25, 0.75], [0.5, 0.1]]])
        pool = lib.nn.FractionalMaxPool2d(3, output_size=(3, 2), return_indices=True, _random_samples=samples)
        x = (lib.arange(2 * 7 * 8, dtype=lib.float32) * 7 % 13).reshape(1, 2, 7, 8)
        out, indices = pool(x)
        pool3 = lib.nn.FractionalMaxPool3d((1, 2, 2), output_ratio=(0.5, 0.5, 0.75))
        lib.manual_seed(5)
        out3 = pool3(x.reshape(1, 1, 2, 7, 8))
        results.append((out, indices, out3, list(dict(pool.named_buffers())), pool3.kernel_size,
                        pool3.output_ratio))
    for ours, theirs in zip(results[1][:3], results[0][:3]):
        assert_same(ours, theirs, rtol=0, atol=0)
    assert results[1][3:] == results[0][3:]


@pytest.mark.parametrize("program", [
    # the operator's checks, in its order
    "ops.fractional_max_pool2d(lib.ones(1, 2, 6, 6), [7, 2], [1, 2], lib.ones(1, 2, 2) / 2)",
    "ops.fractional_max_pool2d(lib.ones(1, 2, 6, 6), [2, 2], [3, 6], lib.ones(1, 2, 2) / 2)",
    "ops.fractional_max_pool2d(lib.ones(2, 2, 6, 6), [2, 2], [3, 3], lib.ones(1, 2, 2) / 2)",
    "ops.fractional_max_pool2d(lib.ones(1, 2, 6, 6), [2, 2], [3, 3], lib.ones(1, 3, 2) / 2)",
    "ops.fractional_max_pool2d(lib.ones(1, 2, 6, 6), [2, 2], [3, 3], lib.ones(1, 2, 3) / 2)",
    "ops.fractional_max_pool2d(lib.ones(1, 2, 6, 6), [2, 2], [3, 3], lib.ones(1, 2) / 2)",
    "ops.fractional_max_pool2d(lib.ones(1, 2, 6, 6), [2, 2], [3, 3], lib.ones(1, 2, 2, dtype=lib.float64) / 2)",
    "ops.fractional_max_pool2d(lib.ones(1, 2, 0, 6), [2, 2], [3, 3], lib.ones(1, 2, 2) / 2)",
    "ops.fractional_max_pool2d(lib.ones(6, 6), [2, 2], [3, 3], lib.ones(1, 2, 2) / 2)",
    "ops.fractional_max_pool2d(lib.ones(1, 2, 6, 6).int(), [2, 2], [3, 3], lib.ones(1, 2, 2).int())",
    "ops.fractional_max_pool3d(lib.ones(1, 2, 6, 6, 6), [2, 2, 2], [5, 3, 3], lib.ones(1, 2, 3) / 2)",
    "ops.fractional_max_pool3d(lib.ones(1, 2, 6, 6, 6), [2, 2, 2], [3, 3, 3], lib.ones(1, 2, 2) / 2)",
    "ops.fractional_max_pool3d(lib.ones(2, 6, 6), [2, 2, 2], [3, 3, 3], lib.ones(1, 2, 3) / 2)",
    # the Python functions' and the modules' checks
    "lib.nn.functional.fractional_max_pool2d(lib.ones(1, 2, 6, 6), 2)",
    "lib.nn.functional.fractional_max_pool3d(lib.ones(1, 2, 6, 6, 6), 2)",
    "lib.nn.functional.fractional_max_pool2d(lib.ones(1, 2, 6, 6), 2, output_ratio=0.5)",
    "lib.nn.functional.fractional_max_pool2d(lib.ones(1, 2, 6, 6), 2, output_ratio=(0.5, 0.5, 0.5))",
    "lib.nn.functional.fractional_max_pool2d(lib.ones(1, 2, 6, 6).long(), 2, 3)",
    "lib.nn.FractionalMaxPool2d(2, output_ratio=1.5)", "lib.nn.FractionalMaxPool2d(2)",
    "lib.nn.FractionalMaxPool2d(2, 3, 0.5)", "lib.nn.FractionalMaxPool3d(0, 3)",
    "lib.nn.FractionalMaxPool3d((2, 0, 1), 3)",
])
def test_bad_arguments_raise_torchs_errors(program):
    def run(lib):
        ops = (torch.ops.aten if lib is torch else internals.ops.aten)
        return eval(program, {"lib": lib, "ops": ops})
    same_outcome(run)


def test_max_pool2d_with_indices_is_max_pool2d_returning_indices():
    def run(lib):
        x = lib.arange(2 * 5 * 6, dtype=lib.float32).reshape(2, 5, 6).sin().requires_grad_()
        out, indices = lib.nn.functional.max_pool2d_with_indices(x, 2, stride=(1, 2), ceil_mode=True)
        out.sum().backward()
        return out, indices, x.grad, type(out.grad_fn).__name__
    ours, theirs = run(internals), run(torch)
    for mine, their in zip(ours[:3], theirs[:3]):
        assert_same(mine, their, rtol=0, atol=0)
    assert ours[3] == theirs[3]
