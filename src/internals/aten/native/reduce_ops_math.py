"""More reductions: any, all, count_nonzero, var, std, logsumexp, the vector norms
(``aten/src/ATen/native/ReduceOps.cpp``, ``LinearAlgebra.cpp`` for ``linalg_vector_norm``).

Each is written with the reductions of ``reduce_ops`` (sum, amax, amin) and elementwise ops, so
it runs the CPU and CUDA reduction loops those do. float16 and bfloat16 inputs compute in
float32 and round once at the end, as torch's reductions accumulate in float32. any, all and
the vector norms (``linalg_vector_norm``, ``norm.ScalarOpt_dim``) are structured, as torch's: a
meta step (the checks, the reduced output) and an impl step writing the values into it.
"""
import math
import warnings

from ...c10 import scalar_type as st
from ...c10.wrap_dim import wrap_dim
from .. import dispatcher
from .copy import to
from .dispatch_stub import refuse_unlisted_dtypes
from .elementwise import where
from .reduce_ops import make_reduction, normalize_dims
from .structured import structured
from .tensor_factories import wrap_scalar


def _bool_reduce(x, dims, keepdim, hits):
    """``any``/``all``: count the elements that decide the answer."""
    count = _sum(hits(x), dims, keepdim)
    return dispatcher.call("gt.Scalar" if hits is _nonzero else "eq.Scalar", count, 0)


def _nonzero(x):
    return dispatcher.call("ne.Scalar", x, 0)


def _zero(x):
    return dispatcher.call("eq.Scalar", x, 0)


def _sum(x, dims, keepdim=False):
    return dispatcher.call("sum.dim_IntList", x, dims, keepdim)


# ---- any and all: TORCH_META_FUNC2(any, dim), (any, dims), TORCH_META_FUNC(any), and all's
def _meta_any_all(name, out, self, dim, keepdim):
    """``check_allany_for_meta``: ``out`` must be bool or uint8, and is the result's dtype; the
    functional result is bool, uint8 for a uint8 input."""
    if out is not None and out.dtype not in (st.bool_, st.uint8):
        raise RuntimeError(f"{name} only supports bool tensor for result, got: {out.dtype.torch_name}")
    dtype = out.dtype if out is not None else st.uint8 if self.dtype is st.uint8 else st.bool_
    return make_reduction(out, self, dim, keepdim, dtype, reads_input_first=True)


def _impl_any_all(r, hits):
    """The count of the deciding elements, compared with zero, into the output."""
    return dispatcher.call("copy_", r.result, _bool_reduce(r.self, r.dims, r.keepdim, hits))


def meta_any_dim(out, self, dim, keepdim=False):
    return _meta_any_all("any", out, self, dim, keepdim)


def impl_any_dim(r, self, dim, keepdim=False):
    return _impl_any_all(r, _nonzero)


def meta_any_dims(out, self, dim=None, keepdim=False):
    return _meta_any_all("any", out, self, dim, keepdim)


def impl_any_dims(r, self, dim=None, keepdim=False):
    return _impl_any_all(r, _nonzero)


def meta_any_all(out, self):
    return _meta_any_all("any", out, self, None, False)


def impl_any_all(r, self):
    return _impl_any_all(r, _nonzero)


def meta_all_dim(out, self, dim, keepdim=False):
    return _meta_any_all("all", out, self, dim, keepdim)


def impl_all_dim(r, self, dim, keepdim=False):
    return _impl_any_all(r, _zero)


def meta_all_dims(out, self, dim=None, keepdim=False):
    return _meta_any_all("all", out, self, dim, keepdim)


def impl_all_dims(r, self, dim=None, keepdim=False):
    return _impl_any_all(r, _zero)


def meta_all_all(out, self):
    return _meta_any_all("all", out, self, None, False)


def impl_all_all(r, self):
    return _impl_any_all(r, _zero)


# any.out, any.dims_out, any.all_out and all's: the functional overloads are derived from them
any_dim_out, any_dims_out = structured(meta_any_dim, impl_any_dim), structured(meta_any_dims, impl_any_dims)
any_all_out = structured(meta_any_all, impl_any_all)
all_dim_out, all_dims_out = structured(meta_all_dim, impl_all_dim), structured(meta_all_dims, impl_all_dims)
all_all_out = structured(meta_all_all, impl_all_all)


def count_nonzero(x, dim=None):
    refuse_unlisted_dtypes(f"nonzero_count_{x.device.type}", x, complex32=False)
    return _sum(_nonzero(x), normalize_dims(dim, x.dim()))


def _count(x, dims):
    n = 1
    for d in dims:
        n *= x.shape[d]
    return n


def _check_statistic_input(x, name):
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


def _float_input(x, name):
    _check_statistic_input(x, name)
    return to(x, st.float32) if x.dtype.is_reduced_float else x


def _var_in_opmath(x, dim, correction, keepdim):
    """Two passes, as a textbook: the mean, then the mean squared deviation from it, divided by
    N - correction (torch uses Welford's one pass; both are exact to rounding). A 16-bit input
    stays in float32 here, so that std takes its root before the one rounding; a complex one is
    the variance of its real part plus that of its imaginary part (a real result)."""
    if x.dtype.is_complex:
        parts = (_var_in_opmath(dispatcher.call(part, x), dim, correction, keepdim) for part in ("real", "imag"))
        return dispatcher.call("add.Tensor", *parts)
    xc = _float_input(x, "std and var")
    dims = normalize_dims(dim, x.dim(), in_order=True)
    n = _count(x, dims)
    correction = 1 if correction is None else correction
    if n - correction <= 0:
        warnings.warn("var(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    dev = dispatcher.call("sub.Tensor", xc, dispatcher.call("mean.dim", xc, dims, True))
    squares = _sum(dispatcher.call("mul.Tensor", dev, dev), dims, keepdim)
    return dispatcher.call("div.Tensor", squares, wrap_scalar(max(n - correction, 0)))


def _refuse_float8_statistic(x, dim):
    """``std_var_out``'s dispatch lists no float8 type: reducing to one value it names
    ``std_var_all``, else its kernel, ``std`` (var's too)."""
    if x.dtype.is_float8:
        if len(normalize_dims(dim, x.dim())) == x.dim() or x.numel() == 0 or x.dim() <= 1:
            raise RuntimeError(f"std_var_all: Unsupported dtype {x.dtype.torch_name}")
        raise NotImplementedError(f'"std_{x.device.type}" not implemented for \'{x.dtype.torch_name}\'')


def var_correction(x, dim=None, *, correction=None, keepdim=False):
    _refuse_float8_statistic(x, dim)
    return to(_var_in_opmath(x, dim, correction, keepdim), st.to_real(x.dtype))


def std_correction(x, dim=None, *, correction=None, keepdim=False):
    _refuse_float8_statistic(x, dim)
    return to(dispatcher.call("sqrt", _var_in_opmath(x, dim, correction, keepdim)), st.to_real(x.dtype))


def _correction(unbiased):
    return 1 if unbiased else 0


# CompositeImplicitAutograd overloads: the ``unbiased`` flag is a correction of 1 or 0. The
# var_mean/std_mean kernels compute the two statistics below autograd, so the pair gets one
# node (VarMeanBackward0, StdMeanBackward0), as torch's fused kernel does.
def _statistic(name):
    def all_dims(x, unbiased=True):
        return dispatcher.call(name + ".correction", x, None, correction=_correction(unbiased))

    def over_dims(x, dim, unbiased=True, keepdim=False):
        return dispatcher.call(name + ".correction", x, dim, correction=_correction(unbiased), keepdim=keepdim)
    for f, suffix in ((all_dims, ""), (over_dims, "_dim")):
        f.__name__ = f.__qualname__ = name + suffix
    return all_dims, over_dims


def _with_mean(name):
    def kernel(x, dim=None, *, correction=None, keepdim=False):
        _check_statistic_input(x, name + "_mean")
        if x.dtype.is_float8:       # ``std_var_mean_out`` takes no all-reduce road: its kernel's name
            raise NotImplementedError(f'"std_{x.device.type}" not implemented for \'{x.dtype.torch_name}\'')
        stat = dispatcher.call(name + ".correction", x, dim, correction=correction, keepdim=keepdim)
        return stat, dispatcher.call("mean.dim", x, dim, keepdim)
    kernel.__name__ = kernel.__qualname__ = name + "_mean_correction"
    return kernel


var, var_dim = _statistic("var")
std, std_dim = _statistic("std")
var_mean, var_mean_dim = _statistic("var_mean")
std_mean, std_mean_dim = _statistic("std_mean")
var_mean_correction, std_mean_correction = _with_mean("var"), _with_mean("std")


def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) shifted by the max, so that exp cannot overflow (an infinite max shifts
    by 0: inf - inf would be NaN)."""
    if x.dtype.is_complex:      # the cast below would drop the imaginary parts
        raise NotImplementedError("internals: logsumexp is not implemented for complex tensors")
    xc = to(x, _float_dtype(x))
    xc = to(xc, st.float32) if xc.dtype.is_reduced_float else xc
    dims = normalize_dims(dim, x.dim())
    if x.numel() == 0:
        return to(_log_sum_exp(xc, dims, keepdim), _float_dtype(x))
    shift = _finite(dispatcher.call("amax", xc, dims, True))
    out = dispatcher.call("add.Tensor", _log_sum_exp(dispatcher.call("sub.Tensor", xc, shift), dims, True), shift)
    if not keepdim:
        out = dispatcher.call("squeeze.dims", out, dims)
    return to(out, _float_dtype(x))


def _log_sum_exp(x, dims, keepdim):
    return dispatcher.call("log", _sum(dispatcher.call("exp", x), dims, keepdim))


def _finite(t):
    """``t`` with its infinities replaced by 0."""
    return where(dispatcher.call("eq.Scalar", dispatcher.call("abs", t), math.inf), wrap_scalar(0), t)


def _float_dtype(x):
    return x.dtype if x.dtype.is_floating_point else st.get_default_dtype()


def _ord_text(ord):
    """A Scalar ord as torch prints it: ``2``, ``-1``, ``inf``, ``0.5``."""
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def meta_linalg_vector_norm(out, self, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``TORCH_META_FUNC(linalg_vector_norm)`` (LinearAlgebra.cpp): a floating or complex input;
    a negative or infinite ord refused on an empty input, unless it reduces only non-empty
    dims (no identity to start from); the ``dtype`` asked for checked
    (``check_linalg_norm_dtype``); the output the reduction's shape in the real type of that
    dtype (or self's), contiguous, or ``out=`` checked and resized."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {self.dtype.torch_name}")
    if self.numel() == 0 and (ord < 0 or ord == math.inf):
        if dim is None or (not isinstance(dim, int) and len(dim) == 0):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_text(ord)} norm on an empty tensor "
                               "because the operation does not have an identity")
        for d in ([dim] if isinstance(dim, int) else dim):
            if self.shape[wrap_dim(d, self.dim())] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_text(ord)} norm on the dimension "
                                   f"{d}because this dimension is empty and the operation does not have an identity")
    if dtype is not None:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{dtype.torch_name}")
        if self.dtype.is_complex != dtype.is_complex:
            kind = "complex" if self.dtype.is_complex else "real"
            raise RuntimeError(f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got "
                               f"{dtype.torch_name}")
        if st.promote_types(self.dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({self.dtype.torch_name}) should be "
                               f"convertible without narrowing to the specified dtype ({dtype.torch_name})")
    dims = normalize_dims(dim, self.dim(), in_order=True)
    return make_reduction(out, self, dims, keepdim, st.to_real(dtype or self.dtype), reads_input_first=True)


def impl_linalg_vector_norm(r, self, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``TORCH_IMPL_FUNC(linalg_vector_norm_out)``: the norm computed, then written into the
    output."""
    if r.self.dtype.is_float8 and dtype is None:
        refuse_unlisted_dtypes(f"norm_{r.self.device.type}", r.self, complex32=False, limited_unsigned=False)
    return dispatcher.call("copy_", r.result, _vector_norm(r.self, ord, r.dims, keepdim, dtype))


linalg_vector_norm_out = structured(meta_linalg_vector_norm, impl_linalg_vector_norm)


def _vector_norm(x, ord, dims, keepdim, dtype):
    """sum(|x|^ord)^(1/ord) over ``dims``; ord = inf, -inf take max/min |x|, ord = 0 counts the
    nonzeros."""
    xc = to(x, dtype) if dtype is not None else x
    xc = to(xc, st.float32) if xc.dtype.is_reduced_float else xc
    xc = to(xc, st.complex64) if xc.dtype is st.complex32 else xc     # its opmath type, complex<float>
    a = dispatcher.call("abs", xc)
    if ord == math.inf:
        out = dispatcher.call("amax", a, dims, keepdim)
    elif ord == -math.inf:
        out = dispatcher.call("amin", a, dims, keepdim)
    elif ord == 0:
        out = to(_sum(_nonzero(a), dims, keepdim), a.dtype)
    elif ord == 1:
        out = _sum(a, dims, keepdim)
    elif ord == 2:
        out = dispatcher.call("sqrt", _sum(dispatcher.call("mul.Tensor", a, a), dims, keepdim))
    else:
        powers = dispatcher.call("pow.Tensor_Scalar", a, ord)
        out = dispatcher.call("pow.Tensor_Scalar", _sum(powers, dims, keepdim), 1.0 / ord)
    # a complex input's norm is real: the norm of the moduli, in the matching real dtype
    return to(out, st.to_real(dtype or x.dtype))


def norm(x, p=2):
    """``norm.Scalar``: a vector norm with an autograd node of its own (NormBackward0), as
    torch's; only C++ callers such as ``pairwise_distance`` reach it, since ``torch.norm`` and
    ``Tensor.norm`` are Python that calls ``linalg.vector_norm``."""
    return dispatcher.call("linalg_vector_norm", x, p, None, False)


def meta_norm(out, self, p, dim, keepdim=False):
    """``TORCH_META_FUNC2(norm, ScalarOpt_dim)`` (ReduceOps.cpp): a floating or complex input;
    then, as its impl step runs ``linalg_vector_norm.out``, that operator's meta step (the
    output in self's real type)."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{self.dtype.torch_name} instead.")
    return meta_linalg_vector_norm(out, self, 2 if p is None else p, dim, keepdim)


def impl_norm(r, self, p, dim, keepdim=False):
    """``TORCH_IMPL_FUNC(norm_out)`` (``impl_func_norm``): ``linalg_vector_norm.out``'s impl, a
    missing ``p`` being 2."""
    return impl_linalg_vector_norm(r, self, 2 if p is None else p, dim, keepdim)


norm_out = structured(meta_norm, impl_norm)


def meta_norm_dtype(out, self, p, dim, keepdim, *, dtype):
    """``TORCH_META_FUNC2(norm, ScalarOpt_dim_dtype)``: a floating or complex ``dtype``; then, as
    for ``norm.out``, the meta step of ``linalg_vector_norm.out``, which its impl step runs with
    that dtype (the output in it, its checks of the input against it)."""
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"norm(): the desired output dtype should be either floating point or complex. Got "
                           f"{dtype.torch_name} instead.")
    result = meta_linalg_vector_norm(out, self, 2 if p is None else p, dim, keepdim, dtype=dtype)
    if out is None and dtype.is_complex:
        # torch's meta step makes the output in ``dtype`` itself, which the impl step's
        # ``linalg_vector_norm.out`` then refuses: a norm is real
        raise RuntimeError(f"Expected out tensor to have dtype {st.type_meta_name(st.to_real(dtype))}, but got "
                           f"{st.type_meta_name(dtype)} instead")
    return result


def impl_norm_dtype(r, self, p, dim, keepdim, *, dtype):
    """``TORCH_IMPL_FUNC(norm_dtype_out)``: ``impl_func_norm`` with the dtype."""
    return impl_linalg_vector_norm(r, self, 2 if p is None else p, dim, keepdim, dtype=dtype)


norm_dtype_out = structured(meta_norm_dtype, impl_norm_dtype)


def norm_of_dtype(x, p, *, dtype):
    """``norm.ScalarOpt_dtype`` (``at::native::norm``'s overload with a dtype): the norm over every
    dim, ``norm.ScalarOpt_dim_dtype`` with no dims."""
    return dispatcher.call("norm.ScalarOpt_dim_dtype", x, p, [], False, dtype=dtype)


def special_logsumexp(x, dim, keepdim=False):
    """torch.special's name for ``logsumexp`` (``ReduceOps.cpp``), CompositeImplicitAutograd."""
    return dispatcher.call("logsumexp", x, dim, keepdim)
