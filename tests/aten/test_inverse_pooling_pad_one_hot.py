"""Operators the tutorial snippets reach for -- ``rsqrt``, ``log1p``, ``nansum``,
``linalg.inv``/``inverse``, ``linalg.det``/``det``, ``linalg.lu_factor``, ``F.avg_pool2d``/
``nn.AvgPool2d``, ``F.adaptive_avg_pool2d``/``nn.AdaptiveAvgPool2d``, ``unique(dim=)``,
``nanmean``, ``bincount``, ``F.pad`` (each mode), ``F.one_hot``, ``F.normalize`` -- and the legacy
``torch.Tensor(...)`` constructor.

As ``tests/aten/test_losses_index_add_unique_and_names.py``: PyTorch's OpInfo samples (as given and
non-contiguous), then
everyday calls compared for values, strides, dtypes, grad_fn names, gradients (twice where torch
differentiates twice), warnings and error messages.
"""

import pytest
import torch
from helpers import (
    OPINFO_BY_NAME,
    Adapter,
    assert_same,
    check_opinfo_samples,
    compare_call,
    compare_gradients_and_nodes,
    opinfo_cases,
)
from helpers import run_everyday_call as _run  # noqa: F401

import internals

F = internals.nn.functional
# log1p: torch's CPU loop calls SLEEF's log1p (1-ulp), internals the C library's: a last-bit
# difference on some inputs. The LU products: MKL's blocked factorization rounds in another order.
LAST_BIT = {torch.float32: (2.5e-7, 1e-7), torch.float64: (5e-16, 1e-15)}
LU_TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12)}
ADAPTERS = {
    "rsqrt": Adapter(internals.rsqrt, "rsqrt"),
    "log1p": Adapter(internals.log1p, "log1p", tol=LAST_BIT),
    "nansum": Adapter(internals.nansum, "nansum", kwargs=("dim", "keepdim", "dtype")),
    "linalg.inv": Adapter(internals.linalg.inv, tol=LU_TOL),
    "linalg.inv_ex": Adapter(internals.linalg.inv_ex, tol=LU_TOL),
    "linalg.det": Adapter(internals.linalg.det, tol=LU_TOL),
    "linalg.lu_factor_ex": Adapter(internals.linalg.lu_factor_ex, kwargs=("pivot",), tol=LU_TOL),
    "nn.functional.avg_pool2d": Adapter(F.avg_pool2d, kwargs=("kernel_size", "stride", "padding", "ceil_mode",
                                                              "count_include_pad", "divisor_override")),
    "nn.functional.adaptive_avg_pool2d": Adapter(F.adaptive_avg_pool2d),
    "unique": Adapter(internals.unique, kwargs=("sorted", "return_inverse", "return_counts", "dim")),
    "nanmean": Adapter(internals.nanmean, "nanmean", kwargs=("dim", "keepdim", "dtype")),
    "constant_pad_nd": Adapter(internals.constant_pad_nd),
    "nn.functional.pad": Adapter(F.pad, kwargs=("mode", "value")),
    "nn.functional.one_hot": Adapter(F.one_hot, kwargs=("num_classes",)),
    "nn.functional.normalize": Adapter(F.normalize, kwargs=("p", "dim", "eps"), tol=LAST_BIT),
}
# F.pad's OpInfo has one entry per mode, each compared (as "nn.functional.pad.<mode>")
PAD_MODES = ("constant", "reflect", "replicate", "circular")
# nn.functional.pad's OpInfos are one a mode ("nn.functional.pad.reflect"), all with one adapter
OPINFO_NAMES = [name for name in ADAPTERS if name != "nn.functional.pad"] + [f"nn.functional.pad.{mode}"
                                                                            for mode in PAD_MODES]
OPINFO_CASES = opinfo_cases(OPINFO_NAMES, (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    adapter = ADAPTERS[OPINFO_BY_NAME[name].name]
    check_opinfo_samples(name, dtype, adapter, compare=compare_call)


A = "lib.tensor([[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.0, 2.0, 4.0]])"
IMG = "lib.arange(50.).reshape(1, 2, 5, 5)"
NAN = "lib.tensor([[1.0, float('nan'), 3.0], [float('nan'), 2.0, 5.0]])"
PROGRAMS = [
    "lib.rsqrt(lib.tensor([0.25, 1.0, 4.0, 0.0, -1.0]))", "lib.tensor([1, 4, 9]).rsqrt()",
    "lib.tensor([4.0, 16.0]).rsqrt_()", "lib.rsqrt(lib.tensor([1.0, 4.0]), out=lib.empty(2))",
    "lib.rsqrt(lib.tensor([1.0, 4.0]), out=lib.empty(2, dtype=lib.int64))",
    "lib.rsqrt(lib.tensor([True, False]))", "lib.tensor([1, 2]).rsqrt_()",
    "lib.log1p(lib.tensor([0.0, -1.0, -2.0, 1e-10, 3.0]))", "lib.tensor([0, 1, 2]).log1p()",
    "lib.tensor([1.0, 2.0]).log1p_()", "lib.log1p(lib.arange(4.0), out=lib.empty(0))",
    f"lib.nansum({NAN})", f"{NAN}.nansum(0)", f"{NAN}.nansum(dim=1, keepdim=True)", f"{NAN}.t().nansum(1)",
    f"lib.nansum({NAN}, dtype=lib.float64)", f"lib.nansum({NAN}, 1, out=lib.empty(2))",
    "lib.nansum(lib.tensor([1, 2, 3]))", "lib.nansum(lib.tensor([True, True]))",
    "lib.nansum(lib.tensor([1j]))", f"lib.nansum({NAN}, 2)", "lib.nansum(lib.tensor([float('inf'), -1.0]))",
    f"lib.linalg.inv({A})", f"lib.inverse({A}.t())", f"{A}.inverse()", f"lib.linalg.inv({A}.double())",
    f"lib.linalg.inv(lib.stack([{A}, {A} * 2]))", f"lib.linalg.inv_ex({A})", "lib.linalg.inv_ex(lib.zeros(2, 2))[1]",
    "lib.linalg.inv(lib.zeros(2, 2))", "lib.linalg.inv(lib.zeros(3, 2, 2))", "lib.linalg.inv(lib.zeros(2, 3))",
    "lib.linalg.inv(lib.zeros(3))", "lib.inverse(lib.ones(2, 2, dtype=lib.int64))",
    "lib.linalg.inv(lib.ones(2, 2, dtype=lib.float16))", "lib.linalg.inv(lib.zeros(0, 0))",
    f"lib.linalg.det({A})", f"lib.det({A}.t())", f"{A}.det()", "lib.det(lib.tensor([[0.0, 1.0], [1.0, 0.0]]))",
    "lib.det(lib.zeros(2, 2))", "lib.det(lib.zeros(0, 0))", "lib.det(lib.zeros(2, 3))",
    "lib.det(lib.ones(2, 2, dtype=lib.int64))", "lib.det(lib.ones(2, 2, dtype=lib.float16))",
    "lib.linalg.lu_factor(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))", "lib.linalg.lu_factor(lib.zeros(2, 2))",
    "lib.linalg.lu_factor_ex(lib.tensor([[1.0, 2.0], [3.0, 4.0]]).double())",
    f"lib.nn.functional.avg_pool2d({IMG}, 2)", f"lib.nn.AvgPool2d(3, stride=2, padding=1)({IMG})",
    f"lib.nn.AvgPool2d(3, 2, 1, count_include_pad=False)({IMG})", f"lib.nn.functional.avg_pool2d({IMG}[0], 2)",
    f"lib.nn.functional.avg_pool2d({IMG}, 2, ceil_mode=True)",
    f"lib.nn.functional.avg_pool2d({IMG}, (2, 3), divisor_override=3)",
    f"lib.nn.functional.avg_pool2d({IMG}.to(memory_format=lib.channels_last), 2)",
    f"lib.nn.functional.avg_pool2d({IMG}.requires_grad_(), 2)", "lib.nn.functional.avg_pool2d(lib.ones(4, 4), 2)",
    f"lib.nn.functional.avg_pool2d({IMG}, (1, 2, 3))", f"lib.nn.functional.avg_pool2d({IMG}, 2, divisor_override=0)",
    f"lib.nn.functional.avg_pool2d({IMG}, 2, padding=2)", f"lib.nn.functional.avg_pool2d({IMG}, 7)",
    f"lib.nn.functional.avg_pool2d({IMG}, 2, stride=0)", "lib.nn.functional.avg_pool2d(lib.ones(1, 0, 4, 4), 2)",
    f"lib.nn.functional.adaptive_avg_pool2d({IMG}, (2, 3))", f"lib.nn.AdaptiveAvgPool2d(1)({IMG})",
    f"lib.nn.AdaptiveAvgPool2d((None, 2))({IMG})", f"lib.nn.AdaptiveAvgPool2d(3)({IMG}[0])",
    f"lib.nn.AdaptiveAvgPool2d(1)({IMG}.to(memory_format=lib.channels_last))",
    f"lib.nn.AdaptiveAvgPool2d((2, 4))({IMG}.to(memory_format=lib.channels_last))",
    f"lib.nn.AdaptiveAvgPool2d((3, 3))({IMG}.requires_grad_())",
    "lib.nn.functional.adaptive_avg_pool2d(lib.ones(4, 4), 2)",
    "lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 0, 4), 2)",
    f"lib.nn.functional.adaptive_avg_pool2d({IMG}, (1, 2, 3))", f"lib.nn.functional.adaptive_avg_pool2d({IMG}, -1)",
    "lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 2, 3, 3, dtype=lib.int64), 2)",
    "repr(lib.nn.AvgPool2d(2)) + repr(lib.nn.AdaptiveAvgPool2d((2, 3)))",
    "lib.unique(lib.tensor([[1, 2], [3, 4], [1, 2], [0, 9]]), dim=0)",
    "lib.unique(lib.tensor([[1, 2], [3, 4], [1, 2]]), dim=1, return_inverse=True, return_counts=True)",
    "lib.tensor([[1, 2], [3, 4], [1, 2]]).unique(dim=0, sorted=False, return_counts=True)",
    "lib.unique(lib.tensor([[1.0, 2.0], [1.0, 2.0]]).requires_grad_(), dim=-1)",
    "lib.unique(lib.tensor(3), dim=0)", "lib.unique(lib.ones(2, 2), dim=2)", "lib.unique(lib.zeros(0, 3), dim=0)",
    "lib.unique(lib.zeros(0, 3), dim=1)",
    "lib.Tensor([1, 2])", "lib.Tensor([[1, 2], [3, 4.5]])", "lib.Tensor(2, 3).shape", "lib.Tensor()",
    "lib.Tensor(lib.Size([2, 1])).shape", "lib.Tensor((1, 2))", "lib.Tensor(0)", "lib.Tensor([True, False])",
    "lib.Tensor(lib.tensor([1, 2]))", "lib.Tensor(-1)", "lib.Tensor(2.5)", "lib.FloatTensor((1, 2))",
    "type(lib.Tensor([1]))", "lib.Tensor([1, 2], device='cuda')",
    f"lib.nanmean({NAN})", f"{NAN}.nanmean(1)", f"{NAN}.nanmean(0, keepdim=True)", "lib.nanmean(lib.tensor([1, 2]))",
    f"lib.nanmean({NAN}.requires_grad_(), 1)",
    "lib.nn.functional.one_hot(lib.tensor([[0, 2], [1, 1]]))", "lib.nn.functional.one_hot(lib.tensor([0, 2]), 4)",
    "lib.nn.functional.one_hot(lib.tensor([1.0]))", "lib.nn.functional.one_hot(lib.tensor([-1]))",
    "lib.nn.functional.one_hot(lib.tensor([3]), 2)", "lib.nn.functional.one_hot(lib.tensor([], dtype=lib.long))",
    "lib.nn.functional.one_hot(lib.tensor([], dtype=lib.long), 3)",
    "lib.nn.functional.pad(lib.arange(6.).reshape(1, 2, 3), (1, 0, 0, 2), value=-1)",
    "lib.nn.functional.pad(lib.ones(2, 2), (1,))", "lib.nn.functional.pad(lib.ones(2, 2), (1, 1, 1, 1, 1, 1))",
    "lib.nn.functional.pad(lib.ones(2, 2), (-1, 2))",
    "lib.nn.functional.pad(lib.ones(2, 2, dtype=lib.long), (1, 1), value=2.5)",
    "lib.nn.functional.pad(lib.ones(2, 3), (-2, -2))", "lib.nn.functional.pad(lib.ones(2, 3), (-1, 0))",
    "lib.nn.functional.pad(lib.ones(2, 2).requires_grad_(), (1, 1))",
    "lib.nn.functional.pad(lib.ones(1, 2, 2, 2).to(memory_format=lib.channels_last), (1, 1))",
    "lib.constant_pad_nd(lib.ones(2), [1, 1, 1])", "lib.constant_pad_nd(lib.ones(2), [1, 1, 1, 1])",
    *(f"lib.nn.functional.pad({x}, {p}, mode='{m}'{v})" for m in ("reflect", "replicate", "circular")
      for x, p, v in [("lib.arange(6.).reshape(1, 2, 3)", (2, 1), ""), ("lib.arange(6.).reshape(2, 3)", (-1, 2), ""),
                      ("lib.arange(9.).reshape(1, 1, 3, 3)", (1, 2, 2, 0), ""),
                      ("lib.arange(12.).reshape(1, 2, 3, 2)", (1, 1, 2, 2, 1, 1), ""),
                      ("lib.ones(1, 1, 3)", (3, 3), ""), ("lib.ones(1, 1, 3)", (4, 0), ""),
                      ("lib.ones(1, 1, 3)", (-3, -1), ""), ("lib.ones(1, 1, 3, 3)", (0, 0, -2, -2), ""),
                      ("lib.ones(1, 3, 3)", (1, 1, 3, 0), ""), ("lib.ones(2, 2, 3, 3)", (1, 2, 1, 2, 1, 2), ""),
                      ("lib.ones(1, 0, 3)", (1, 1), ""), ("lib.ones(0, 1, 3)", (1, 1), ""),
                      ("lib.ones(3)", (1, 1), ""), ("lib.ones(1, 1, 3, 3)", (1, 1), ""),
                      ("lib.ones(1, 1, 3)", (1, 1), ", value=1.0"), ("lib.ones(1, 1, 3)", (1, 1), ", value=0.0"),
                      ("lib.ones(2, 3, 3, dtype=lib.long)", (1, 1), ""),
                      ("lib.ones(2, 1, 3, 3).requires_grad_()", (1, 1, 1, 1), ""),
                      ("lib.ones(2, 1, 3, 3).to(memory_format=lib.channels_last)", (1, 1, 1, 1), "")]),
    "lib.nn.functional.pad(lib.ones(1, 1, 3), (1, 1), mode='wrap')",
    "lib.nn.ReflectionPad2d(1)", "lib.nn.ReplicationPad1d((1, 2))", "lib.nn.CircularPad3d(1)",
    "lib.nn.ZeroPad2d((1, 0, 2, 0))", "lib.nn.ConstantPad1d(2, -1.5)",
    "lib.nn.ReplicationPad3d(1)(lib.arange(8.).reshape(1, 2, 2, 2))",
    "lib.nn.ZeroPad1d(1)(lib.ones(1, 2))", "lib.nn.ConstantPad3d((1, 0, 0, 1, 1, 0), 2.0)(lib.ones(1, 1, 1, 2))",
    "lib.nn.functional.normalize(lib.tensor([[3.0, 4.0], [0.0, 0.0]]))",
    "lib.nn.functional.normalize(lib.tensor([[3.0, 4.0], [1.0, 1.0]]), dim=0, p=1)",
    "lib.bincount(lib.tensor([2, 0, 1, 2]))", "lib.tensor([2, 0, 1, 2]).bincount(minlength=5)",
    "lib.bincount(lib.tensor([2, 0, 1, 2]), weights=lib.tensor([1.0, 2.0, 3.0, 4.0]))",
    "lib.bincount(lib.tensor([2, 0, 1, 2]), weights=lib.tensor([1, 2, 3, 4]))",
    "lib.bincount(lib.tensor([1, 1], dtype=lib.uint8))", "lib.bincount(lib.tensor([], dtype=lib.long))",
    "lib.bincount(lib.tensor([[1]]))", "lib.bincount(lib.tensor([-1]))", "lib.bincount(lib.tensor([1.0]))",
    "lib.bincount(lib.tensor([1]), minlength=-1)", "lib.bincount(lib.tensor([1, 2]), weights=lib.ones(3))",
]




def _values_close(ours, theirs):
    """Everything exact but the values, which must agree to float rounding (LAPACK's order)."""
    if theirs[0] == "error" or isinstance(theirs[0], str):
        assert ours == theirs
        return
    (ours, messages_i), (theirs, messages_t) = ours, theirs
    assert messages_i == messages_t
    pairs = list(zip(ours[1], theirs[1])) if isinstance(ours[1], list) else [(ours, theirs)]
    for o, t in pairs:
        assert (o[:3], o[4]) == (t[:3], t[4])
        torch.testing.assert_close([float(v) for v in o[3]], [float(v) for v in t[3]], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    ours, theirs = _run(internals, program), _run(torch, program)
    if any(name in program for name in ("inv", "det", "lu_factor")):
        _values_close(ours, theirs)
    else:
        assert ours == theirs


def test_linalg_errors_are_linalg_errors():
    for lib in (torch, internals):
        with pytest.raises(lib.linalg.LinAlgError, match=r"\(Batch element 1\): The diagonal element 2 is zero"):
            lib.linalg.inv(lib.stack([lib.eye(2), lib.tensor([[1.0, 0.0], [0.0, 0.0]])]))
    assert type(internals.linalg.LinAlgError).__name__ == "type" and issubclass(internals.linalg.LinAlgError,
                                                                                  RuntimeError)
    assert internals.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__ == "_LinAlgError"


def test_legacy_constructor_of_a_subclass():
    for lib in (torch, internals):
        class Mine(lib.Tensor):
            pass
        t = Mine([1, 2])
        assert type(t) is Mine and t.dtype is lib.float32 and t.tolist() == [1.0, 2.0]


GRAD_CASES = {
    "rsqrt": lambda lib, x, t: (x.abs() + 0.5).rsqrt() * t,
    "log1p": lambda lib, x, t: (x.abs() * t).log1p(),
    "nansum": lambda lib, x, t: lib.where(x > 2, lib.tensor(float("nan"), dtype=lib.float64), x * t).nansum(1),
    "linalg.inv": lambda lib, x, t: lib.linalg.inv(x[:, :2] + t[:, :2] * 0),
    "inverse of a batch": lambda lib, x, t: lib.inverse(lib.stack([x[:, :2], t[:, 1:]])),
    "det": lambda lib, x, t: lib.det(x[:, 1:]) * t,
    "linalg.det of a batch": lambda lib, x, t: lib.linalg.det(lib.stack([x[:, :2], x[:, 1:] * t[:, :2]])),
    "avg_pool2d": lambda lib, x, t: lib.nn.functional.avg_pool2d((x * x * t).reshape(1, 1, 2, 3), 2, 1, 1,
                                                                 count_include_pad=False),
    "avg_pool2d, divisor": lambda lib, x, t: lib.nn.functional.avg_pool2d(
        (x * x + t).reshape(1, 2, 3), 2, 1, divisor_override=3),
    "adaptive_avg_pool2d": lambda lib, x, t: lib.nn.functional.adaptive_avg_pool2d(
        (x * x * t).reshape(1, 1, 2, 3), (2, 2)),
    "adaptive_avg_pool2d of a 3-d input": lambda lib, x, t: lib.nn.functional.adaptive_avg_pool2d(
        (x * x + t).reshape(1, 2, 3), (2, 2)),
    "adaptive_avg_pool2d to 1x1 (mean)": lambda lib, x, t: lib.nn.AdaptiveAvgPool2d(1)((x * t).reshape(1, 1, 2, 3)),
    "pad": lambda lib, x, t: lib.nn.functional.pad(x * x * t, (1, -1, 2, 0), value=3.0),
    # each mode over 1, 2 and 3 dims (the 3-d input is x * t widened to 2 x 3 x 2), squared so
    # that the second derivative differentiates the backward operator
    **{f"pad, {mode} {n}d": lambda lib, x, t, mode=mode, n=n: lib.nn.functional.pad(
        (x * t).reshape(1, 2, 3, 1).expand(1, 2, 3, 2) if n == 3 else (x * t).reshape(1, 2, 3),
        (1, 1, 1, -1, 1, 0)[:2 * n], mode=mode) ** 2
       for mode in ("reflect", "replicate") for n in (1, 2, 3)},
    "pad, circular": lambda lib, x, t: lib.nn.functional.pad((x * x * t).reshape(1, 2, 3), (2, -1), mode="circular"),
    "nanmean": lambda lib, x, t: lib.where(x > 2, lib.tensor(float("nan"), dtype=lib.float64), x * t).nanmean(0),
    "normalize": lambda lib, x, t: lib.nn.functional.normalize(x * t, dim=1),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    """compare_gradients_and_nodes's comparison; t[0, 0] is 0.3 here, and a second derivative may not reach x."""
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


GRADCHECKS = {
    "rsqrt": lambda x: (x.abs() + 0.5).rsqrt(), "log1p": lambda x: x.abs().log1p(),
    "nansum": lambda x: x.nansum(0), "inv": lambda x: internals.linalg.inv(x[:, :2] + 3 * internals.eye(
        2, dtype=internals.float64)), "det": lambda x: internals.det(x[:, :2]),
    "avg_pool2d": lambda x: F.avg_pool2d(x.reshape(1, 1, 2, 3), 2, 1, 1, False, False),
    "adaptive_avg_pool2d": lambda x: F.adaptive_avg_pool2d(x.reshape(1, 2, 3), (2, 2)),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck(name):
    x = internals.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(GRADCHECKS[name], (x,))


CUDA_PROGRAMS = {
    "rsqrt": lambda lib, d: lib.arange(1.0, 7.0, device=d).reshape(2, 3).t().rsqrt(),
    "log1p": lambda lib, d: lib.arange(6.0, device=d).log1p(),
    "nansum": lambda lib, d: lib.tensor([[1.0, float("nan")], [2.0, 3.0]], device=d).nansum(0),
    "inv": lambda lib, d: lib.linalg.inv(lib.tensor([[[2.0, 1.0], [1.0, 3.0]], [[0.0, 1.0], [1.0, 0.0]]],
                                                    device=d)),
    "det": lambda lib, d: lib.det(lib.tensor([[[2.0, 1.0], [1.0, 3.0]], [[0.0, 1.0], [1.0, 0.0]]], device=d)),
    "avg_pool2d": lambda lib, d: lib.nn.functional.avg_pool2d(lib.arange(32.0, device=d).reshape(2, 4, 4), 3, 2, 1),
    "adaptive_avg_pool2d": lambda lib, d: lib.nn.functional.adaptive_avg_pool2d(
        lib.arange(30.0, device=d).reshape(1, 5, 6), (2, 4)),
    **{f"pad, {mode}": lambda lib, d, mode=mode: lib.nn.functional.pad(
        lib.arange(24.0, device=d).reshape(2, 3, 4), (2, 3, -1, 2), mode=mode)
       for mode in ("reflect", "replicate", "circular")},
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels_match_the_cpu_ones(name):
    """The CUDA kernels (simulated here) give the CPU kernels' values, which torch's CPU gives."""
    build = CUDA_PROGRAMS[name]
    ours = build(internals, "cuda")
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), build(torch, "cpu"), rtol=0, atol=0)


def test_pool_backward_on_cuda():
    x = internals.arange(32.0).reshape(2, 4, 4)
    grads = []
    for device in ("cpu", "cuda"):
        y = x.to(device).detach().requires_grad_()
        (F.avg_pool2d(y, 3, 2, 1).sum() + F.adaptive_avg_pool2d(y, (3, 2)).sum()).backward()
        grads.append(y.grad.cpu())
    xt = torch.arange(32.0).reshape(2, 4, 4).requires_grad_()
    (torch.nn.functional.avg_pool2d(xt, 3, 2, 1).sum() + torch.nn.functional.adaptive_avg_pool2d(xt, (3, 2)).sum()
     ).backward()
    assert_same(grads[0], xt.grad, rtol=0, atol=0)
    assert_same(grads[1], xt.grad, rtol=0, atol=0)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_backward_on_cuda(mode):
    """The backward operator's CUDA path adds the gradients up as the CPU one (and torch's)."""
    grads = []
    for lib, device in ((internals, "cuda"), (torch, "cpu")):
        x = lib.arange(24.0, device=device).reshape(2, 3, 4).requires_grad_()
        lib.nn.functional.pad(x, (2, 3, 1, 2), mode=mode).backward(lib.arange(108.0, device=device).reshape(2, 6, 9))
        grads.append(x.grad.cpu())
    assert_same(*grads, rtol=0, atol=0)
