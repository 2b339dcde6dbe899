"""``cdist`` (``aten/src/ATen/native/Distance.cpp``): the p-norm distance between each row of
``x1`` and each row of ``x2``, batched over leading dims.

Two ways, chosen as torch chooses: for p = 2 with more than 25 rows on a side (or when asked),
``_euclidean_dist`` writes |a|^2 - 2 a.b + |b|^2 with one matrix product; otherwise
``_cdist_forward`` sums |a_k - b_k|^p per pair, left to right in the input's dtype (torch's
``run_parallel_cdist``). Its kernel, ``pair_distance``, and that of ``_cdist_backward``,
``element_gradient`` (over ``pair_gradient``), are compiled into the CPU loop and the CUDA kernel
alike.
"""
import math
from fractions import Fraction

from llvmlite import ir
from numba.extending import intrinsic, overload, register_jitable

from ...c10 import scalar_type as st
from ...c10.grad_mode import GradMode
from .. import dispatcher
from ..dispatcher import call
from ..tensor_iterator import broadcast_shapes
from .copy import buffer, contiguous
from .dispatch_stub import fma_contracted, loops
from .tensor_factories import empty

# The norms with a kernel of their own (``zdist_calc``, ``odist_calc``, ``tdist_calc``,
# ``idist_calc``), and any other p (``pdist_calc``).
ZERO, ONE, TWO, INF, OTHER = range(5)


def _kind(p):
    return {0.0: ZERO, 1.0: ONE, 2.0: TWO, math.inf: INF}.get(p, OTHER)


def fused_from(m, dtype, device_type="cpu"):
    """Where torch's p = 2 loop starts fusing: its compiler (the wheel's AVX2 kernel) vectorizes
    the squares of ``agg + diff * diff`` in blocks of 4 (then one of 2 for double), each square
    rounded, and fuses the multiply-add in the scalar tail. Its x86-64 default build (no FMA)
    fuses nowhere: every square is rounded (``m``, past the last element). The cuda loop keeps
    the AVX2 order whatever the host's build. On aarch64 torch's blocks follow NEON's width,
    which this does not model."""
    if device_type == "cpu" and not fma_contracted():
        return m
    start = m - m % 4
    return start + (m - start) // 2 * 2 if dtype is st.float64 else start


def fma(a, b, c):
    """``a * b + c`` rounded once (a fused multiply-add). In Python (the CUDA simulator)
    computed exactly with fractions; compiled, the ``llvm.fma`` intrinsic (below)."""
    return type(a)(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


@intrinsic
def _llvm_fma(typingctx, a, b, c):
    def codegen(context, builder, signature, args):
        ty = args[0].type
        return builder.call(builder.module.declare_intrinsic("llvm.fma", [ty], ir.FunctionType(ty, [ty] * 3)), args)
    return a(a, a, a), codegen


@overload(fma, target="generic")
def _fma(a, b, c):
    return lambda a, b, c: _llvm_fma(a, b, c)


# The kernels take ``p`` and ``one`` in the inputs' dtype, so that float32 arithmetic stays in
# float32 as torch's does (a Python int or float would widen it to float64).
@register_jitable
def pair_distance(t1, i, t2, j, m, p, one, kind, fused_from):
    """The distance between rows ``t1[i:i + m]`` and ``t2[j:j + m]``, accumulated in their type;
    for p = 2, the squares from ``fused_from`` on are added with a fused multiply-add."""
    agg = one - one
    for k in range(m):
        diff = abs(t1[i + k] - t2[j + k])
        if kind == ZERO:            # min(ceil(diff), 1): 1 for any positive diff, NaN kept
            agg += one if diff > 0 else diff
        elif kind == ONE:
            agg += diff
        elif kind == TWO:
            agg = fma(diff, diff, agg) if k >= fused_from else agg + diff * diff
        elif kind == INF:           # ``std::max(agg, diff)``: a NaN diff is passed over
            agg = diff if agg < diff else agg
        else:
            agg += diff ** p
    if kind == TWO:
        return math.sqrt(agg)
    if kind == OTHER:               # ``std::pow(agg, 1.0 / p)``, in double
        return float(agg) ** (1.0 / float(p))
    return agg


@register_jitable
def pair_gradient(diff, grad, dist, p, one, kind):
    """One pair's share of the gradient of x1[k] (``*_calc::backward``)."""
    zero = one - one
    sign = one if diff > 0 else (-one if diff < 0 else zero)
    if kind == ZERO:
        return zero
    if kind == ONE:
        return grad * sign
    if kind == TWO:
        return zero if dist == 0 else grad * diff / dist
    if kind == INF:
        return grad * sign if abs(diff) == dist else zero
    if p < 2:
        if dist == 0 or (diff == 0 and p < 1):
            return zero
        return sign * abs(diff) ** (p - one) * grad / dist ** (p - one)
    return zero if dist == 0 else diff * abs(diff) ** (p - one - one) * grad / dist ** (p - one)


@register_jitable
def element_gradient(out, grad, t1, t2, dist, e, r1, r2, m, p, one, kind):
    """Element e of x1's gradient (batch b, row i, column k): the sum over x2's rows of
    ``pair_gradient``, in x2's row order (the CPU loop's and the CUDA kernel's)."""
    b, i, k = e // (r1 * m), (e // m) % r1, e % m
    acc = one - one
    for j in range(r2):
        pair = (b * r1 + i) * r2 + j
        acc += pair_gradient(t1[e] - t2[(b * r2 + j) * m + k], grad[pair], dist[pair], p, one, kind)
    out[e] = acc


def _check_ranks(x1, x2):
    for name, t in (("X1", x1), ("X2", x2)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")


def _uses_mm(p, mode, r1, r2):
    return p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))


def cdist(x1, x2, p=2.0, compute_mode=None):
    """CompositeImplicitAutograd: the matrix-product way through ``_euclidean_dist`` (autograd
    sees it and the ``view``), else ``_cdist_forward``."""
    _check_ranks(x1, x2)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if x1.numel() and x2.numel() and _uses_mm(p, compute_mode or 0, r1, r2):
        return _cdist_impl(x1, x2, p, compute_mode)
    return dispatcher.call("_cdist_forward", x1, x2, p, compute_mode)


def _cdist_forward(x1, x2, p, compute_mode):
    _check_ranks(x1, x2)
    return _cdist_impl(x1, x2, p, compute_mode)


def _cdist_impl(x1, x2, p, compute_mode):
    """``cdist_impl``: checks, the batch dims broadcast, then one of the two ways."""
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {t.dtype.torch_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.device.type != x2.device.type:
        raise RuntimeError(f"X1 and X2 must have the same device type. X1: {x1.device.type} X2: {x2.device.type}")
    mode = compute_mode or 0
    if not 0 <= mode <= 2:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")
    (r1, c), r2 = x1.shape[-2:], x2.shape[-2]
    batch = list(broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    count = math.prod(batch)
    shape = batch + [r1, r2]
    if r1 == 0 or r2 == 0 or count == 0:
        return empty(shape, dtype=x1.dtype, device=x1.device)
    if c == 0:
        return dispatcher.call("zeros", shape, dtype=x1.dtype, device=x1.device)
    a = contiguous(dispatcher.call("expand", x1, batch + [r1, c]))
    b = contiguous(dispatcher.call("expand", x2, batch + [r2, c]))
    if _uses_mm(p, mode, r1, r2):
        return dispatcher.call("view", dispatcher.call("_euclidean_dist", a if count > 1 else x1,
                                                       b if count > 1 else x2), shape)
    if x1.dtype is not st.float32 and x1.dtype is not st.float64:
        raise NotImplementedError(f"\"cdist\" not implemented for '{x1.dtype.torch_name}'")
    a, b = _from_zero(a), _from_zero(b)
    out = empty(shape, dtype=x1.dtype, device=x1.device)
    kind = a.dtype.numpy_type.type
    loops(x1.device, "distance").cdist_loop(buffer(out), buffer(a), buffer(b), count, r1, r2, c, kind(p), kind(1),
                                            _kind(p), fused_from(c, x1.dtype, x1.device.type))
    return out


def _from_zero(t):
    return dispatcher.call("clone", t) if t.storage_offset() else t


def _euclidean_dist(x1, x2):
    """CompositeExplicitAutograd: [-2 a, |a|^2, 1] . [b, 1, |b|^2], clamped at 0, square-rooted."""
    x1_norm = dispatcher.call("sum.dim_IntList", dispatcher.call("pow.Tensor_Scalar", x1, 2), [-1], True)
    x2_norm = dispatcher.call("sum.dim_IntList", dispatcher.call("pow.Tensor_Scalar", x2, 2), [-1], True)
    x1_ = dispatcher.call("cat", [dispatcher.call("mul.Scalar", x1, -2), x1_norm,
                                  dispatcher.call("ones_like", x1_norm)], -1)
    x2_ = dispatcher.call("cat", [x2, dispatcher.call("ones_like", x2_norm), x2_norm], -1)
    result = dispatcher.call("matmul", x1_, dispatcher.call("transpose.int", x2_, -2, -1))
    return dispatcher.call("sqrt_", dispatcher.call("clamp_", result, 0))


def _cdist_backward(grad, x1, x2, p, cdist):
    """The gradient of x1: for each of its elements, the sum over x2's rows of ``pair_gradient``,
    in x2's row order (``run_backward_parallel_cdist``); x1's batch dims broadcast, as computed."""
    (r1, c), r2 = x1.shape[-2:], x2.shape[-2]
    batch = list(broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    count = math.prod(batch)
    if r1 == 0 or r2 == 0 or c == 0 or count == 0:
        return dispatcher.call("zeros_like", x1)
    a = _from_zero(contiguous(dispatcher.call("expand", x1, batch + [r1, c])))
    b = _from_zero(contiguous(dispatcher.call("expand", x2, batch + [r2, c])))
    g, d = _from_zero(contiguous(grad)), _from_zero(contiguous(cdist))
    out = empty(batch + [r1, c], dtype=x1.dtype, device=x1.device)
    kind = a.dtype.numpy_type.type
    loops(x1.device, "distance").cdist_backward_loop(buffer(out), buffer(g), buffer(a), buffer(b), buffer(d), count,
                                                     r1, r2, c, kind(p), kind(1), _kind(p))
    return out


# ---- pdist (``Distance.cpp``): the distances between the rows of one matrix, pair (i, j) for i < j
# in row-major order, n·(n - 1)/2 of them. torch's kernel (``run_parallel_pdist``) sums each pair's
# |a_k - b_k|^p left to right as cdist's does, so the pairs are taken from cdist's kernel (never
# its matrix-product way) over the matrix and itself; the gradient likewise from cdist's backward
# kernel, given the pairs' gradient on both sides of the diagonal (zero on it).
def pdist(self, p=2.0):
    """CompositeImplicitAutograd: checks, then ``_pdist_forward`` of the contiguous input."""
    if self.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.dim()}D")
    if not self.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return dispatcher.call("_pdist_forward", contiguous(self), p)


def _pair_indices(n, device):
    """The rows and the columns of the pairs i < j, row-major."""
    both = dispatcher.call("triu_indices", n, n, 1, dtype=st.int64, device=device)
    return dispatcher.call("select.int", both, 0, 0), dispatcher.call("select.int", both, 0, 1)


def _pdist_forward(self, p=2.0):
    if not self.is_contiguous():
        raise RuntimeError("_pdist_forward requires contiguous input")
    if self.dtype is not st.float32 and self.dtype is not st.float64:
        raise NotImplementedError(f"\"pdist\" not implemented for '{self.dtype.torch_name}'")
    n = self.shape[0]
    if n <= 1:
        return empty([0], dtype=self.dtype, device=self.device)
    if self.shape[1] == 0:
        return dispatcher.call("zeros", [n * (n - 1) // 2], dtype=self.dtype, device=self.device)
    full = _cdist_impl(self, self, p, 2)
    rows, cols = _pair_indices(n, self.device)
    return dispatcher.call("index.Tensor", full, [rows, cols])


def _pdist_backward(grad, self, p, pdist):
    if not self.is_contiguous():
        raise RuntimeError("_pdist_backward requires self to be contiguous")
    if not pdist.is_contiguous():
        raise RuntimeError("_pdist_backward requires pdist to be contiguous")
    n = self.shape[0]
    if n <= 1 or self.shape[1] == 0:
        return dispatcher.call("zeros_like", self)
    rows, cols = _pair_indices(n, self.device)
    square = [n, n]
    full_grad = dispatcher.call("zeros", square, dtype=self.dtype, device=self.device)
    full_dist = dispatcher.call("zeros", square, dtype=self.dtype, device=self.device)
    for a, b in ((rows, cols), (cols, rows)):
        dispatcher.call("index_put_", full_grad, [a, b], contiguous(grad))
        dispatcher.call("index_put_", full_dist, [a, b], pdist)
    return _cdist_backward(full_grad, self, self, p, full_dist)


# ---- cosine_similarity and pairwise_distance (``Distance.cpp``), CompositeImplicitAutograd
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Σ (x1 / max(‖x1‖, eps)) · (x2 / max(‖x2‖, eps)) along ``dim``: each input divided by its
    norm first, which keeps the result in [-1, 1]. The norms are clones clamped in place with grad
    mode off, so the clamp records nothing, as in torch."""
    common = st.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {common.torch_name}")
    x1, x2 = (call("_to_copy", t, dtype=common) if not t.dtype.is_floating_point and not t.dtype.is_complex else t
              for t in (x1, x2))
    shape = list(broadcast_shapes(x1.shape, x2.shape))
    if list(x1.shape) != list(x2.shape):     # both expanded, x2 first: torch's C++ evaluates right to left
        x2, x1 = (call("expand", t, shape) for t in (x2, x1))
    norms = [call("clone", call("linalg_vector_norm", t, 2, [dim], True)) for t in (x1, x2)]
    floor = call("scalar_tensor", eps, dtype=_opmath_dtype(norms[0].dtype), device=norms[0].device)
    enabled = GradMode.is_enabled()
    GradMode.set_enabled(False)
    try:
        for n in norms:
            call("clamp_min_.Tensor", n, floor)
    finally:
        GradMode.set_enabled(enabled)
    divided2 = call("div.Tensor", x2, norms[1])
    product = call("mul.Tensor", call("div.Tensor", x1, norms[0]), divided2)
    return call("sum.dim_IntList", product, [dim], False)


def _opmath_dtype(dtype):
    """The dtype a kernel computes ``dtype`` in: float32 for the half-precision ones."""
    return st.float32 if dtype in (st.float16, st.bfloat16) else dtype


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """‖x1 - x2 + eps‖_p along the last dim of the broadcast shape."""
    last = max(x1.dim(), x2.dim()) - 1
    # C++'s tensor + double is add.Scalar: torch's graph has AddBackward1 here
    shifted = call("add.Scalar", call("sub.Tensor", x1, x2), eps)
    return call("norm.ScalarOpt_dim", shifted, p, [last], keepdim)
