"""Decompositions: operators rewritten as smaller operators (``torch/_decomp/decompositions.py``).

A compiler wants few kinds of operators: every pointwise op it knows it can fuse. torch keeps a
table from an OpOverload to a Python function that computes the same result with simpler ops;
``make_fx(f, decomposition_table=...)`` calls the function instead of recording the op, and
the function's own calls are recorded in its place. The functions here are plain tensor code:
under the tracer each line becomes one node, in the order torch's own decomposition writes it.

``decomposition_table`` holds every decomposition here (the compiler's table: the Numba backend
fuses what remains). ``core_aten_decompositions()`` is the part of it torch's own
``torch._decomp.core_aten_decompositions()`` also decomposes: what is left after it is core ATen,
the operator set a backend such as Inductor or ExecuTorch must implement.
"""
from .._ops import ops
from ..aten import dispatcher
from ..aten.native.tensor_factories import wrap_scalar
from ..aten.tensor_iterator import broadcast_shapes
from ..c10.memory_format import preserve_format
from ..c10.scalar_type import (
    bfloat16,
    bool_,
    float16,
    float32,
    get_default_dtype,
    int32,
    int64,
    opmath_type,
    promote_types,
    to_complex,
    uint8,
    uint16,
)
from ..c10.tensor_impl import strided
from ..c10.wrap_dim import wrap_dim

__all__ = ["core_aten_decompositions", "decomposition_table", "get_decompositions", "register_decomposition"]

aten = ops.aten
decomposition_table = {}


# Decompositions of torch's core table that the compiler does without (its kernels run these
# operators whole, as fast as their pieces): only ``core_aten_decompositions()`` gives them.
_core_only_table = {}


def register_decomposition(*names, table=decomposition_table):
    """Register under operator names (``"aten::addmm"``); the table's keys are their OpOverloads.
    An operator this build does not define gets no entry (there is nothing to decompose)."""
    def wrap(fn):
        for name in names:
            if name in dispatcher.operators and dispatcher.operators[name].schema is not None:
                base, _, overload = name.split("::")[1].partition(".")
                table[getattr(getattr(aten, base), overload or "default")] = fn
        return fn
    return wrap


def get_decompositions(overloads):
    """The entries of ``decomposition_table`` for these OpOverloads (or all overloads of a packet)."""
    wanted = set()
    for op in overloads:
        names = [getattr(op, o) for o in op.overloads()] if hasattr(op, "overloads") else [op]
        wanted.update(o.name() for o in names)
    return {op: fn for op, fn in decomposition_table.items() if op.name() in wanted}


# The operators torch's ``core_aten_decompositions()`` decomposes and this package does too.
_CORE = ("aten::addcmul", "aten::addcdiv", "aten::silu", "aten::silu_backward", "aten::tanh_backward",
         "aten::sigmoid_backward", "aten::threshold_backward", "aten::leaky_relu_backward",
         "aten::hardtanh_backward", "aten::mse_loss_backward", "aten::_softmax_backward_data",
         "aten::_log_softmax_backward_data", "aten::rsub.Scalar", "aten::square", "aten::mv", "aten::dot",
         "aten::select_backward", "aten::slice_backward", "aten::diagonal_backward", "aten::select_scatter",
         "aten::new_zeros", "aten::zero", "aten::fill.Scalar", "aten::fill.Tensor")


def core_aten_decompositions():
    """The decompositions torch's ``core_aten_decompositions()`` also applies, keyed by OpOverload."""
    return {**{op: fn for op, fn in decomposition_table.items() if op.name() in _CORE}, **_core_only_table}


# float16 and bfloat16 have too few bits to hold each step of a decomposition: the eager kernels
# compute in float32 and round once, so a decomposition that rounded after every operation would
# give other results (softmax of bfloat16 rows 1 ulp off). torch's decompositions upcast their
# half-precision inputs to float32 first (``pw_cast_for_opmath`` in ``torch/_decomp``).
_HALVES = (float16, bfloat16)


def _upcast(x):
    """``x`` as float32 if it is a half-precision tensor (one ``_to_copy`` node), else ``x``."""
    return x.to(float32) if getattr(x, "dtype", None) in _HALVES else x


def _opmath(cast_back=True):
    """Run a decomposition on float32 copies of its half-precision tensor arguments; with
    ``cast_back``, its result returns to the tensors' promoted dtype (``pw_cast_for_opmath``),
    without, the function casts it itself (``compute_only_pw_cast_for_opmath``)."""
    def wrap(fn):
        def run(*args, **kwargs):
            tensors = [a for a in args if hasattr(a, "dtype") and hasattr(a, "shape")]
            if not any(t.dtype in _HALVES for t in tensors):
                return fn(*args, **kwargs)
            result_dtype = tensors[0].dtype
            for t in tensors[1:]:
                result_dtype = promote_types(result_dtype, t.dtype)
            out = fn(*[_upcast(a) for a in args], **kwargs)
            return out.to(result_dtype) if cast_back else out
        run.__name__, run.__doc__, run.__wrapped__ = fn.__name__, fn.__doc__, fn
        return run
    return wrap


@register_decomposition("aten::addmm")
def addmm(bias, mat1, mat2, *, beta=1, alpha=1):
    """``alpha * (mat1 @ mat2) + beta * bias``, torch's order: the product first, so the sum takes
    its contiguous layout (the first operand leads TensorIterator's choice of output strides),
    and the scalings kept even at 1, as torch's decomposition keeps them."""
    out = alpha * aten.mm.default(mat1, mat2)
    if beta == 0:
        return out
    return out + beta * bias


@register_decomposition("aten::addcmul")
@_opmath()
def addcmul(x, tensor1, tensor2, *, value=1):
    """``x + value * tensor1 * tensor2``, the scaling kept at 1, as ``torch/_refs`` writes it."""
    return x + value * tensor1 * tensor2


@register_decomposition("aten::addcdiv")
@_opmath()
def addcdiv(x, tensor1, tensor2, *, value=1):
    return x + value * tensor1 / tensor2


@register_decomposition("aten::silu")
@_opmath()
def silu(x):
    return x * aten.sigmoid.default(x)


@register_decomposition("aten::silu_backward")
@_opmath()
def silu_backward(grad, x):
    """d/dx x*s(x) = s(x) * (1 + x * (1 - s(x)))."""
    sigmoid = aten.sigmoid.default(x)
    return grad * sigmoid * (1 + x * (1 - sigmoid))


@register_decomposition("aten::tanh_backward")
@_opmath()
def tanh_backward(grad, y):
    """d tanh = 1 - tanh^2, from the saved output."""
    return grad * _conj(1 - y * y)


@register_decomposition("aten::sigmoid_backward")
@_opmath()
def sigmoid_backward(grad, y):
    return grad * _conj(y * (1 - y))


def _conj(x):
    """The conjugate a complex gradient needs; a real tensor is its own (torch records nothing)."""
    return aten.conj_physical.default(x) if x.dtype.is_complex else x


@register_decomposition("aten::threshold_backward")
def threshold_backward(grad, x, threshold):
    return aten.where.self(x <= threshold, aten.scalar_tensor.default(0), grad)


@register_decomposition("aten::leaky_relu_backward")
@_opmath()
def leaky_relu_backward(grad, x, negative_slope, self_is_result):
    return aten.where.self(x > 0, grad, grad * negative_slope)


@register_decomposition("aten::hardtanh_backward")
@_opmath()
def hardtanh_backward(grad, x, min_val, max_val):
    return aten.where.self((x <= min_val) | (x >= max_val), aten.scalar_tensor.default(0.0), grad)


@register_decomposition("aten::mse_loss_backward")
@_opmath()
def mse_loss_backward(grad, x, target, reduction):
    """d/dx mean((x - t)^2) = 2 (x - t) / n (reduction 1 is the mean)."""
    norm = 2.0 / x.numel() if reduction == 1 else 2.0
    return norm * (x - target) * grad


@register_decomposition("aten::_softmax_backward_data")
@_opmath(cast_back=False)
def softmax_backward_data(grad, output, dim, input_dtype):
    """y * (g - sum(g * y)): written as torch's, g*y first and reused."""
    weighted = grad * output
    grad_input = weighted - output * aten.sum.dim_IntList(weighted, [dim], True)
    return _to_input_dtype(grad, grad_input, input_dtype).contiguous()


@register_decomposition("aten::_log_softmax_backward_data")
@_opmath(cast_back=False)
def log_softmax_backward_data(grad, output, dim, input_dtype):
    grad_input = grad - aten.exp.default(output) * aten.sum.dim_IntList(grad, [dim], True)
    return _to_input_dtype(grad, grad_input, input_dtype)


def _to_input_dtype(grad, grad_input, input_dtype):
    return grad_input if grad.dtype is input_dtype else grad_input.to(input_dtype)


@register_decomposition("aten::rsub.Scalar")
def rsub(x, other, alpha=1):
    """``other - alpha * x``."""
    return aten.sub.Tensor(wrap_scalar(other), x, alpha=alpha)


@register_decomposition("aten::square")
def square(x):
    """x ** 2: torch's ``square`` is a composite of ``pow``, so that is what its graphs hold."""
    return aten.pow.Tensor_Scalar(x, 2)


@register_decomposition("aten::mv")
@_opmath()
def mv(a, v):
    """A matrix-vector product as a broadcast multiply and a row sum."""
    return aten.sum.dim_IntList(a * v, [1])


@register_decomposition("aten::dot")
def dot(a, b):
    return aten.sum.dim_IntList(a * b, [])


@register_decomposition("aten::_softmax")
def softmax(x, dim, half_to_float):
    """exp(x - max) / sum(exp(x - max)): subtracting the row's max keeps exp from overflowing.
    Half precision is computed in float32 and rounded once (float32 kept with ``half_to_float``)."""
    dtype, x = x.dtype, _upcast(x)
    shifted = x - aten.amax.default(x, [dim], True)
    unnormalized = shifted.exp()
    return _rounded(unnormalized / unnormalized.sum(dim, keepdim=True), dtype, half_to_float)


def _rounded(out, dtype, half_to_float=False):
    """``out`` back in the input's ``dtype`` (nothing recorded when it is already)."""
    return out if half_to_float or out.dtype is dtype else out.to(dtype)


@register_decomposition("aten::_log_softmax")
def log_softmax(x, dim, half_to_float):
    """(x - max) - log(sum(exp(x - max))), in float32 for half precision as ``softmax``."""
    dtype, x = x.dtype, _upcast(x)
    shifted = x - aten.amax.default(x, [dim], True)
    return _rounded(shifted - shifted.exp().sum(dim, keepdim=True).log(), dtype, half_to_float)


@register_decomposition("aten::mean.dim")
def mean_dim(x, dim, keepdim=False, *, dtype=None):
    """sum / count: the mean of a layer norm becomes a sum reduction and a pointwise division."""
    dims = range(x.dim()) if not dim else dim
    count = 1
    for d in dims:
        count *= x.shape[d]
    if dtype is None and x.dtype in _HALVES:       # accumulated and divided in float32, as eager
        return _rounded(_upcast(x).sum(dim, keepdim=keepdim) / count, x.dtype)
    return x.sum(dim, keepdim=keepdim, dtype=dtype) / count


@register_decomposition("aten::sigmoid")
@_opmath()
def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return aten.div.Tensor(wrap_scalar(1.0), (-x).exp() + 1)


# The gradients of views, and the writes functionalization leaves: zeros (``full``) with the
# gradient scattered in, as ``torch/_decomp/decompositions.py`` writes them.
@register_decomposition("aten::new_zeros")
def new_zeros(x, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return aten.full.default(list(size), 0, dtype=dtype or x.dtype, layout=layout or strided,
                             device=device or x.device, pin_memory=False)


@register_decomposition("aten::select_backward")
def select_backward(grad_output, input_sizes, dim, index):
    grad_input = new_zeros(grad_output, input_sizes)
    return aten.select_scatter.default(grad_input, grad_output, dim, index)


@register_decomposition("aten::slice_backward")
def slice_backward(grad_output, input_sizes, dim, start, end, step):
    grad_input = new_zeros(grad_output, input_sizes)
    return aten.slice_scatter.default(grad_input, grad_output, dim, start, end, step)


@register_decomposition("aten::diagonal_backward")
def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    grad_input = new_zeros(grad_output, input_sizes)
    return aten.diagonal_scatter.default(grad_input, grad_output, offset, dim1, dim2)


@register_decomposition("aten::select_scatter")
def select_scatter(x, src, dim, index):
    """``where(positions == index, src broadcast along dim, x)`` (``torch/_refs``): pointwise, so
    a fusing backend needs no scatter kernel."""
    dim = wrap_dim(dim, x.dim())
    mask_shape = [1] * x.dim()
    mask_shape[dim] = -1
    index = index + x.shape[dim] if index < 0 else index
    positions = aten.arange.start_step(0, x.shape[dim], layout=strided, device=x.device, pin_memory=False)
    mask = aten.eq.Scalar(aten.view.default(positions, mask_shape), index)
    src = aten.expand.default(aten.unsqueeze.default(src, dim), list(x.shape))
    return aten.where.self(mask, src, x)


@register_decomposition("aten::zero")
def zero(x):
    return aten.full_like.default(x, 0, pin_memory=False, memory_format=preserve_format)


@register_decomposition("aten::fill.Scalar")
def fill_scalar(x, value):
    return aten.full_like.default(x, value, pin_memory=False)


@register_decomposition("aten::fill.Tensor")
def fill_tensor(x, value):
    return aten.copy.default(x, value)


# ---------------------------------------------------------------------- Python kernels
# torch gives some composite operators a Python kernel (``py_impl(CompositeImplicitAutograd)`` in
# ``torch/_decomp/decompositions.py``) that the Python dispatcher runs in place of the C++ one,
# as symbolic tracing does: the graph then holds what the Python kernel called.
def _dropout_python(input, p, train):
    """torch's Python ``dropout``: when nothing is dropped, a clone of the input (the C++
    composite returns the input itself). While training, torch's calls ``native_dropout``, an
    operator this package does not define: its own composite runs then."""
    if train and p != 0:
        return _dropout_composite(input, p, train)
    return input.clone()


_dropout_composite = dispatcher.aten_ops["dropout"].kernels["CompositeImplicitAutograd"].fn
dispatcher.py_impl("dropout", "CompositeImplicitAutograd", _dropout_python)


def _native_batch_norm_python(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """torch's ``native_batch_norm_decomposition`` (its ``py_impl(Autograd)``): the operator with
    the schema that says what it mutates, ``_native_batch_norm_legit`` (``.no_stats`` without
    running statistics, ``_no_training`` in eval), each differentiated on its own."""
    if running_mean is None and running_var is None:
        return aten._native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps)
    if running_mean is None:
        raise RuntimeError("running_mean is None, but running_var is provided. They should both be None or both be "
                           "provided.")
    if running_var is None:
        raise RuntimeError("running_var is None, but running_mean is provided. They should both be None or both be "
                           "provided.")
    if training:
        return aten._native_batch_norm_legit.default(input, weight, bias, running_mean, running_var, training,
                                                     momentum, eps)
    return aten._native_batch_norm_legit_no_training.default(input, weight, bias, running_mean, running_var,
                                                             momentum, eps)


dispatcher.py_impl("native_batch_norm", "Autograd", _native_batch_norm_python)


def _multi_margin_loss_python(input, target, p=1, margin=1, weight=None, reduction=1):
    """torch's Python ``multi_margin_loss`` (``decompositions.py``, its ``py_impl(Autograd)``):
    per sample, the clamped margins ``margin - x[target] + x`` (squared for p=2, weighted by the
    target's class) over the classes other than the target; its checks as torch's ``_check``s,
    on sizes that may be symbols."""
    import internals as torch  # the package's functions, as torch's code calls torch's
    input, target = torch.atleast_2d(input), torch.atleast_1d(target)
    nframe, dim = input.shape[0], input.shape[1]
    if not (p == 1 or p == 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    if not (input.ndim == 2 and dim != 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{input.shape}")
    if not (target.ndim == 1 and target.numel() == nframe):
        raise RuntimeError(f"inconsistent target size, expected {nframe} but got {target.shape}")
    if weight is not None:
        weight = torch.atleast_1d(weight)
        if not (weight.ndim == 1 and weight.numel() == dim):
            raise RuntimeError(f"inconsistent weight size, expected {dim} but got {weight.shape}")
    target = target.unsqueeze(1)
    u = torch.gather(input, dim=1, index=target)
    z = (margin - u + input).clamp_min(0)
    z = z if p == 1 else z * z
    if weight is not None:
        z = z * weight[target]
    idx = torch.arange(dim, device=input.device)
    z = torch.where(idx != target, z, 0)
    if reduction == 1:          # Reduction::Mean
        return z.mean()
    if reduction == 2:          # Reduction::Sum
        return z.sum() / z.shape[1]
    return z.mean(dim=1)


dispatcher.py_impl("multi_margin_loss", "Autograd", _multi_margin_loss_python)


def _matmul_python(tensor1, tensor2):
    """torch's Python ``matmul`` (``decompositions.py``, its ``py_impl(CompositeImplicitAutograd)``),
    the kernel symbolic tracing runs: the products are the C++ composite's, but a batched product
    ends with ``view`` (not ``_unsafe_view``), and the sizes are read where torch's code reads
    them -- the batch sizes compared first, each operand's own sizes in its ``expand`` -- so the
    size nodes, and the names the dropped ones took, are torch's."""
    from ..fx.experimental.symbolic_shapes import guard_or_false, guard_or_true  # the tracer's: only a trace runs this
    dim1, dim2 = tensor1.dim(), tensor2.dim()
    if dim1 == 0 or dim2 == 0:      # torch's Python kernel asserts where its C++ one checks
        raise AssertionError(f"matmul does not support 0-dimensional tensors, got dims: {dim1} and {dim2}")
    if dim1 == 1 and dim2 == 1:
        return tensor1.dot(tensor2)
    if dim1 == 2 and dim2 == 1:
        return tensor1.mv(tensor2)
    if dim1 == 1 and dim2 == 2:
        return tensor1.unsqueeze(0).mm(tensor2).squeeze(0)
    if dim1 == 2 and dim2 == 2:
        return tensor1.mm(tensor2)
    if _should_fold(tensor1, tensor2):
        return _folded_matmul(tensor1, tensor2)
    n = tensor1.size(-2) if dim1 > 1 else 1
    m1 = tensor1.size(-1)
    batch1 = list(tensor1.shape[:-2])
    m2 = tensor2.size(-2) if dim2 > 1 else tensor2.size(-1)
    p = tensor2.size(-1) if dim2 > 1 else 1
    batch2 = [tensor2.size(i) for i in range(dim2 - 2)]
    # a batch of one broadcast against more: squeezed when it needs a gradient, as torch's
    # C++ kernel folds it (its gradient is then one mm, not a sum over the broadcast)
    if dim1 == 3 and dim2 == 3 and guard_or_true(batch1[0] != batch2[0]):
        if guard_or_false(batch1[0] == 1) and tensor1.requires_grad:
            return _matmul_python(tensor1.squeeze(0), tensor2)
        if guard_or_false(batch2[0] == 1) and tensor2.requires_grad:
            return _matmul_python(tensor1, tensor2.squeeze(0))
    batch = list(broadcast_shapes(tuple(batch1), tuple(batch2)))
    count = 1
    for size in batch:
        count = count * size
    expanded1 = tensor1.expand(batch + [n, m1]).reshape(count, n, m1)
    if dim2 == 1:
        expanded2 = tensor2.expand(batch + [m2]).reshape(count, m2).unsqueeze(2)
    else:
        expanded2 = tensor2.expand(batch + [m2, p]).reshape(count, m2, p)
    shape = batch + ([n] if dim1 > 1 else []) + ([p] if dim2 > 1 else [])
    product = expanded1.bmm(expanded2)
    return (product.squeeze(-1) if dim2 == 1 else product).view(shape)


def _should_fold(tensor1, tensor2):
    """torch's Python ``should_fold``: the C++ test, with its contiguity check written as
    comparisons of sizes and strides (which a symbolic trace records, then drops)."""
    from ..fx.experimental.symbolic_shapes import guard_or_false  # the tracer's: only a trace runs this
    big, small = (tensor1, tensor2) if tensor1.dim() >= tensor2.dim() else (tensor2, tensor1)
    if not (big.dim() >= 3 and small.dim() <= 2):
        return False
    if small.requires_grad:
        return True
    if tensor1.dim() == 2:
        return False
    if guard_or_false(big.numel() == 0):
        return True
    sizes, strides = list(big.shape), big.stride()
    expected = [1]
    for size in reversed(sizes[1:]):
        expected.append(size * expected[-1])
    return all(guard_or_false(size == 1) or guard_or_false(left == right)
               for left, right, size in zip(strides, reversed(expected), sizes))


def _folded_matmul(tensor1, tensor2):
    """The folded product of torch's Python ``matmul``: the batched operand's leading dims folded
    into rows, one ``mm`` (``mv``), viewed back with ``_unsafe_view``."""
    transpose = tensor2.dim() > tensor1.dim()
    t1 = tensor2.mT if transpose else tensor1
    t2 = (tensor1.t() if tensor1.dim() == 2 else tensor1) if transpose else tensor2
    sizes = t1.shape
    shape = list(sizes[:-1])
    rows = shape[0]
    for size in shape[1:]:
        rows = rows * size
    if t2.dim() == 2:
        shape.append(t2.shape[1])
    folded = t1.reshape(rows, sizes[-1])
    if t2.dim() == 2:
        out = aten._unsafe_view.default(folded.mm(t2), shape)
        return out.mT.contiguous() if transpose else out
    return aten._unsafe_view.default(folded.mv(t2), shape)


dispatcher.py_impl("matmul", "CompositeImplicitAutograd", _matmul_python)


# ------------------------------------------------------------------ core ATen only
@register_decomposition("aten::sum", table=_core_only_table)
def sum_default(x, *, dtype=None):
    """A whole-tensor sum is the dim-list sum over no dims (core ATen has only that one)."""
    return aten.sum.dim_IntList(x, [], dtype=dtype)


@register_decomposition("aten::floor_divide", table=_core_only_table)
def floor_divide(x, other):
    return aten.div.Tensor_mode(x, other, rounding_mode="floor")


@register_decomposition("aten::aminmax", table=_core_only_table)
def aminmax(x, *, dim=None, keepdim=False):
    dims = [] if dim is None else [dim]
    return aten.amin.default(x, dims, keepdim), aten.amax.default(x, dims, keepdim)


@register_decomposition("aten::all.dim", table=_core_only_table)
def all_dim(x, dim, keepdim=False):
    """Every element true is no element false (``torch/_refs``' ``all``)."""
    result = aten.logical_not.default(aten.any.dim(aten.logical_not.default(x), dim, keepdim))
    return result.to(uint8) if x.dtype is uint8 else result


@register_decomposition("aten::std.correction", table=_core_only_table)
def std_correction(x, dim=None, *, correction=None, keepdim=False):
    """The square root of the variance, in float32 for half precision (``torch/_refs``)."""
    dtype = x.dtype
    std = aten.sqrt.default(aten.var.correction(_upcast(x), dim, correction=correction, keepdim=keepdim))
    return _rounded(std, dtype)


@register_decomposition("aten::baddbmm", table=_core_only_table)
@_opmath()
def baddbmm(x, batch1, batch2, *, beta=1, alpha=1):
    """``beta * x + alpha * (batch1 @ batch2)``: the product first, a scaling only where it is not 1."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        beta, alpha = int(beta), int(alpha)
    result = aten.bmm.default(batch1, batch2)
    if alpha != 1:
        result = result * alpha
    if beta == 0:
        return result
    if beta != 1:
        x = x * beta
    return x + result


# Rewrites to the one overload core ATen keeps (``transpose`` is a ``permute``, ``_unsafe_view``
# a ``view``, every ``arange`` the start/end/step one), as torch's core table makes them.
@register_decomposition("aten::transpose.int", table=_core_only_table)
def transpose(x, dim0, dim1):
    dim0, dim1 = wrap_dim(dim0, x.dim()), wrap_dim(dim1, x.dim())
    if x.dim() <= 1 or dim0 == dim1:
        return aten.alias.default(x)
    order = list(range(x.dim()))
    order[dim0], order[dim1] = dim1, dim0
    return aten.permute.default(x, order)


@register_decomposition("aten::t", table=_core_only_table)
def t(x):
    if x.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.dim()}D")
    return transpose(x, 0, 0 if x.dim() < 2 else 1)


@register_decomposition("aten::_unsafe_view", table=_core_only_table)
def unsafe_view(x, size):
    return aten.view.default(x, size)


@register_decomposition("aten::arange", table=_core_only_table)
def arange_default(end, *, dtype=None, layout=strided, device=None, pin_memory=False):
    return aten.arange.start_step(0, end, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


@register_decomposition("aten::arange.start", table=_core_only_table)
def arange_start(start, end, *, dtype=None, layout=strided, device=None, pin_memory=False):
    return aten.arange.start_step(start, end, 1, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)


@register_decomposition("aten::linspace", table=_core_only_table)
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    """An ``arange`` of the step numbers, scaled in the step's dtype: the first half counted up
    from ``start``, the rest down from ``end``, so both ends are exact (``torch/_refs``' linspace,
    node for node; integer dtypes computed in floats and converted at the end)."""
    if complex in (type(start), type(end), type(steps)):
        inferred = to_complex(get_default_dtype())
        if dtype is not None and not dtype.is_complex:
            raise RuntimeError(f"linspace(): inferred dtype {inferred.torch_name} can't be safely cast to passed "
                               f"dtype {dtype.torch_name}")
        dtype = dtype or inferred
    dtype = dtype or get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    factory = {"layout": layout or strided, "device": device, "pin_memory": bool(pin_memory)}
    if steps in (0, 1):
        return aten.full.default([steps], start if steps else 0, dtype=dtype, **factory)
    rg = aten.arange.start_step(0, steps, **factory)
    computation = opmath_type(int64 if dtype is bool_ or not (dtype.is_floating_point or dtype.is_complex)
                              else dtype)

    def cast(t):
        return t if t.dtype is computation else aten._to_copy.default(t, dtype=computation)
    step = (end - start) / (steps - 1)
    out = aten.where.self(rg < steps / 2, start + step * cast(rg), end - step * cast((steps - 1) - rg))
    return out if out.dtype is dtype else aten._to_copy.default(out, dtype=dtype)


@register_decomposition("aten::detach", table=_core_only_table)
def detach(x):
    """A traced graph runs without autograd: detaching is an alias."""
    return aten.alias.default(x)


# Factories: a ``full`` (``full_like``) of the value, as ``torch/_refs`` writes them.
@register_decomposition("aten::new_ones", table=_core_only_table)
def new_ones(x, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = dtype or x.dtype
    return aten.full.default(list(size), True if dtype is bool_ else 1, dtype=dtype, layout=layout or strided,
                             device=device or x.device, pin_memory=False)


def _full_like(value):
    def like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        fill = bool(value) if (dtype or x.dtype) is bool_ else value
        return aten.full_like.default(x, fill, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                      memory_format=memory_format)
    return like


register_decomposition("aten::ones_like", table=_core_only_table)(_full_like(1))
register_decomposition("aten::zeros_like", table=_core_only_table)(_full_like(0))


def _eye(n, m=None, *, dtype=None, layout=None, device=None, pin_memory=None):
    """Rows equal to columns, compared on the smallest integer type that holds the larger size."""
    m = n if m is None else m
    index_dtype = _smallest_index_dtype(max(n, m))
    rows = aten.arange.start_step(0, n, dtype=index_dtype, layout=strided, device=device, pin_memory=False)
    cols = aten.arange.start_step(0, m, dtype=index_dtype, layout=strided, device=device, pin_memory=False)
    same = aten.eq.Tensor(aten.unsqueeze.default(rows, -1), cols)
    return aten._to_copy.default(same, dtype=dtype or get_default_dtype())


def _smallest_index_dtype(n):
    """torch's ``_strength_reduce_integer``: the first of uint8, uint16, int32 that holds ``n``."""
    return uint8 if n <= 255 else uint16 if n <= 65535 else int32 if n <= 2 ** 31 - 1 else int64


register_decomposition("aten::eye", "aten::eye.m", table=_core_only_table)(_eye)


# Shape operators as views and a ``cat`` (``torch/_refs``).
@register_decomposition("aten::stack", table=_core_only_table)
def stack(tensors, dim=0):
    dim = wrap_dim(dim, tensors[0].dim() + 1)
    if dim < tensors[0].dim():
        sizes = list(tensors[0].shape)
        sizes.insert(dim, len(tensors))
        return aten.view.default(aten.cat.default(list(tensors), dim), sizes)
    return aten.cat.default([aten.unsqueeze.default(t, dim) for t in tensors], dim)


@register_decomposition("aten::unbind.int", table=_core_only_table)
def unbind(x, dim=0):
    """One slice of width 1 per index, each squeezed (``torch/_refs``' ``tensor_split``)."""
    dim = wrap_dim(dim, x.dim())
    if x.shape[dim] == 0:
        return ()
    pieces = [aten.slice.Tensor(x, dim, i, i + 1) for i in range(x.shape[dim])]
    return tuple(aten.squeeze.dims(p, [dim]) for p in pieces)


@register_decomposition("aten::roll", table=_core_only_table)
def roll(x, shifts, dims=()):
    """Gather along each dim at ``(i + size - shift) % size``, one dim after another."""
    shifts, dims = list(shifts), [wrap_dim(d, x.dim()) for d in dims]
    if x.numel() == 0:
        return aten.clone.default(x)
    if not dims and len(shifts) == 1:
        return aten.view.default(roll(aten.view.default(x, [x.numel()]), shifts, [0]), list(x.shape))
    for shift, dim in zip(shifts, dims, strict=True):
        size = x.shape[dim]
        positions = aten.arange.start_step(0, size, layout=strided, device=x.device, pin_memory=False)
        index = aten.fmod.Scalar(aten.add.Tensor(positions, (size - shift) % size), size)
        x = aten.index_select.default(x, dim, index)
    return x


def _triangle(compare):
    def masked(x, diagonal=0):
        rows, cols = x.shape[-2], x.shape[-1]
        right = aten.unsqueeze.default(aten.arange.start_step(0, cols, layout=strided, device=x.device,
                                                              pin_memory=False), -2)
        down = aten.unsqueeze.default(aten.arange.start_step(0, rows, layout=strided, device=x.device,
                                                             pin_memory=False), -1)
        mask = compare(aten.sub.Tensor(right, down), diagonal)
        zero = aten.scalar_tensor.default(False if x.dtype is bool_ else 0, dtype=x.dtype, layout=strided,
                                          device=x.device)
        return aten.where.self(mask, x, zero)
    return masked


register_decomposition("aten::tril", table=_core_only_table)(_triangle(aten.le.Scalar))
register_decomposition("aten::triu", table=_core_only_table)(_triangle(aten.ge.Scalar))


@register_decomposition("aten::logsumexp", table=_core_only_table)
def logsumexp(x, dim, keepdim=False):
    """The max shifted out (an infinite max left in place as 0), summed, logged, added back."""
    dim = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    if x.numel() == 0:
        return aten.log.default(aten.sum.dim_IntList(aten.exp.default(x), dim, keepdim))
    maxes = aten.amax.default(x, dim, True)
    infinite = aten.eq.Scalar(aten.abs.default(maxes), float("inf"))
    maxes = aten.where.self(infinite, aten.scalar_tensor.default(0.0, dtype=maxes.dtype, layout=strided,
                                                                 device=maxes.device), maxes)
    kept = maxes if keepdim else aten.squeeze.dims(maxes, dim)
    total = aten.sum.dim_IntList(aten.exp.default(aten.sub.Tensor(x, maxes)), dim, keepdim)
    return aten.add.Tensor(aten.log.default(total), kept)


def _lerp(start, end, weight):
    """Near the end the formula counts back from ``end`` (``weight - 1``), so both ends are exact."""
    given = weight
    if not hasattr(weight, "shape"):
        weight = aten.full.default([], weight, dtype=start.dtype, layout=strided, device=start.device,
                                   pin_memory=False)
    near_end = aten.ge.Scalar(aten.abs.default(weight), 0.5)
    coeff = aten.where.self(near_end, aten.sub.Tensor(weight, 1), weight)
    base = aten.where.self(near_end, end, start)
    out = aten.add.Tensor(aten.mul.Tensor(coeff, aten.sub.Tensor(end, start)), base)
    # torch broadcasts the inputs to find the output's strides (a graph keeps those expands)
    inputs = [start, end] if given is not weight else [start, end, weight]
    shape = list(broadcast_shapes(*(tuple(t.shape) for t in inputs)))
    for t in inputs:
        if list(t.shape) != shape:
            aten.expand.default(t, shape)
    return out


register_decomposition("aten::lerp.Scalar", "aten::lerp.Tensor", table=_core_only_table)(_lerp)


@register_decomposition("aten::hardswish", table=_core_only_table)
@_opmath()
def hardswish(x):
    return x * aten.clamp.default(aten.clamp.default(x + 3, 0), None, 6) / 6


@register_decomposition("aten::softplus", table=_core_only_table)
def softplus(x, beta=1, threshold=20):
    """``log1p(exp(beta x)) / beta``, ``x`` itself past the threshold. torch's Python dispatch
    drops trailing arguments equal to their defaults, so its decomposition sees no ``beta``
    (and scales nothing) when both are the defaults."""
    if beta == 1 and threshold == 20:
        smooth = aten.log1p.default(aten.exp.default(x))
        return aten.where.self(aten.gt.Scalar(x, threshold), x, smooth)
    scaled = x * beta
    smooth = aten.div.Tensor(aten.log1p.default(aten.exp.default(scaled)), beta)
    return aten.where.self(aten.gt.Scalar(scaled, threshold), x, smooth)


def _reduce(loss, reduction):
    """``reduction`` 0 none, 1 mean, 2 sum (``torch/_decomp``' ``apply_loss_reduction``)."""
    if reduction == 1:
        return aten.mean.default(loss)
    return aten.sum.dim_IntList(loss, []) if reduction == 2 else loss


@register_decomposition("aten::mse_loss", table=_core_only_table)
@_opmath()
def mse_loss(x, target, reduction=1):
    return _reduce(aten.pow.Tensor_Scalar(x - target, 2), reduction)


@register_decomposition("aten::smooth_l1_loss", table=_core_only_table)
@_opmath()
def smooth_l1_loss(x, target, reduction=1, beta=1.0):
    loss = aten.abs.default(x - target)
    loss = aten.where.self(aten.lt.Scalar(loss, beta), 0.5 * aten.pow.Tensor_Scalar(loss, 2) / beta, loss - 0.5 * beta)
    return _reduce(loss, reduction)


@register_decomposition("aten::binary_cross_entropy_with_logits", table=_core_only_table)
def binary_cross_entropy_with_logits(x, target, weight=None, pos_weight=None, reduction=1):
    """``(1 - t) x - w log sigmoid(x)``, the log-sigmoid written ``min(0, x) - log1p(exp(-|x|))``."""
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * x - log_weight * _log_sigmoid(x)
    else:
        loss = (1 - target) * x - _log_sigmoid(x)
    if weight is not None:
        loss = loss * weight
    return _reduce(_rounded(loss, target.dtype), reduction)


def _log_sigmoid(x):
    zero = aten.full.default([], 0, dtype=x.dtype, layout=strided, device=x.device, pin_memory=False)
    return aten.sub.Tensor(aten.minimum.default(zero, x),
                           aten.log1p.default(aten.exp.default(aten.neg.default(aten.abs.default(x)))))


@register_decomposition("aten::nll_loss_forward", table=_core_only_table)
def nll_loss_forward(x, target, weight, reduction, ignore_index):
    """Gather each row's target log-probability, negated; ignored targets count 0 and weigh 0."""
    channel = 1 if x.dim() >= 2 else 0
    if weight is not None:
        shape = [1] * x.dim()
        shape[channel] = weight.shape[0]
        w = aten.view.default(weight, shape) if x.dim() > 1 else weight
        x = x * w
    safe = aten.where.self(aten.ne.Scalar(target, ignore_index), target, _zero_like(target))
    safe = aten.unsqueeze.default(safe, channel)
    result = aten.neg.default(aten.squeeze.dims(aten.gather.default(x, channel, safe), [channel]))
    result = aten.where.self(aten.ne.Scalar(target, ignore_index), result, _zero_like(result))
    if reduction == 0 and x.dim() > 1:
        return result, aten.full.default([], 0.0, dtype=x.dtype, layout=strided, device=x.device,
                                         pin_memory=False)
    if weight is not None:
        picked = aten.gather.default(aten.expand.default(w, list(x.shape)), channel, safe)
        picked = aten.squeeze.dims(picked, [channel])
        picked = aten.where.self(aten.ne.Scalar(target, ignore_index), picked, _zero_like(picked))
        total = aten.sum.dim_IntList(picked, [])
    else:
        counted = aten.sum.dim_IntList(aten.ne.Scalar(target, ignore_index), [])
        total = aten._to_copy.default(counted, dtype=x.dtype, device=x.device)
    if reduction == 2:
        result = aten.sum.dim_IntList(result, [])
    elif reduction == 1:
        result = aten.div.Tensor(aten.sum.dim_IntList(result, []), total)
    return result, total


def _zero_like(x):
    return aten.scalar_tensor.default(0, dtype=x.dtype, layout=strided, device=x.device)


@register_decomposition("aten::index_add", table=_core_only_table)
def index_add(x, dim, index, source, *, alpha=1):
    """An accumulating ``index_put`` at ``index`` along ``dim``."""
    dim = wrap_dim(dim, x.dim())
    if alpha != 1:
        source = source * alpha
    scalar = x.dim() == 0
    base = aten.unsqueeze.default(x, 0) if scalar else x
    out = aten.index_put.default(base, [None] * dim + [index], source, True)
    return aten.squeeze.dim(out, 0) if scalar else out.contiguous()
