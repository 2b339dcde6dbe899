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
from ..c10.scalar_type import bfloat16, float16, float32, promote_types, uint8
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
