"""Autocast: mixed precision as a dispatch layer (``aten/src/ATen/autocast_mode.cpp``).

Every CPU/CUDA tensor carries an Autocast key, but the thread-local excluded set holds the
Autocast keys until ``autocast`` takes them out. Then the operators on a policy list get an
Autocast kernel: matrix products run in lower precision (bfloat16 on the CPU, float16 on CUDA),
and on CUDA the ones that need range (exp, log, sum, softmax, ...) are computed in float32. Every
other operator falls through. Each kernel casts its floating-point arguments and redispatches
below its own key, with its key excluded so the operators it reaches are not cast again.

A leaf that requires grad (a model's weight) is cast once per autocast region, not once per
use: the cast is cached, so every operator that reads the weight shares one cast and one
``ToCopyBackward0`` node, and the cache is emptied when the outermost region exits
(``cached_cast`` and ``clear_cache`` in autocast_mode.cpp).
"""
import threading
import weakref

from ..aten import dispatcher
from ..c10 import scalar_type as st
from ..c10.device import device
from ..c10.dispatch_key import DispatchKey, DispatchKeySet, autocast_key_for
from ..c10.local_dispatch_key_set import exclude_keys, tls

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_enabled", "register_autocast_kernels",
           "clear_autocast_cache", "is_autocast_cache_enabled",
           "LOWER_PRECISION_FP", "FP32", "PROMOTE", "BANNED", "lower_precision_call"]

# The policy lists of autocast_mode.cpp, for the operators internals has.
LOWER_PRECISION_FP = {"cpu": ("conv1d", "conv1d.padding", "conv2d", "conv2d.padding", "conv3d", "conv3d.padding",
                              "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "conv_tbc", "mm",
                              "bmm", "matmul", "baddbmm", "addmm", "addbmm", "linear",
                              "prelu", "linalg_vecdot", "mkldnn_rnn_layer"),
                      "cuda": ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d.input",
                               "conv_transpose3d.input", "convolution", "conv_tbc", "mm",
                               "bmm", "matmul", "addmv", "addr", "baddbmm", "addbmm", "einsum", "addmm", "linear", "mv",
                               "prelu", "linalg_vecdot", "linalg_multi_dot", "chain_matmul")}
# (torch casts some of the cuda fp32 ops, norm among them, by passing dtype=float32 instead of casting
# the inputs, "fp32_append_dtype"; for a float16 input the two agree.)
FP32 = {"cpu": ("prod", "prod.dim_int", "polar", "view_as_complex", "mse_loss", "binary_cross_entropy",
                "binary_cross_entropy_with_logits", "trace", "inverse", "linalg_inv", "linalg_inv_ex",
                "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
                "cdist", "smooth_l1_loss", "huber_loss", "kl_div",
                # the decompositions and quantiles: LAPACK and sorting in float32 at least
                "cholesky", "linalg_cholesky", "linalg_cholesky_ex", "cholesky_solve", "cholesky_inverse",
                "qr", "linalg_qr", "svd", "linalg_svd",
                "linalg_svdvals", "linalg_solve", "linalg_lstsq", "linalg_eig", "linalg_eigh", "linalg_eigvals",
                "linalg_eigvalsh",
                "pinverse", "quantile", "quantile.scalar", "nanquantile",
                "nanquantile.scalar", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
                # the losses torch lists for fp32 that internals declares as operators
                "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "poisson_nll_loss",
                "triplet_margin_loss", "soft_margin_loss", "multi_margin_loss", "ctc_loss.IntList", "ctc_loss.Tensor",
                "multilabel_margin_loss", "multilabel_margin_loss_forward", "linalg_householder_product", "orgqr",
                "geqrf",
                "avg_pool3d", "adaptive_avg_pool3d", "max_pool3d", "adaptive_max_pool3d", "max_unpool2d",
                "max_unpool3d", "linalg_tensorinv", "linalg_tensorsolve",
                "linalg_cond", "linalg_cond.p_str", "linalg_matrix_rank", "linalg_matrix_rank.tol_tensor",
                "linalg_matrix_rank.atol_rtol_tensor", "linalg_matrix_rank.atol_rtol_float",
                "fractional_max_pool2d", "fractional_max_pool3d", "triangular_solve", "lu_solve"),
        "cuda": ("acos", "asin", "cosh", "exp", "expm1", "erfinv", "log", "log10", "log2", "log1p", "rsqrt", "sinh",
                 "tan", "reciprocal", "mse_loss", "binary_cross_entropy_with_logits",
                 "pow.Tensor_Tensor", "pow.Tensor_Scalar", "pow.Scalar", "softplus", "sum", "sum.dim_IntList",
                 "prod", "prod.dim_int", "cumprod", "cumsum", "logsumexp", "norm.Scalar", "norm.ScalarOpt_dim",
                 "linalg_vector_norm", "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "softmax.int",
                 "log_softmax.int", "layer_norm", "native_layer_norm", "rms_norm",
                 "cdist", "pdist", "group_norm", "cosine_similarity", "kl_div", "smooth_l1_loss", "huber_loss",
                 "upsample_nearest1d", "upsample_nearest2d", "upsample_linear1d", "upsample_bilinear2d",
                 "upsample_nearest3d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d",
                 "_upsample_nearest_exact3d", "upsample_trilinear3d", "upsample_bicubic2d", "_upsample_bilinear2d_aa",
                 "_upsample_bicubic2d_aa", "grid_sampler",
                 "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "poisson_nll_loss",
                 "triplet_margin_loss", "soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss", "renorm")}

# "promote": the floating-point arguments (lists included) cast to the widest of their dtypes.
PROMOTE = {"cpu": ("cat", "stack", "index_copy"),
           "cuda": ("addcdiv", "addcmul", "atan2", "bilinear", "dot", "vdot", "index_put", "scatter_add", "cross",
                    "tensordot")}


# "banned" (cuda): refused, naming the safe alternative (``autocast_mode.cpp``'s ``binary_cross_entropy_banned``).
BANNED = {"cpu": (), "cuda": ("binary_cross_entropy",)}
_BANNED_MESSAGE = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
                   "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
                   "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
                   "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
                   "safe to autocast.")


def _banned_kernel(*args, **kwargs):
    raise RuntimeError(_BANNED_MESSAGE)


class _State(threading.local):
    def __init__(self):
        self.dtype = {"cpu": st.bfloat16, "cuda": st.float16}
        self.nesting = 0            # autocast regions entered and not yet left, on this thread
        self.cache_enabled = True
        # id(leaf's TensorImpl) -> (weak reference to that impl, its cast): the weak reference
        # tells a live leaf from a dead one whose id was reused, as torch's weakref key does
        self.cached_casts = {}


_state = _State()


def _autocast_device(device_type):
    """The device type of a device string ("cuda:0" is "cuda"), torch's RuntimeError for a string
    that names no device, and for the meta device, which has no autocast."""
    kind = device(device_type).type
    if kind == "meta":
        raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type")
    return kind


def get_autocast_dtype(device_type):
    return _state.dtype[_autocast_device(device_type)]


def is_autocast_enabled(device_type="cuda"):
    return autocast_key_for(_autocast_device(device_type)) not in tls.excluded


def is_autocast_cache_enabled():
    return _state.cache_enabled


def clear_autocast_cache():
    """``clear_cache``: forget every cached cast (the outermost region's exit calls it)."""
    _state.cached_casts.clear()


class autocast:
    """``with autocast("cpu"):`` -- let the Autocast key of that device into every call."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device_type, self.enabled = device_type, enabled
        self.dtype = dtype or get_autocast_dtype(device_type)
        self.cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled

    def __enter__(self):
        self._saved = (tls.excluded, _state.dtype[self.device_type], _state.cache_enabled)
        key = DispatchKeySet(autocast_key_for(self.device_type))
        tls.excluded = tls.excluded - key if self.enabled else tls.excluded | key
        _state.dtype[self.device_type] = self.dtype
        _state.cache_enabled = self.cache_enabled
        _state.nesting += 1
        return self

    def __exit__(self, *exc):
        tls.excluded, _state.dtype[self.device_type], _state.cache_enabled = self._saved
        _state.nesting -= 1
        if _state.nesting == 0:         # torch.autocast's exit: autocast_decrement_nesting() == 0
            clear_autocast_cache()


def _eligible(t, device_type):
    """``is_eligible`` in autocast_mode.h: a floating-point tensor on this device, not float64."""
    return (hasattr(t, "_impl") and t.dtype.is_floating_point and t.dtype is not st.float64
            and t.device.type == device_type)


def _cached_cast(t, target, device_type):
    """``cached_cast``: ``t.to(target)``, but a float32 leaf that requires grad, cast to the
    region's lower precision, is cast once and the cast reused, so that all its uses share one
    backward node."""
    if not _eligible(t, device_type) or t.dtype is target:
        return t
    cacheable = (target is _state.dtype[device_type] and t.dtype is st.float32 and _state.cache_enabled
                 and t.requires_grad and t.is_leaf and t._base is None)
    if not cacheable:
        return t.to(target)
    impl = t._impl
    hit = _state.cached_casts.get(id(impl))
    if hit is not None and hit[0]() is impl:
        return hit[1]
    cast = t.to(target)
    _state.cached_casts[id(impl)] = (weakref.ref(impl), cast)
    return cast


def _autocast_kernel(op, key, device_type, to_dtype):
    def kernel(keys, *args, **kwargs):
        target = to_dtype or _state.dtype[device_type]
        args = [_cached_cast(a, target, device_type) for a in args]
        with exclude_keys(DispatchKeySet(key)):
            return op.redispatch(keys.below(key), *args, **kwargs)
    kernel.__name__ = kernel.__qualname__ = f"autocast_{'fp32' if to_dtype else 'lower_precision_fp'}"
    return kernel


def lower_precision_call(fn, device_type, *args, **kwargs):
    """``fn(*args, **kwargs)`` as a lower_precision_fp kernel runs its operator: the eligible
    tensor arguments cast to the region's dtype, and autocast off inside. For a function internals
    writes in Python where torch registers an operator with an autocast kernel
    (``scaled_dot_product_attention``, ``autocast_mode.cpp``)."""
    target = _state.dtype[device_type]
    args = [_cached_cast(a, target, device_type) for a in args]
    kwargs = {k: _cached_cast(v, target, device_type) for k, v in kwargs.items()}
    with exclude_keys(DispatchKeySet(autocast_key_for(device_type))):
        return fn(*args, **kwargs)


def _promote_kernel(op, key, device_type):
    """``promote_type`` in autocast_mode.h: one dtype for all floating-point tensor arguments."""
    def floating(t):
        return hasattr(t, "_impl") and t.dtype.is_floating_point and t.device.type == device_type

    def kernel(keys, *args, **kwargs):
        flat = [t for a in args for t in (a if isinstance(a, (list, tuple)) else [a])]
        target = None
        for t in filter(floating, flat):
            target = t.dtype if target is None else st.promote_types(target, t.dtype)

        def cast(a):
            if isinstance(a, (list, tuple)):
                return [cast(t) for t in a]
            return a.to(target) if floating(a) else a
        with exclude_keys(DispatchKeySet(key)):
            return op.redispatch(keys.below(key), *[cast(a) for a in args], **kwargs)
    kernel.__name__ = kernel.__qualname__ = "autocast_promote"
    return kernel


def register_autocast_kernels():
    for device_type, key in (("cpu", DispatchKey.AutocastCPU), ("cuda", DispatchKey.AutocastCUDA)):
        for name in LOWER_PRECISION_FP[device_type]:
            op = dispatcher.find(name)
            dispatcher.impl(op.name, key.name, dispatcher.KernelFunction(
                _autocast_kernel(op, key, device_type, None), with_keyset=True))
        for name in PROMOTE[device_type]:
            op = dispatcher.find(name)
            dispatcher.impl(op.name, key.name, dispatcher.KernelFunction(
                _promote_kernel(op, key, device_type), with_keyset=True))
        for name in FP32[device_type]:
            op = dispatcher.find(name)
            dispatcher.impl(op.name, key.name, dispatcher.KernelFunction(
                _autocast_kernel(op, key, device_type, st.float32), with_keyset=True))
        for name in BANNED[device_type]:
            dispatcher.impl(dispatcher.find(name).name, key.name, dispatcher.KernelFunction(_banned_kernel))
