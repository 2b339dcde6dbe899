"""Weight normalization's operators (``aten/src/ATen/native/WeightNorm.cpp`` and
``native/cpu/WeightNormKernel.cpp``): the norm of a tensor over every dimension but one, and
``w = g * v / ||v||`` that ``nn.utils.weight_norm`` and ``parametrizations.weight_norm`` read
their weight through.

``_weight_norm`` is CompositeImplicitAutograd, as torch's: for ``dim`` first or last it calls the
fused kernel ``_weight_norm_interface`` (which returns the norms too, kept for its backward, so
autograd records one ``WeightNormInterfaceBackward0``); for a middle ``dim`` (or ``-1``, the
whole tensor) it is ``v * (g / norm_except_dim(v))``, recorded operator by operator. The fused
kernel's backward is ``_weight_norm_interface_backward``, or, when the backward itself is being
differentiated, ``_weight_norm_differentiable_backward``: the same formula in differentiable
operators.
"""
from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from .. import dispatcher
from .copy import contiguous, to

__all__ = ["norm_except_dim", "_weight_norm", "weight_norm_cpu", "weight_norm_backward_cpu",
           "_weight_norm_differentiable_backward"]

call = dispatcher.call


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of each slice ``v.select(dim, i)``, shaped to broadcast against ``v``
    (size 1 everywhere but ``dim``); ``dim=-1`` means the norm of the whole tensor, a scalar.
    torch's steps: a contiguous copy viewed as a matrix, its row (or column) norms, viewed back."""
    if dim == -1:
        return call("norm.Scalar", v, pow)
    last = v.dim() - 1
    if dim != 0 and dim != last:
        # A middle dimension: move it to the front, reduce there, and move it back.
        moved = call("norm_except_dim", call("transpose.int", v, 0, dim), pow, 0)
        return call("transpose.int", moved, 0, dim)
    output_size = [1] * v.dim()
    output_size[dim] = v.shape[dim]
    matrix = [v.shape[0], -1] if dim == 0 else [-1, v.shape[last]]
    rows = call("view", contiguous(v), matrix)
    return call("view", call("norm.ScalarOpt_dim", rows, pow, [1 if dim == 0 else 0]), output_size)


def _weight_norm(v, g, dim=0):
    if v.device != g.device:
        raise RuntimeError("weight_norm: expected v_in and g_in to be on the same device, but v_in is on "
                           f"{v.device} and g_in is on {g.device}")
    v, g = contiguous(v), contiguous(g)
    if dim == 0 or dim == v.dim() - 1:
        return call("_weight_norm_interface", v, g, dim)[0]
    return call("mul.Tensor", v, call("div.Tensor", g, call("norm_except_dim", v, 2, dim)))


def _as_matrix(t, dim):
    """``t`` (contiguous) as the kernel walks it: M rows of N, the normalised slices being the rows
    when ``dim`` is first, the columns when it is last."""
    if dim == 0:
        return call("view", t, [t.shape[0], -1])
    return call("view", t, [-1, t.shape[-1]])


def _norm_dtype(g):
    """The norms are kept in float for 16-bit weights, as the CUDA kernel keeps them."""
    return st.float32 if g.dtype in (st.float16, st.bfloat16) else g.dtype


def _check_kernel_dtypes(name, v, *others):
    if not v.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{v.dtype.torch_name}'")
    for t in others:
        if t.dtype != v.dtype:
            raise RuntimeError(f"expected scalar type {v.dtype.torch_name} but found {t.dtype.torch_name}")


def weight_norm_cpu(v, g, dim=0):
    """``(w, norms)``: ``w`` contiguous like ``v``; the norms laid out as ``g`` (one per slice),
    in the op-math type. Per slice: ``norm = sqrt(sum v²)``, then ``w = v * (g / norm)``."""
    if dim != 0 and dim != v.dim() - 1:
        raise RuntimeError("fused kernels can only be applied for first or last dim")
    _check_kernel_dtypes("weight_norm_kernel", v, g)
    acc = st.opmath_type(v.dtype)
    w = call("empty_like", v, memory_format=contiguous_format)
    norm = call("empty_strided", list(g.shape), list(g.stride()), dtype=_norm_dtype(g), device=g.device)
    if v.numel() == 0:
        return w, call("zero_", norm)
    axis = 1 if dim == 0 else 0
    x = _as_matrix(to(contiguous(v), acc), dim)
    norms = call("sqrt", call("sum.dim_IntList", call("mul.Tensor", x, x), [axis], False))
    per_slice = to(call("reshape", contiguous(g), [-1]), acc)
    scale = call("div.Tensor", per_slice, norms)
    scale = call("unsqueeze", scale, axis)
    call("copy_", w, call("view", to(call("mul.Tensor", x, scale), v.dtype), list(v.shape)))
    call("copy_", norm, call("view", norms, list(g.shape)))
    return w, norm


def _check_saved(grad_w, saved_v, saved_g, saved_norms, names):
    for t, name in zip((grad_w, saved_v, saved_g, saved_norms), names):
        if name and not t.is_contiguous():
            raise RuntimeError(f"{name} must be contiguous")


def weight_norm_backward_cpu(grad_w, saved_v, saved_g, saved_norm, dim):
    """``(grad_v, grad_g)``, contiguous: with ``s`` the per-slice sum of ``grad_w * v``,
    ``grad_g = s / norm`` and ``grad_v = a * grad_w - b * v``, where ``a = g / norm`` and
    ``b = a * grad_g / norm``, all in the op-math type."""
    _check_saved(grad_w, saved_v, saved_g, saved_norm, (None, "saved_v", "saved_g", "saved_norm"))
    if dim != 0 and dim != saved_v.dim() - 1:
        raise RuntimeError("fused kernels can only be applied for first or last dim")
    _check_kernel_dtypes("weight_norm_backward_kernel", saved_v, grad_w, saved_g)
    acc = saved_norm.dtype
    grad_v = call("empty_like", saved_v, memory_format=contiguous_format)
    grad_g = call("empty_like", saved_g, memory_format=contiguous_format)
    if saved_v.numel() == 0:
        return grad_v, call("zero_", grad_g)
    axis = 1 if dim == 0 else 0
    gw = _as_matrix(to(contiguous(grad_w), acc), dim)
    v = _as_matrix(to(saved_v, acc), dim)
    sums = call("sum.dim_IntList", call("mul.Tensor", gw, v), [axis], False)
    norms = call("reshape", saved_norm, [-1])
    g_acc = call("div.Tensor", sums, norms)
    a = call("div.Tensor", to(call("reshape", saved_g, [-1]), acc), norms)
    b = call("div.Tensor", call("mul.Tensor", a, g_acc), norms)
    a, b = call("unsqueeze", a, axis), call("unsqueeze", b, axis)
    result = call("sub.Tensor", call("mul.Tensor", a, gw), call("mul.Tensor", b, v))
    call("copy_", grad_v, call("view", to(result, saved_v.dtype), list(saved_v.shape)))
    call("copy_", grad_g, call("view", to(g_acc, saved_g.dtype), list(saved_g.shape)))
    return grad_v, grad_g


def _weight_norm_differentiable_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    """The fused backward's formula in differentiable operators, for a backward that is itself
    differentiated (``create_graph=True``): torch's steps, each recorded by autograd."""
    _check_saved(grad_w, saved_v, saved_g, saved_norms, ("grad_w", "saved_v", "saved_g", "saved_norms"))
    last = saved_v.dim() - 1
    if dim != 0 and dim != last:
        raise RuntimeError("Expected dim to be the first or last dimension")
    norms = to(saved_norms, saved_g.dtype)
    bcast = [1] * saved_v.dim()
    bcast[dim] = saved_v.shape[dim]
    products = call("mul.Tensor", grad_w, saved_v)
    if dim == 0:
        sums = call("sum.dim_IntList", call("view", products, [saved_v.shape[0], -1]), [1], False)
    else:
        sums = call("sum.dim_IntList", call("view", products, [-1, saved_v.shape[last]]), [0], False)
    per_dim_sums = call("view", sums, bcast)
    ratio = call("div.Tensor", per_dim_sums, call("mul.Tensor", norms, norms))
    grad_v = call("mul.Tensor", call("div.Tensor", saved_g, norms),
                  call("sub.Tensor", grad_w, call("mul.Tensor", saved_v, ratio)))
    grad_g = call("div.Tensor", per_dim_sums, norms)
    return grad_v, grad_g
