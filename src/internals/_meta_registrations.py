"""Meta functions: an operator's output metadata without its computation (``torch/_meta_registrations.py``).

A meta function takes the operator's arguments (tensors that may hold no data) and returns
what the real kernel would allocate: shape, strides, dtype and device, as a ``TensorMeta``.
The rules are the kernels' own: elementwise ops ask TensorIterator's ``broadcast_shapes`` and
``output_layout`` and the promotion rules of ``result_type``, as the kernels in
``aten/native/unary_ops.py`` and ``binary_ops.py`` do before they run a loop. View ops need
no entry here: their kernels only compute metadata already, so a fake tensor can run them as
they are.
"""
from collections import namedtuple

from .aten.empty_tensor import check_contiguous_nbytes
from .aten.native.attention import _check_flash_inputs
from .aten.native.batch_linear_algebra import _lapack_dtype, _square_check
from .aten.native.binary_ops import _alpha_check, _sub_check
from .aten.native.blas import _addr_check, dot_check
from .aten.native.convolution import (
    Geometry3d,
    _check_onednn_types,
    _check_transposed,
    _check_types,
    _transposed_params,
    _transposed_shape,
    conv_geometry,
)
from .aten.native.dispatch_stub import refuse_unlisted_dtypes
from .aten.native.embedding import _check_indices
from .aten.native.indexing import check_index_select
from .aten.native.pixel_shuffle import output_format, pixel_shuffle_shape
from .aten.native.pooling import pool_geometry
from .aten.native.sorting import _dim as _selection_dim
from .aten.native.tensor_factories import like_strides
from .aten.native.tensor_shape import compute_stride, infer_size, reshaped_geometry, wrap_dim
from .aten.tensor_iterator import broadcast_shapes, output_layout
from .c10 import scalar_type as st
from .c10.device import device as as_device
from .c10.memory_format import channels_last, channels_last_3d, channels_last_strides, suggest_memory_format
from .c10.sym import is_symbolic, sym_max
from .c10.tensor_impl import contiguous_strides

__all__ = ["POINTWISE", "SYMBOLIC_META", "TensorMeta", "meta_table"]

TensorMeta = namedtuple("TensorMeta", "shape strides dtype device")

meta_table = {}         # "aten::add.Tensor" -> meta function

# Meta functions used only when sizes are symbols: the kernel computes the metadata itself
# otherwise (its layout and its checks), but it reads data or turns sizes into ints.
SYMBOLIC_META = {}


def register_meta(*names):
    def wrap(fn):
        for name in names:
            meta_table["aten::" + name] = fn
        return fn
    return wrap


def _is_tensor(x):
    return hasattr(x, "_impl")


# ------------------------------------------------------------------ elementwise (TensorIterator)
_FLOATING_UNARY = ("exp", "log", "sqrt", "sigmoid", "tanh", "reciprocal")
_UNARY = ("neg", "abs", "relu") + _FLOATING_UNARY
_BINARY = ("add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "pow.Tensor_Tensor", "pow.Tensor_Scalar",
           "pow.Scalar", "rsub.Scalar", "maximum", "minimum", "add.Scalar", "sub.Scalar", "mul.Scalar",
           "div.Scalar")
_COMPARISONS = tuple(f"{c}.{o}" for c in ("eq", "ne", "lt", "le", "gt", "ge") for o in ("Scalar", "Tensor"))
POINTWISE = frozenset(_UNARY + _BINARY + _COMPARISONS + ("where.self",))
"""The pointwise operators (torch tags them ``pointwise`` in native_functions.yaml): one output
element from the input elements at the same index."""


def _elementwise(operands, dtype, layout_operands=None):
    """Output metadata of an elementwise op over ``operands`` (tensors and Python numbers)."""
    tensors = [t for t in operands if _is_tensor(t)]
    shape = broadcast_shapes(*[tuple(t.shape) for t in tensors])
    strides = output_layout([t._impl for t in (layout_operands or tensors)], shape)
    device = next((t.device for t in tensors if t.dim() or t.device.type != "cpu"), tensors[0].device)
    return TensorMeta(shape, strides, dtype, device)


def _unary_meta(name):
    def meta(x):
        dtype = x.dtype
        if name in _FLOATING_UNARY and not dtype.is_floating_point:
            dtype = st.get_default_dtype()
        elif name == "abs":     # |z| of a complex z is real
            dtype = st.to_real(dtype)
        return _elementwise([x], dtype)
    return meta


def _binary_meta(name):
    def meta(a, b, *, alpha=1):
        dtype = st.result_type(a, b)
        if name.startswith(("sub.", "rsub.")) and all(_is_tensor(x) and not x._impl.is_wrapped_number for x in (a, b)):
            # torch's fake tensors run the Python reference (torch/_refs sub), which checks for
            # bools only between two tensors: ``x - True`` traces (the eager kernel refuses it).
            _sub_check(a, b)
        if name.startswith(("add.", "sub.", "rsub.")) and not isinstance(alpha, bool):
            _alpha_check(dtype, alpha)      # the reference lets a bool alpha through, as a 0 or 1
        if name.startswith("div") and not dtype.is_floating_point:
            dtype = st.get_default_dtype()
        if name in _COMPARISONS:
            dtype = st.bool_
        return _elementwise([a, b], dtype)
    return meta


for _name in _UNARY:
    register_meta(_name)(_unary_meta(_name))
for _name in _BINARY + _COMPARISONS:
    register_meta(_name)(_binary_meta(_name))


@register_meta("div.Tensor_mode", "div.Scalar_mode")
def meta_div_mode(a, b, *, rounding_mode=None):
    """torch's meta is its reference (``torch/_refs`` div): no value read (an integer division by
    zero is not looked for), its ValueError for an unknown mode, its refusal of bool and complex
    floor division; a rounded quotient keeps the promoted dtype, a true one is floating."""
    if rounding_mode not in (None, "trunc", "floor"):
        raise ValueError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"{rounding_mode}.")
    dtype = st.result_type(a, b)
    if rounding_mode == "floor" and (dtype is st.bool_ or dtype.is_complex):
        raise RuntimeError(f"torch.{dtype.name} not supported for floor_divide")
    if rounding_mode is None and not (dtype.is_floating_point or dtype.is_complex):
        dtype = st.get_default_dtype()
    return _elementwise([a, b], dtype)


@register_meta("where.self")
def meta_where(condition, a, b):
    return _elementwise([condition, a, b], st.result_type(a, b))


@register_meta("clone")
def meta_clone(x, *, memory_format=None):
    return TensorMeta(tuple(x.shape), like_strides(x, memory_format), x.dtype, x.device)


# ------------------------------------------------------------------ reductions
def _reduced_shape(x, dims, keepdim):
    dims = range(x.dim()) if dims is None or len(dims) == 0 else [wrap_dim(d, x.dim()) for d in dims]
    return tuple(1 if d in dims else n for d, n in enumerate(x.shape) if keepdim or d not in dims)


def _reduction(x, dims, keepdim, dtype):
    shape = _reduced_shape(x, dims, keepdim)
    return TensorMeta(shape, contiguous_strides(shape), dtype, x.device)


def _sum_dtype(x, dtype):
    """sum and prod widen integers and bool to int64 unless a dtype is given."""
    if dtype is not None:
        return dtype
    return x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else st.int64


@register_meta("sum", "sum.dim_IntList")
def meta_sum(x, dim=None, keepdim=False, *, dtype=None):
    return _reduction(x, dim, keepdim, _sum_dtype(x, dtype))


@register_meta("mean", "mean.dim")
def meta_mean(x, dim=None, keepdim=False, *, dtype=None):
    if dtype is None and not (x.dtype.is_floating_point or x.dtype.is_complex):     # torch's reference's check
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: torch.{x.dtype.name}")
    return _reduction(x, dim, keepdim, dtype or x.dtype)


@register_meta("max", "min")
def meta_max_all(x):
    """The largest (smallest) element: a 0-dim tensor. torch's meta asks nothing of the input, so
    an empty one traces, and the compiled code raises the kernel's error when it runs."""
    return TensorMeta((), (), x.dtype, x.device)


@register_meta("amax", "amin")
def meta_amax(x, dim=(), keepdim=False):
    return _reduction(x, dim, keepdim, x.dtype)


@register_meta("argmax", "argmin")
def meta_argmax(x, dim=None, keepdim=False):
    return _reduction(x, None if dim is None else [dim], keepdim, st.int64)


@register_meta("_softmax", "_log_softmax")
def meta_softmax(x, dim, half_to_float):
    dtype = st.float32 if half_to_float else x.dtype
    return TensorMeta(tuple(x.shape), contiguous_strides(x.shape), dtype, x.device)


@register_meta("_softmax_backward_data", "_log_softmax_backward_data")
def meta_softmax_backward_data(grad, output, dim, input_dtype):
    return TensorMeta(tuple(grad.shape), contiguous_strides(grad.shape), input_dtype, grad.device)


# ------------------------------------------------------------------ losses (reduction: 0 none, 1 mean, 2 sum)
@register_meta("nll_loss_forward")
def meta_nll_loss_forward(x, target, weight, reduction, ignore_index):
    shape = (x.shape[0],) if reduction == 0 and x.dim() == 2 else ()
    return (TensorMeta(shape, contiguous_strides(shape), x.dtype, x.device),
            TensorMeta((), (), x.dtype, x.device))


@register_meta("nll_loss_backward")
def meta_nll_loss_backward(grad, x, target, weight, reduction, ignore_index, total_weight):
    return TensorMeta(tuple(x.shape), contiguous_strides(x.shape), x.dtype, x.device)


@register_meta("nll_loss2d_forward")
def meta_nll_loss2d_forward(x, target, weight, reduction, ignore_index):
    shape = tuple(target.shape) if reduction == 0 else ()
    return (TensorMeta(shape, contiguous_strides(shape), x.dtype, x.device),
            TensorMeta((), (), x.dtype, x.device))


@register_meta("nll_loss2d_backward")
def meta_nll_loss2d_backward(grad, x, target, weight, reduction, ignore_index, total_weight):
    return TensorMeta(tuple(x.shape), contiguous_strides(x.shape), x.dtype, x.device)


@register_meta("mse_loss_backward")
def meta_mse_loss_backward(grad, x, target, reduction):
    return _elementwise([x, target, grad], st.result_type(x, target), layout_operands=[x])


# ------------------------------------------------------------------ matrix products
# mm, addmm and bmm have none here: they are structured (aten/native/linear_algebra.py, blas.py),
# and a fake tensor runs their meta step, the one the real kernel runs, for metadata only.
@register_meta("dot", "vdot")
def meta_dot(a, b):
    """A 0-d result: checked, not computed (a symbolic trace of ``a @ b`` of two vectors)."""
    dot_check(a, b)
    return TensorMeta((), (), a.dtype, a.device)


@register_meta("addr")
def meta_addr(self, vec1, vec2, *, beta=1, alpha=1):
    """The kernel's checks, then the elementwise result over (self, vec1 as a column, vec2)."""
    dtype, shape = _addr_check(self, vec1, vec2, beta, alpha)
    expanded = self.expand(shape)
    return _elementwise([expanded, vec1.unsqueeze(1), vec2], dtype)


@register_meta("mv")
def meta_mv(a, v):
    """torch's ``mv`` decomposition's checks (``torch/_decomp/decompositions.py``), then (N,)."""
    if a.dim() != 2 or v.dim() != 1:
        raise RuntimeError(f"matrix @ vector expected, got {a.dim()}, {v.dim()}")
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})")
    return TensorMeta((a.shape[0],), (1,), a.dtype, a.device)


@register_meta("threshold_backward")
def meta_threshold_backward(grad, x, threshold):
    return _elementwise([x, grad], st.result_type(grad, x))     # the output follows x's layout


@register_meta("sigmoid_backward", "tanh_backward")
def meta_activation_backward(grad, output):
    return _elementwise([grad, output], st.result_type(grad, output))


@register_meta("pixel_shuffle")
def meta_pixel_shuffle(x, upscale_factor):
    """The kernel's checks and sizes, in the layout its CPU kernel allocates (a symbolic trace:
    the kernel's copy needs sizes that are numbers)."""
    shape = pixel_shuffle_shape(x, upscale_factor)
    fmt = output_format(x)
    strides = channels_last_strides(shape, fmt) if fmt is channels_last else _contiguous_strides_for(shape)
    return TensorMeta(shape, strides, x.dtype, x.device)


def _contiguous_strides_for(shape):
    """torch's ``make_contiguous_strides_for``: each stride the product of ``sym_max(size, 1)`` of
    the sizes after it (``Max(1, (s96//4))`` where a size is an expression not known to be 1 or more)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step = step * (sym_max(size, 1) if is_symbolic(size) else max(size, 1))
    return tuple(reversed(strides))


@register_meta("_unsafe_view")
def meta_unsafe_view(x, size):
    """``view``'s geometry on a fresh result (``reshape``'s copy, ``matmul``'s product)."""
    shape = infer_size(tuple(size), x.numel())
    if x._impl.is_contiguous() and any(map(is_symbolic, x.shape)):     # torch's sizes: expressions of x's
        return TensorMeta(*reshaped_geometry(tuple(x.shape), x.stride(), shape), x.dtype, x.device)
    return TensorMeta(shape, compute_stride(tuple(x.shape), x.stride(), shape), x.dtype, x.device)


# ------------------------------------------------------------------ factories
def _factory(size, dtype, device, strides=None):
    size = tuple(size)
    return TensorMeta(size, contiguous_strides(size) if strides is None else tuple(strides),
                      dtype or st.get_default_dtype(), as_device(device or "cpu"))


@register_meta("empty.memory_format", "zeros", "ones", "rand", "randn")
def meta_empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None,
               requires_grad=False):
    check_contiguous_nbytes(tuple(size), dtype or st.get_default_dtype())     # the kernel's own check
    return _factory(size, dtype, device)


@register_meta("full")
def meta_full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    inferred = st.scalar_dtype(fill_value)     # a float fills with the default dtype, as torch.full does
    dtype = dtype or (st.get_default_dtype() if inferred.is_floating_point else inferred)
    check_contiguous_nbytes(tuple(size), dtype)
    return _factory(size, dtype, device)


@register_meta("empty_strided")
def meta_empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory(size, dtype, device, stride)


@register_meta("new_empty_strided")
def meta_new_empty_strided(x, size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory(size, dtype or x.dtype, x.device if device is None else device, stride)


def _like(x, dtype, device, memory_format):
    return TensorMeta(tuple(x.shape), like_strides(x, memory_format), dtype or x.dtype,
                      x.device if device is None else as_device(device))


@register_meta("empty_like", "zeros_like", "ones_like", "rand_like", "randn_like")
def meta_empty_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(x, dtype, device, memory_format)


@register_meta("full_like")
def meta_full_like(x, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(x, dtype, device, memory_format)


@register_meta("_to_copy")
def meta_to_copy(x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                 memory_format=None):
    return _like(x, dtype, device, memory_format)


# ------------------------------------------------------------------ flip, roll, repeat
# Their CPU kernels compute every element's source offset on the host, which symbolic sizes
# cannot: these give the metadata alone (torch's are ``meta_flip`` via TensorIterator and the
# references ``torch/_refs`` roll and repeat).
@register_meta("flip")
def meta_flip(x, dims):
    """The checks (dims in range, no duplicate: torch's meta words it so), then ``x``'s layout
    (``empty_like``)."""
    wrapped = [wrap_dim(d, x.dim()) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("duplicate value in the list of dims")
    refuse_unlisted_dtypes("flip_cpu", x)
    return TensorMeta(tuple(x.shape), like_strides(x), x.dtype, x.device)


@register_meta("roll")
def meta_roll(x, shifts, dims=()):
    """The kernel's checks (in torch's meta words); a contiguous result (a clone's layout when
    there is nothing to move)."""
    shifts, dims = list(shifts), list(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims or len(shifts) != 1:
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims: {len(dims)}")
        if x.dim() == 0:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        for d in dims:
            wrap_dim(d, x.dim())
        if x.numel() == 0:
            return TensorMeta(tuple(x.shape), like_strides(x), x.dtype, x.device)
    return TensorMeta(tuple(x.shape), contiguous_strides(x.shape), x.dtype, x.device)


@register_meta("repeat")
def meta_repeat(x, repeats):
    """``repeats[d]`` times each size, leading ones added for extra repeats; contiguous."""
    repeats = list(repeats)
    if len(repeats) < x.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    for i, r in enumerate(repeats):
        if r < 0:
            raise RuntimeError(f"Repeats cannot be negative, found {r} at index {i}")
    padded = (1,) * (len(repeats) - x.dim()) + tuple(x.shape)
    shape = tuple(r * n for r, n in zip(repeats, padded))
    return TensorMeta(shape, contiguous_strides(shape), x.dtype, x.device)


@register_meta("index_select")
def meta_index_select(x, dim, index):
    """The kernel's checks but the bounds (no values to read: torch's meta checks none either);
    ``index.numel()`` slices along ``dim``, contiguous. ``embedding`` reaches it, so that it
    traces with symbolic sizes."""
    d = check_index_select(x, dim, index)
    shape = tuple(index.numel() if i == d else n for i, n in enumerate(x.shape))
    return TensorMeta(shape, contiguous_strides(shape), x.dtype, x.device)


@register_meta("embedding")
def meta_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """A row of ``weight`` per index, contiguous (the kernel's ``index_select`` and ``view``)."""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(indices, "embedding")
    shape = (*indices.shape, weight.shape[1])
    return TensorMeta(shape, contiguous_strides(shape), weight.dtype, weight.device)


# kthvalue and median along a dim: their kernels select on the host, which symbolic sizes cannot.
# torch's meta functions check k's range and nothing else (a bool or empty input traces).
def _selection_outputs(x, d, keepdim):
    """Values in x's dtype and int64 indices, contiguous, of x's shape reduced along ``d``."""
    shape = tuple(1 if i == d and keepdim else n for i, n in enumerate(x.shape) if i != d or keepdim)
    strides = contiguous_strides(shape)
    return TensorMeta(shape, strides, x.dtype, x.device), TensorMeta(shape, strides, st.int64, x.device)


@register_meta("kthvalue")
def meta_kthvalue(x, k, dim=-1, keepdim=False):
    d = _selection_dim(x, dim)
    if not 1 <= k <= (x.shape[d] if x.dim() else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _selection_outputs(x, d, keepdim)


@register_meta("median.dim")
def meta_median_dim(x, dim, keepdim=False):
    return _selection_outputs(x, _selection_dim(x, dim), keepdim)


# ------------------------------------------------------------------ LAPACK factorizations
def _column_major_meta(A):
    """A batch of matrices shaped as A, column-major (LAPACK's layout)."""
    shape = tuple(A.shape)
    strides = contiguous_strides(shape)[:-2] + (1, max(shape[-2], 1))
    return TensorMeta(shape, strides, A.dtype, A.device)


@register_meta("cholesky")
def _cholesky_meta(A, upper=False):
    """``torch.cholesky``: an empty input comes back contiguous; the factor is column-major."""
    if A.numel() == 0:
        return TensorMeta(tuple(A.shape), contiguous_strides(tuple(A.shape)), A.dtype, A.device)
    _square_check(A, "cholesky")
    _lapack_dtype(A, "cholesky")
    return _column_major_meta(A)


# ------------------------------------------------------------------ the CPU's fused attention
def _heads_transposed(shape, dtype, device):
    """(B, H, T, …) over a (B, T, H, …) buffer, as the flash kernels allocate their outputs."""
    swapped = (shape[0], shape[2], shape[1], *shape[3:])
    strides = list(contiguous_strides(swapped))
    strides[1], strides[2] = strides[2], strides[1]
    return TensorMeta(tuple(shape), tuple(strides), dtype, device)


@register_meta("_scaled_dot_product_flash_attention_for_cpu")
def meta_scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *,
                                                    attn_mask=None, scale=None):
    """The output laid out as ``query`` (``empty_like``); the logsumexp (B, H, L) in the
    accumulate type over a (B, L, H) buffer."""
    _check_flash_inputs(query, key, value, dropout_p, attn_mask)
    B, H, L, _ = query.shape
    output = TensorMeta(tuple(query.shape), like_strides(query), query.dtype, query.device)
    return output, _heads_transposed((B, H, L), st.opmath_type(query.dtype), query.device)


@register_meta("_scaled_dot_product_flash_attention_for_cpu_backward")
def meta_scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                                             is_causal, *, attn_mask=None, scale=None):
    """Each gradient shaped as its input, over a (B, T, H, E) buffer."""
    _check_flash_inputs(query, key, value, dropout_p, attn_mask)
    return tuple(_heads_transposed(tuple(t.shape), t.dtype, t.device) for t in (query, key, value))
# ------------------------------------------------------------------ the CTC loss
# The forward's log_alpha is as wide as the longest target, a value: fake tensors refuse
# ``_ctc_loss`` as torch's do (``fake_tensor.DYNAMIC_OUTPUT_SHAPE``). The backward's gradient is
# laid out as log_probs, contiguous (torch's ``full_like(log_probs, -inf, LEGACY_CONTIGUOUS)``).
@register_meta("_ctc_loss_backward", "_ctc_loss_backward.Tensor")
def _ctc_loss_backward_meta(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha,
                            blank, zero_infinity=False):
    shape = tuple(log_probs.shape)
    return TensorMeta(shape, contiguous_strides(shape), log_probs.dtype, log_probs.device)


# ------------------------------------------------------------------ symbolic sizes only
def _symbolic_meta(*names):
    def wrap(fn):
        for name in names:
            SYMBOLIC_META["aten::" + name] = fn
        return fn
    return wrap


def sym_contiguous_strides(shape):
    """Row-major strides with each size counted as at least 1, kept a symbol (``Max(1, s0 - 2)``)
    where torch's ``new_empty`` keeps it: Python's ``max`` would guard on the size's sign."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step = step * sym_max(1, size)
    return tuple(reversed(strides))


@_symbolic_meta("convolution")
def meta_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch's ``meta_conv``: each side ``(n + 2p - d(k - 1) - 1) // s + 1`` (transposed:
    ``(n - 1)s - 2p + d(k - 1) + output_padding + 1``), no channels out of none in, contiguous
    unless the kernel writes channels-last; the kernel's checks first, so a bad input raises as
    in eager."""
    if transposed:
        _check_transposed(input, weight, bias, output_padding, stride, dilation, groups)
        shape = _transposed_shape(input, weight, *_transposed_params(weight, stride, padding, dilation,
                                                                      output_padding), groups)
    else:
        if bias is not None and bias.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({st.type_meta_name(input.dtype)}) and bias type "
                               f"({st.type_meta_name(bias.dtype)}) should be the same")
        _check_onednn_types(input, weight, bias)
        _check_types(input, weight, bias)
        g = conv_geometry(input, weight, stride, padding, dilation, groups, bias)
        shape = [input.shape[0], weight.shape[0], *_conv_sides(input, weight, stride, padding, dilation, g)]
        if input.shape[1] == 0:
            shape[1] = 0
    return TensorMeta(tuple(shape), _conv_layout(tuple(shape), input, weight), input.dtype, input.device)


def _conv_sides(input, weight, stride, padding, dilation, g):
    """The output's spatial sizes: the geometry's, or a 1-d convolution's (which the kernel
    computes as a 2-d one, so its geometry is not returned)."""
    if g is None:
        (s,), (p,), (d,) = ([v] if isinstance(v, int) else list(v) for v in (stride, padding, dilation))
        return [(input.shape[2] + 2 * p - d * (weight.shape[2] - 1) - 1) // s + 1]
    return list(g.O) if isinstance(g, Geometry3d) else [g.OH, g.OW]


def _conv_layout(shape, input, weight):
    """The kernels write channels-last when an input is (2-d), or a float32 input or weight is
    channels-last-3d (3-d, oneDNN); else contiguous."""
    fmt = {4: channels_last, 5: channels_last_3d}.get(len(shape))
    if fmt is not None and (len(shape) == 4 or input.dtype is st.float32) and any(
            t.dim() == len(shape) and suggest_memory_format(t.shape, t.stride()) is fmt for t in (input, weight)):
        return channels_last_strides(shape, fmt)
    return sym_contiguous_strides(shape)


@_symbolic_meta("index_put")
def meta_index_put(x, indices, values, accumulate=False):
    """torch's ``meta_index_put``: ``empty_like(self)``, nothing checked (values of another dtype
    or shape trace, and the compiled code raises the kernel's error when it runs)."""
    return TensorMeta(tuple(x.shape), like_strides(x), x.dtype, x.device)


def _pooled(x, size, dtype):
    """torch's pooling metas' ``torch.empty(size, memory_format=suggest_memory_format(input))``:
    (N, C, *size) or (C, *size), channels-last for a channels-last input, else contiguous
    with the sizes kept symbols (``Max(1, (s0//2))`` where a size may be 0)."""
    shape = (*x.shape[:-2], *size)
    if x.dim() == 4 and suggest_memory_format(x.shape, x.stride()) is channels_last:
        return TensorMeta(shape, channels_last_strides(shape, channels_last), dtype, x.device)
    return TensorMeta(shape, sym_contiguous_strides(shape), dtype, x.device)


@_symbolic_meta("max_pool2d_with_indices")
def meta_max_pool2d_with_indices(x, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    size = pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode)[-2:]
    return _pooled(x, size, x.dtype), _pooled(x, size, st.int64)


@_symbolic_meta("avg_pool2d")
def meta_avg_pool2d(x, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                    divisor_override=None):
    """The kernel's geometry without its windows (host arrays, which would make every size an int)."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    size = pool_geometry(x, kernel_size, stride, padding, (1,), ceil_mode, name="avg_pool2d")[-2:]
    return _pooled(x, size, x.dtype)


# Kernels that read their data (an index's or a mask's values, a range check) or walk every
# element on the host: with symbolic sizes, the metadata alone, after the checks that need no data.
@_symbolic_meta("cummax", "cummin")
def meta_cummaxmin(x, dim):
    """torch's ``cummaxmin``: values and int64 indices of ``x``'s shape, contiguous (the kernel's
    fresh outputs); the dim checked when there is something to scan."""
    if x.numel() != 0 and x.dim() != 0:
        wrap_dim(dim, x.dim())
    shape, strides = tuple(x.shape), contiguous_strides(tuple(x.shape))
    return TensorMeta(shape, strides, x.dtype, x.device), TensorMeta(shape, strides, st.int64, x.device)


@_symbolic_meta("masked_scatter")
def meta_masked_scatter(x, mask, source):
    """``self`` and ``mask`` broadcast together, a contiguous clone (the kernel's); the dtype
    checks of ``masked_scatter_`` (the count of true elements is the data's)."""
    if x.dtype is not source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{x.dtype.torch_name} and {source.dtype.torch_name}")
    if mask.dtype not in (st.bool_, st.uint8):
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype.torch_name}")
    shape = broadcast_shapes(tuple(mask.shape), tuple(x.shape))
    return TensorMeta(shape, contiguous_strides(shape), x.dtype, x.device)


@_symbolic_meta("index_fill.int_Scalar", "index_fill.int_Tensor")
def meta_index_fill(x, dim, index, value):
    """A clone of ``x`` in its layout (the kernel fills one), after the checks of ``index_fill_``
    that need no values (the indices' range is the data's)."""
    if _is_tensor(value) and value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    if index.dtype is not st.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    wrap_dim(dim, max(x.dim(), 1))
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    return TensorMeta(tuple(x.shape), like_strides(x), x.dtype, x.device)


@_symbolic_meta("binary_cross_entropy")
def meta_binary_cross_entropy(x, target, weight=None, reduction=1):
    """The loss laid out as the input (``reduction='none'``) or a 0-dim sum or mean; the dtype
    checks (the inputs' range in [0, 1] is the data's)."""
    if x.dtype is not target.dtype:
        raise RuntimeError(f"expected scalar type {x.dtype.torch_name.capitalize()} but found "
                           f"{target.dtype.torch_name.capitalize()}")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for \'{x.dtype.torch_name}\'')
    if reduction == 0:
        return TensorMeta(tuple(x.shape), like_strides(x), x.dtype, x.device)
    return TensorMeta((), (), x.dtype, x.device)


@_symbolic_meta("_embedding_bag", "_embedding_bag_forward_only")
def meta_embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                       per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    """The kernel's four outputs: a row per bag, each position's bag, each bag's size, and the
    winning rows for ``max`` (each bag's size otherwise); the checks of dtypes and ranks (the
    offsets' values are the data's)."""
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t.dtype not in (st.int64, st.int32):
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar "
                               f"types: Long, Int; but got torch.{t.dtype.torch_name}Tensor instead (while "
                               "checking arguments for embedding_bag)")
    if weight.dtype not in (st.float16, st.bfloat16, st.float32, st.float64):
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                           f"Half, BFloat16, Float, Double; but got torch.{weight.dtype.torch_name}Tensor instead "
                           "(while checking arguments for embedding_bag)")
    if indices.dim() != 1 or offsets.dim() != 1:
        raise RuntimeError("input has to be a 1D or 2D Tensor, but got Tensor of dimension "
                           f"{indices.dim() if indices.dim() != 1 else offsets.dim()}")
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    rows = (bags, weight.shape[1])

    def index(*shape):
        return TensorMeta(shape, contiguous_strides(shape), st.int64, weight.device)
    return (TensorMeta(rows, contiguous_strides(rows), weight.dtype, weight.device), index(indices.shape[0]),
            index(bags), index(*rows) if mode == 2 else index(bags))


@_symbolic_meta("arange", "arange.start", "arange.start_step")
def meta_arange(start, end=None, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    """Integer bounds with symbols among them (``arange(0, x.numel(), x.size(1))``, as
    ``embedding_bag`` makes its offsets): ``ceil((end - start) / step)`` elements, kept a symbol
    (``s0``) where the kernel's int64 arithmetic would pin every size; other bounds go to the kernel."""
    if end is None:
        start, end = 0, start
    bounds = (start, end, step)
    if not all(isinstance(v, int) or is_symbolic(v) and v.node.pytype is int for v in bounds):
        return None
    dtype = st.int64 if dtype is None else dtype
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = -((start - end) // step)         # ceil((end - start) / step), in exact integers
    return TensorMeta((size,), (1,), dtype, as_device(device or "cpu"))
