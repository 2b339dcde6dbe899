"""The everyday pointwise operators readers paste from tutorials -- ``square``,
``expm1``, ``exp2``, ``atan2``/``arctan2``, ``clamp_min``/``clamp_max``, ``F.logsigmoid``, ``hypot``,
``copysign``, ``fmax``/``fmin``, ``xlogy``, ``logaddexp``/``logaddexp2``, ``signbit``, ``logit``,
``lgamma``, ``digamma``, ``erfinv``, ``deg2rad``/``rad2deg`` and ``heaviside`` -- and
binary_cross_entropy_with_logits rewritten over ``log_sigmoid``, as torch's ``Loss.cpp``.

As ``tests/aten/test_pooling.py``'s avg_pool2d tests: PyTorch's OpInfo samples (as given and non-contiguous), everyday
calls compared for values, strides, dtypes, grad_fn names, warnings and error messages, then
gradients and nodes (twice differentiated) against torch's.
"""

import pytest
import torch
from helpers import Adapter, check_opinfo_samples, compare_gradients_and_nodes, opinfo_cases
from helpers import run_everyday_call as _run

import internals

F = internals.nn.functional
# torch's float CPU loops call SLEEF's vectorized expm1, exp2, atan2, log1p, log and lgamma (1-ulp
# bounds), internals the C library's (for float32 in double, rounded once): a last-bit difference
# on some inputs. The same holds for logaddexp, logaddexp2, logit and logsigmoid, which are
# made of those, and for erfinv, whose Newton steps call erf and exp.
LAST_BIT = {torch.float32: (2.5e-7, 1e-7), torch.float64: (5e-16, 1e-15),
            torch.float16: (1e-3, 1e-5), torch.bfloat16: (8e-3, 1e-5)}
# erfinv's float64 Newton steps round differently from torch's: a few ulps near |y| -> 1.
ERFINV_TOL = {**LAST_BIT, torch.float32: (3e-7, 1e-7), torch.float64: (1e-14, 1e-15)}
ADAPTERS = {
    "square": Adapter(internals.square, "square"),
    "expm1": Adapter(internals.expm1, "expm1", tol=LAST_BIT),
    "exp2": Adapter(internals.exp2, "exp2", tol=LAST_BIT),
    "atan2": Adapter(internals.atan2, "atan2", tol=LAST_BIT),
    "clamp_min": Adapter(internals.clamp_min, "clamp_min"),
    "clamp_max": Adapter(internals.clamp_max, "clamp_max"),
    "nn.functional.logsigmoid": Adapter(F.logsigmoid, tol=LAST_BIT),
    "hypot": Adapter(internals.hypot, "hypot", tol=LAST_BIT),
    "copysign": Adapter(internals.copysign, "copysign"),
    "fmax": Adapter(internals.fmax, "fmax"),
    "fmin": Adapter(internals.fmin, "fmin"),
    "xlogy": Adapter(internals.xlogy, "xlogy", tol=LAST_BIT),
    "logaddexp": Adapter(internals.logaddexp, "logaddexp", tol=LAST_BIT),
    "logaddexp2": Adapter(internals.logaddexp2, "logaddexp2", tol=LAST_BIT),
    "signbit": Adapter(internals.signbit, "signbit"),
    "logit": Adapter(internals.logit, "logit", kwargs=("eps",), tol=LAST_BIT),
    "lgamma": Adapter(internals.lgamma, "lgamma", tol=LAST_BIT),
    "digamma": Adapter(internals.digamma, "digamma"),
    "erfinv": Adapter(internals.erfinv, "erfinv", tol=ERFINV_TOL),
    "deg2rad": Adapter(internals.deg2rad, "deg2rad"),
    "rad2deg": Adapter(internals.rad2deg, "rad2deg"),
    "heaviside": Adapter(internals.heaviside, "heaviside"),
}
OPINFO_CASES = opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64, torch.bool, torch.float16,
                                         torch.bfloat16))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


X = "lib.tensor([[-2.0, -0.5, -0.0], [0.0, 1.5, 3.0]])"
Y = "lib.tensor([[1.0, -1.0, 2.0], [-0.0, float('nan'), 0.5]])"
P = "lib.tensor([0.0, 0.25, 0.5, 1.0, 1.5, -0.1])"
PROGRAMS = [
    f"lib.square({X})", "lib.tensor([3, -2]).square()", "lib.square(lib.tensor([True, False]))",
    f"{X}.square_()", "lib.square(lib.tensor([2.0]), out=lib.empty(1))", f"lib.square({X}.requires_grad_())",
    "lib.expm1(lib.tensor([1e-10, 1.0, -50.0, 800.0, float('-inf')]))", "lib.expm1(lib.tensor([1, 2]))",
    "lib.tensor([0.5]).expm1_()", "lib.expm1(lib.tensor([0.5, 1.0], dtype=lib.float16))",
    "lib.expm1(lib.tensor([1.0]), out=lib.empty(1, dtype=lib.float64))", "lib.tensor([1]).expm1_()",
    "lib.exp2(lib.tensor([3, -1, 0]))", "lib.exp2(lib.tensor([0.5, 1024.0, -1080.0]))",
    f"lib.exp2({X}.requires_grad_())",
    f"lib.atan2({X}, {Y})", "lib.atan2(lib.tensor([1, 2]), lib.tensor([3, 4]))", f"{X}.arctan2({Y})",
    f"lib.arctan2({X}, {Y}, out=lib.empty(2, 3))", "lib.tensor([1, 2]).atan2_(lib.tensor([1, 1]))",
    "lib.atan2(lib.tensor([1j]), lib.tensor([1j]))",
    f"lib.atan2({X}.requires_grad_(), {Y})", f"{X}.t().atan2({Y}.t())",
    f"lib.clamp_min({X}, 0)", f"lib.clamp_max({X}, -0.5)", "lib.clamp_min(lib.tensor([1, 2]), 1.5)",
    f"lib.clamp_min({X}, {Y})", f"{X}.clamp_max({Y})", f"{X}.clamp_min_(0.5)", f"lib.clamp_max_({X}, {Y})",
    "lib.clamp_max(lib.tensor([True, False]), lib.tensor([False, False]))", "lib.clamp_min(lib.tensor([True]), 0)",
    f"lib.clamp_min({X}.requires_grad_(), 0)", f"lib.clamp_max({X}.requires_grad_(), {Y})",
    "lib.clamp_min(lib.tensor([1.0, float('nan')]), float('nan'))", "lib.clamp_min(lib.tensor([1j]), 0)",
    f"lib.nn.functional.logsigmoid({X})", f"lib.nn.functional.logsigmoid({X}.requires_grad_())",
    "lib.nn.functional.logsigmoid(lib.tensor([-100.0, 50.0, float('inf'), float('-inf'), float('nan')]))",
    "lib.nn.functional.logsigmoid(lib.tensor([1, 2]))", f"lib.nn.LogSigmoid()({X})",
    "lib.nn.functional.logsigmoid(lib.tensor([-1.0, 2.0], dtype=lib.bfloat16))",
    f"lib.hypot({X}, {Y})", "lib.hypot(lib.tensor([3]), lib.tensor([4]))", f"{X}.hypot_({Y})",
    f"lib.hypot({X}.requires_grad_(), {Y})",
    f"lib.copysign({X}, {Y})", "lib.copysign(lib.tensor([1, 2]), -1)", f"{X}.copysign(-0.0)",
    "lib.copysign(lib.tensor([1, 2]), lib.tensor([-1, 1]))", f"{X}.copysign_({Y})",
    f"lib.copysign({X}.requires_grad_(), {Y})", f"lib.copysign({X}.requires_grad_(), 2)",
    "lib.copysign(lib.tensor([2.0]), -1, out=lib.empty(1))", "lib.copysign(lib.tensor([1j]), 1)",
    f"lib.fmax({X}, {Y})", f"lib.fmin({X}, {Y})", "lib.fmax(lib.tensor([1, 5]), lib.tensor([3, 2]))",
    "lib.fmin(lib.tensor([True, False]), lib.tensor([False, False]))", f"lib.fmax({X}.requires_grad_(), {Y})",
    "lib.fmax(lib.tensor([1j]), lib.tensor([1j]))", f"{X}.fmin({Y}.t())",
    f"lib.xlogy({X}, {Y})", "lib.xlogy(2, lib.tensor([3.0, 0.0]))", "lib.xlogy(lib.tensor([2, 0]), 3)",
    "lib.xlogy(lib.tensor([0.0, 2.0]), 0)", f"{X}.xlogy_({Y})", "lib.xlogy(lib.tensor([2]), lib.tensor([3]))",
    f"lib.xlogy({X}.requires_grad_(), {Y})", f"lib.xlogy(2, {Y}.requires_grad_())",
    f"lib.xlogy({X}.requires_grad_(), 3)",
    "lib.xlogy(2, lib.tensor([3.0]), out=lib.empty(1))", "lib.tensor([1.0]).xlogy_(2)",
    f"lib.logaddexp({X}, {Y})",
    "lib.logaddexp(lib.tensor([float('inf'), float('-inf')]), lib.tensor([float('inf'), float('-inf')]))",
    "lib.logaddexp(lib.tensor([1]), lib.tensor([2]))", f"lib.logaddexp2({X}, {Y})",
    "lib.logaddexp2(lib.tensor([True]), lib.tensor([False]))", f"lib.logaddexp({X}.requires_grad_(), {Y})",
    f"lib.signbit({X})", "lib.signbit(lib.tensor([-1, 2]))", "lib.signbit(lib.tensor([True]))",
    "lib.signbit(lib.tensor([-1.0], dtype=lib.float16))", "lib.signbit(lib.tensor([1j]))",
    f"lib.signbit({X}, out=lib.empty(2, 3, dtype=lib.bool))", f"lib.signbit({X}.requires_grad_())",
    f"lib.logit({P})", f"lib.logit({P}, eps=1e-6)", f"lib.logit({P}, 0.3)", "lib.logit(lib.tensor([0, 1]))",
    f"{P}.logit_(0.1)", "lib.logit(lib.tensor([0.3], dtype=lib.float16), eps=0.1)", "lib.logit(lib.tensor([1j]))",
    f"lib.logit({P}.requires_grad_())", "lib.logit(lib.tensor([True]))", f"lib.logit({P}.bfloat16())",
    f"{P}.half().logit_(0.2)", f"lib.logit({P}.half(), out=lib.empty(6, dtype=lib.float16))",
    "lib.lgamma(lib.tensor([0.5, 1.0, 0.0, -0.0, -1.0, -0.5, 10.0, 1e30, -1e30, float('inf'), float('-inf')]))",
    "lib.lgamma(lib.tensor([1, 5]))", f"lib.lgamma({X}.requires_grad_())", "lib.tensor([2.5]).lgamma_()",
    "lib.digamma(lib.tensor([0.0, -0.0, 1.0, 10.0, 0.3, -2.5, 25.0, -3.0, 1e20, float('inf')]))",
    "lib.digamma(lib.tensor([0.0, -0.0, 1.0, 10.0, 0.3, -2.5, 25.0, -3.0], dtype=lib.float64))",
    "lib.digamma(lib.tensor([1, 2]))", f"lib.digamma({X}.requires_grad_())", "lib.tensor([2.5]).digamma_()",
    "lib.erfinv(lib.tensor([0.0, -0.0, 0.5, 1.0, -1.0, 1.5, float('nan')]))", "lib.erfinv(lib.tensor([0, 1]))",
    "lib.tensor([0.25]).erfinv_()", f"lib.erfinv({X}.requires_grad_())",
    f"lib.deg2rad({X})", "lib.deg2rad(lib.tensor([180, 90]))", f"lib.rad2deg({X})", "lib.rad2deg(lib.tensor([True]))",
    f"{X}.deg2rad_()", "lib.tensor([1, 2]).rad2deg_()", "lib.deg2rad(lib.tensor([1j]))",
    "lib.deg2rad(lib.tensor([2.0], dtype=lib.float16))", f"lib.rad2deg({X}.t())",
    "lib.deg2rad(lib.tensor([2.0]), out=lib.empty(1))", f"lib.deg2rad({X}.requires_grad_())",
    "lib.heaviside(lib.tensor([-1.0, 0.0, 2.0, float('nan')]), lib.tensor([0.5]))",
    "lib.heaviside(lib.tensor([1]), lib.tensor([0.5]))", "lib.heaviside(lib.tensor([-1, 0, 3]), lib.tensor([7]))",
    "lib.heaviside(lib.tensor([1j]), lib.tensor([1j]))", "lib.tensor([0.0, 1.0]).heaviside_(lib.tensor([0.5]))",
    "lib.heaviside(lib.tensor([True, False]), lib.tensor([True]))",
]


# Programs whose values come from the SLEEF-backed loops (see LAST_BIT): all else exact, the
# values to the last bit.
CLOSE = ("logsigmoid", "LogSigmoid", "logaddexp", "lgamma")


def _values_close(ours, theirs):
    (meta_i, messages_i), (meta_t, messages_t) = ours, theirs
    assert (meta_i[:3], meta_i[4], messages_i) == (meta_t[:3], meta_t[4], messages_t)
    rtol, atol = LAST_BIT[getattr(torch, meta_t[0])]
    torch.testing.assert_close([float(v) for v in meta_i[3]], [float(v) for v in meta_t[3]], rtol=rtol, atol=atol,
                               equal_nan=True)


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    ours, theirs = _run(internals, program), _run(torch, program)
    if theirs[0] != "error" and any(c in program for c in CLOSE):
        _values_close(ours, theirs)
    else:
        assert ours == theirs


GRAD_CASES = {
    "square": lambda lib, x, t: lib.square(x) * t,
    "expm1": lambda lib, x, t: lib.expm1(x) * t,
    "exp2": lambda lib, x, t: x.exp2() * t,
    "atan2": lambda lib, x, t: lib.atan2(x, t),
    "arctan2": lambda lib, x, t: x.arctan2(t + 1),
    "clamp_min": lambda lib, x, t: lib.clamp_min(x, 0.2) * t,
    "clamp_min.Tensor": lambda lib, x, t: lib.clamp_min(x, t),
    "clamp_max": lambda lib, x, t: x.clamp_max(0.2) * t,
    "clamp_max.Tensor": lambda lib, x, t: lib.clamp_max(x, t),
    "logsigmoid": lambda lib, x, t: lib.nn.functional.logsigmoid(x * t),
    "hypot": lambda lib, x, t: lib.hypot(x, t),
    "copysign.Tensor": lambda lib, x, t: lib.copysign(x * t, t - 0.5),
    "copysign.Scalar": lambda lib, x, t: lib.copysign(x * t, -1.5),
    "fmax": lambda lib, x, t: lib.fmax(x, t),
    "fmin": lambda lib, x, t: lib.fmin(x, t),
    "xlogy.Tensor": lambda lib, x, t: lib.xlogy(t * x, x.abs()),
    "xlogy.Scalar_Self": lambda lib, x, t: lib.xlogy(2.0, x.abs() + t),
    "xlogy.Scalar_Other": lambda lib, x, t: lib.xlogy(x * t, 3.0),
    "logaddexp": lambda lib, x, t: lib.logaddexp(x, t),
    "logaddexp2": lambda lib, x, t: lib.logaddexp2(x, t),
    "logit": lambda lib, x, t: lib.logit(x.sigmoid() * t),
    "logit, eps": lambda lib, x, t: lib.logit(x.sigmoid(), eps=0.2) * t,
    "lgamma": lambda lib, x, t: lib.lgamma(x.abs() + t + 0.1),
    "digamma": lambda lib, x, t: lib.digamma(x.abs() + t + 0.1),
    "erfinv": lambda lib, x, t: lib.erfinv(x.tanh() * t),
    "deg2rad": lambda lib, x, t: lib.deg2rad(x * t),
    "rad2deg": lambda lib, x, t: lib.rad2deg(x * t),
    "bce with logits, pos_weight": lambda lib, x, t: lib.nn.functional.binary_cross_entropy_with_logits(
        x, t, pos_weight=lib.tensor([3.0, 1.0, 2.0], dtype=lib.float64), reduction="sum"),
}


# digamma's derivative is polygamma(1, x), as torch's formula, and its own polygamma(2, x): the
# same kernels as torch's (tests/test_special.py), so the second derivatives agree as closely
@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


def test_heaviside_has_no_derivative():
    """torch has no formula for heaviside: its node, NotImplemented, refuses backward."""
    for lib in (torch, internals):
        y = lib.heaviside(lib.tensor([1.0, -1.0], requires_grad=True), lib.tensor([0.5]))
        assert repr(y.grad_fn).startswith("<NotImplemented object at ")
        with pytest.raises(RuntimeError, match="^derivative for aten::heaviside is not implemented$"):
            y.sum().backward()


def test_bce_with_logits_is_log_sigmoid_as_torchs():
    """binary_cross_entropy_with_logits over log_sigmoid (``Loss.cpp``): with and without
    pos_weight and weight, each reduction, float32 and float64, against torch's; the elementwise
    losses to log_sigmoid's last bit, the sums and means exactly on these values."""
    g = torch.Generator().manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        x, t = torch.randn(4, 5, generator=g, dtype=dtype) * 4, torch.rand(4, 5, generator=g, dtype=dtype)
        pos_weight, weight = torch.rand(5, generator=g, dtype=dtype) * 3, torch.rand(5, generator=g, dtype=dtype)
        for kwargs in ({}, {"pos_weight": pos_weight}, {"pos_weight": pos_weight, "weight": weight}):
            for reduction in ("none", "sum", "mean"):
                theirs = torch.nn.functional.binary_cross_entropy_with_logits(x, t, reduction=reduction, **kwargs)
                ours = F.binary_cross_entropy_with_logits(
                    internals.from_torch(x), internals.from_torch(t), reduction=reduction,
                    **{k: internals.from_torch(v) for k, v in kwargs.items()})
                rtol, atol = LAST_BIT[dtype] if reduction == "none" else (0, 0)
                torch.testing.assert_close(torch.tensor(ours.tolist(), dtype=dtype), theirs, rtol=rtol, atol=atol)


V = "[[-2.0, -0.5, 0.0], [0.25, 1.5, 3.0]]"
W = "[[1.0, -1.0, 2.0], [-0.5, 0.0, 0.5]]"
CUDA_PROGRAMS = {name: f"lib.{name}(lib.tensor({V}, device=d), lib.tensor({W}, device=d))"
                 for name in ("atan2", "hypot", "copysign", "fmax", "fmin", "xlogy", "logaddexp", "logaddexp2",
                              "heaviside", "clamp_min", "clamp_max")}
CUDA_PROGRAMS |= {name: f"lib.{name}(lib.tensor({V}, device=d).t())"
                  for name in ("square", "expm1", "exp2", "signbit", "lgamma", "digamma", "deg2rad", "rad2deg")}
CUDA_PROGRAMS |= {"logit": f"lib.logit(lib.tensor({W}, device=d).abs() / 2, eps=0.1)",
                  "erfinv": f"lib.erfinv(lib.tensor({W}, device=d) * 0.9)",
                  "logsigmoid": f"lib.nn.functional.logsigmoid(lib.tensor({V}, device=d))"}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels_match_torchs_cpu(name):
    """The CUDA loops (simulated here) run the same scalar functions: torch's CPU values, to
    SLEEF's last bit (LAST_BIT) where the CPU ones are compared so."""
    ours = eval(CUDA_PROGRAMS[name], {"lib": internals, "d": "cuda"})
    assert ours.device.type == "cuda"
    theirs = eval(CUDA_PROGRAMS[name], {"lib": torch, "d": "cpu"})
    rtol, atol = LAST_BIT[theirs.dtype] if theirs.dtype.is_floating_point else (0, 0)
    torch.testing.assert_close(torch.tensor(ours.cpu().tolist(), dtype=theirs.dtype), theirs, rtol=rtol, atol=atol,
                               equal_nan=True)


def _logsigmoid_grad(lib, device):
    x = lib.tensor([[-2.0, -0.5, 0.0], [0.25, 1.5, 3.0]], device=device, requires_grad=True)
    lib.nn.functional.logsigmoid(x).sum().backward()
    return x.grad


def test_log_sigmoid_backward_on_cuda():
    """log_sigmoid_backward's ternary loop on the (simulated) CUDA device: torch's CPU gradient."""
    ours, theirs = _logsigmoid_grad(internals, "cuda"), _logsigmoid_grad(torch, "cpu")
    assert ours.device.type == "cuda"
    rtol, atol = LAST_BIT[torch.float32]
    torch.testing.assert_close(torch.tensor(ours.cpu().tolist()), theirs, rtol=rtol, atol=atol)


def test_atan2_gradients_at_the_origin_are_torchs():
    """atan2's backward masks the reciprocal of x^2 + y^2 where that sum is 0 (the origin, or
    squares that underflow): torch gives 0 there, not 0 * inf = NaN; a sum that is tiny but not
    0 keeps its infinite reciprocal. First and second gradients and the nodes, against torch."""
    def gradients(lib):
        y = lib.tensor([0., 1., 1e-200, 1e-155, -0.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([0., 1., 0., 0., 0.], dtype=lib.float64, requires_grad=True)
        gy, gx = lib.autograd.grad(lib.atan2(y, x).sum(), (y, x), create_graph=True)
        second = lib.autograd.grad((gy * gx).sum(), (y, x))
        return ([t.tolist() for t in (gy, gx, *second)],
                type(gy.grad_fn).__name__, [type(n).__name__ for n, _ in gy.grad_fn.next_functions])
    ours, theirs = gradients(internals), gradients(torch)
    assert str(ours) == str(theirs)      # str: NaN equals NaN, and -0.0 stays apart from 0.0
