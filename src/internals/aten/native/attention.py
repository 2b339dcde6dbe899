"""Scaled dot-product attention's fused CPU kernel and the choice of backend
(``aten/src/ATen/native/transformers/attention.cpp``, ``sdp_utils_cpp.cpp`` and
``aten/src/ATen/native/cpu/FlashAttentionKernel.cpp``).

On the CPU torch has two backends for ``scaled_dot_product_attention``: the *math* one, a
composite of matmul, softmax and matmul that autograd records op by op, and a fused
*flash-attention* kernel, ``_scaled_dot_product_flash_attention_for_cpu``, one operator with
its own backward operator. ``_fused_sdp_choice_cpp`` picks flash whenever its gates pass
(4-d dense inputs of one floating dtype, no dropout, one head size, a mask of a shape it can
broadcast, stride 1 along the head dim) and the math backend otherwise.

torch's kernel walks blocks of queries and keys with an online softmax; here the same
quantities are composed from whole-row operators in the accumulate type (float32 for float16
and bfloat16): the scores ``q kᵀ · scale + mask``, the causal cut (top-left aligned), the row
maximum, ``exp(s - max)`` and its sum, the output as the weighted values times the sum's
reciprocal, and ``logsumexp = max + log(sum)``, which the backward reads to rebuild the
weights without storing them. The sums are grouped differently from torch's blocks, so values
agree within rounding, not bit for bit. A row that may attend to nothing gives zeros and a
logsumexp of 0, as torch's kernel leaves it.
"""
import math

from ...c10 import scalar_type as st
from .. import dispatcher
from .copy import to

__all__ = ["SDPBackend", "_fused_sdp_choice_cpp", "_scaled_dot_product_flash_attention_cpu",
           "_scaled_dot_product_flash_attention_cpu_backward"]

_FLASH = "scaled_dot_product_attention_flash_attention: "
_FLASH_DTYPES = (st.float32, st.float64, st.bfloat16, st.float16)


class SDPBackend:
    """torch's ``at::SDPBackend`` numbers (``torch.nn.attention.SDPBackend``)."""
    ERROR, MATH, FLASH_ATTENTION = -1, 0, 1


# ---- the choice of backend (sdp_utils_cpp.cpp's gates, in their order)
def _same_batch_and_heads(q, k, v, enable_gqa):
    """``check_batch_size_and_num_heads_dense`` with grouped-query attention allowed: one batch
    size; key and value heads equal and dividing the query's when ``enable_gqa``, else all equal."""
    if not q.size(0) == k.size(0) == v.size(0):
        return False
    if enable_gqa:
        return k.size(-3) == v.size(-3) and k.size(-3) != 0 and q.size(-3) % k.size(-3) == 0
    return q.size(-3) == k.size(-3) == v.size(-3)


def _mask_shape_ok(q, k, mask):
    """``check_attn_mask_shape``: a mask that needs no gradient, 2-d, or 4-d broadcasting over
    batch and heads, with each of its last two sizes the sequence length or 1."""
    if mask is None:
        return True
    if mask.requires_grad:
        return False
    # (a 1-d mask has no size(-2): torch's IndexError comes from here, as it does in torch)
    if mask.size(-2) not in (q.size(2), 1) or mask.size(-1) not in (k.size(2), 1):
        return False
    if mask.dim() == 2:
        return True
    return mask.dim() == 4 and mask.size(0) in (1, q.size(0)) and mask.size(1) in (1, q.size(1))


def _use_flash_attention_cpp(q, k, v, mask, dropout_p, enable_gqa):
    if any(getattr(t, "is_nested", False) for t in (q, k, v)):
        return False
    gates = (lambda: dropout_p <= 0.0,
             lambda: q.dim() == k.dim() == v.dim() == 4,
             lambda: _same_batch_and_heads(q, k, v, enable_gqa),
             lambda: _mask_shape_ok(q, k, mask),
             lambda: q.size(-1) == k.size(-1) == v.size(-1),
             lambda: q.size(-2) != 0 and k.size(-2) != 0,
             # (torch 2.13's gate reads the mask's strides no more: its kernel takes any)
             lambda: all(t.stride(-1) == 1 for t in (q, k, v)))
    return all(gate() for gate in gates) and q.dtype == k.dtype == v.dtype and q.dtype in _FLASH_DTYPES


def _fused_sdp_choice_cpp(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                          enable_gqa=False):
    """The backend torch's CPU picks, as an ``SDPBackend`` number: flash attention when its gates
    pass, else math. (torch can switch either off, ``torch.backends.cuda.enable_flash_sdp``;
    internals keeps both on.)"""
    if _use_flash_attention_cpp(query, key, value, attn_mask, dropout_p, enable_gqa):
        return SDPBackend.FLASH_ATTENTION
    return SDPBackend.MATH


# ---- the fused kernel
def _check_flash_inputs(query, key, value, dropout_p, attn_mask):
    """``_scaled_dot_product_flash_attention_cpu``'s checks, in torch's words; then the shapes its
    kernel reads without checking (another batch size, heads that do not divide the query's,
    key and value of different lengths), refused here rather than read past a storage."""
    dtype = query.dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{_FLASH}Expected data type in FP32, FP64, BF16, FP16, but got {dtype.torch_name} "
                           "instead.")
    if not query.dim() == key.dim() == value.dim() == 4:
        raise RuntimeError(f"{_FLASH}Accept only 4 dims inputs shape of {{B, H, T, K}}")
    if dropout_p != 0.0:
        raise RuntimeError(f"{_FLASH}Currently do not support dropout > 0")
    if not query.size(3) == key.size(3) == value.size(3):
        raise RuntimeError(f"{_FLASH}Q/K/V should have the same head size")
    if attn_mask is not None and attn_mask.dtype not in (st.float32, dtype):
        raise RuntimeError(f"{_FLASH}Attention mask is the same data type as query")
    if attn_mask is not None and attn_mask.dim() not in (2, 4):
        raise RuntimeError(f"{_FLASH}Attention mask dim in {{2, 4}}")
    for other in (key, value):      # the kernel reads them through data_ptr<scalar_t>
        if other.dtype is not dtype:
            raise RuntimeError(f"expected scalar type {dtype.torch_name} but found {other.dtype.torch_name}")
    heads, kv_heads = query.size(1), key.size(1)
    if (not query.size(0) == key.size(0) == value.size(0) or kv_heads != value.size(1)
            or kv_heads == 0 and heads != 0 or kv_heads and heads % kv_heads or key.size(2) != value.size(2)):
        raise RuntimeError(f"{_FLASH}Expected query {list(query.shape)}, key {list(key.shape)} and value "
                           f"{list(value.shape)} with one batch size, one key/value length and key/value heads "
                           "that divide the query's")


def _scores(q, k, attn_mask, is_causal, scale):
    """``q kᵀ · scale + mask`` with the causal cut, in the accumulate type (q, k already in it)."""
    s = dispatcher.call("mul.Scalar", dispatcher.call("matmul", q, k.transpose(-2, -1)), scale)
    if attn_mask is not None:
        s = dispatcher.call("add.Tensor", s, to(attn_mask, s.dtype))
    if is_causal:       # key j is cut from query i when j > i (top-left aligned, as math's tril)
        L, S = s.size(-2), s.size(-1)
        above = dispatcher.call("triu", dispatcher.call("ones", [L, S], dtype=st.bool_, device=s.device), 1)
        s = dispatcher.call("masked_fill.Scalar", s, above, -math.inf)
    return s


def _repeat_kv_heads(t, heads):
    """Grouped-query attention: each key/value head serves ``heads // kv_heads`` query heads in a
    row (the kernel indexes head ``h // reps``)."""
    B, kv_heads, S, E = t.shape
    if kv_heads == heads:
        return t
    return t.unsqueeze(2).expand(B, kv_heads, heads // kv_heads, S, E).reshape(B, heads, S, E)


def _sum_kv_heads(grad, kv_heads):
    """The gradient of ``_repeat_kv_heads``: each group of query heads summed into its key/value head."""
    B, heads, S, E = grad.shape
    if kv_heads == heads:
        return grad
    return dispatcher.call("sum.dim_IntList", grad.reshape(B, kv_heads, heads // kv_heads, S, E), [2], False)


def _softmax_scale(query, scale):
    return 1.0 / math.sqrt(query.size(-1)) if scale is None else scale


def _in_acc(query, key, value):
    acc = st.opmath_type(query.dtype)
    q, k, v = (to(t, acc) for t in (query, key, value))
    return q, _repeat_kv_heads(k, query.size(1)), _repeat_kv_heads(v, query.size(1))


def _scaled_dot_product_flash_attention_cpu(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                                            scale=None):
    """(output, logsumexp): the output laid out as ``query`` (``empty_like``), the logsumexp
    (B, H, L) in the accumulate type, a transposed (B, L, H) buffer as torch allocates it."""
    _check_flash_inputs(query, key, value, dropout_p, attn_mask)
    B, H, L, _ = query.shape
    acc = st.opmath_type(query.dtype)
    output = dispatcher.call("empty_like", query)
    logsumexp = dispatcher.call("empty.memory_format", [B, L, H], dtype=acc, device=query.device).transpose(1, 2)
    if output.numel() == 0:
        return output, logsumexp
    if key.size(2) == 0:        # nothing to attend to: zeros, as a fully masked row
        dispatcher.call("zero_", output)
        dispatcher.call("zero_", logsumexp)
        return output, logsumexp
    q, k, v = _in_acc(query, key, value)
    s = _scores(q, k, attn_mask, is_causal, _softmax_scale(query, scale))
    row_max = dispatcher.call("amax", s, [-1], True)
    empty_row = dispatcher.call("eq.Scalar", row_max, -math.inf)     # may attend to nothing
    row_max = dispatcher.call("masked_fill.Scalar", row_max, empty_row, 0.0)
    weights = dispatcher.call("exp", dispatcher.call("sub.Tensor", s, row_max))
    row_sum = dispatcher.call("sum.dim_IntList", weights, [-1], True)
    if query.dtype.is_reduced_float:    # the kernel keeps the weights in the input's type for the product
        weights = to(to(weights, query.dtype), acc)
    out = dispatcher.call("mul.Tensor", dispatcher.call("matmul", weights, v),
                          dispatcher.call("reciprocal", row_sum))
    out = dispatcher.call("masked_fill.Scalar", out, empty_row, 0.0)
    lse = dispatcher.call("add.Tensor", row_max, dispatcher.call("log", row_sum))
    lse = dispatcher.call("masked_fill.Scalar", lse, empty_row, 0.0).squeeze(-1)
    dispatcher.call("copy_", output, out)
    dispatcher.call("copy_", logsumexp, lse)
    return output, logsumexp


def _transposed_zeros(t, dtype=None):
    """zeros of ``t``'s shape laid out (B, T, H, E) and seen as (B, H, T, E), as torch's backward
    allocates its gradients."""
    B, H, T, E = t.shape
    return dispatcher.call("zeros", [B, T, H, E], dtype=dtype or t.dtype, device=t.device).transpose(1, 2)


def _scaled_dot_product_flash_attention_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                                     is_causal, *, attn_mask=None, scale=None):
    """(grad_query, grad_key, grad_value), from the weights rebuilt as ``exp(s - logsumexp)``:
    dV = Pᵀ dO, dP = dO Vᵀ, dS = P (dP - rowsum(dO · O)), dQ = dS K · scale, dK = dSᵀ Q · scale."""
    if grad_out is None:
        return None, None, None
    _check_flash_inputs(query, key, value, dropout_p, attn_mask)
    grad_q, grad_k, grad_v = (_transposed_zeros(t) for t in (query, key, value))
    if grad_q.numel() == 0 or key.size(2) == 0:
        return grad_q, grad_k, grad_v
    acc = st.opmath_type(query.dtype)
    scale = _softmax_scale(query, scale)
    q, k, v = _in_acc(query, key, value)
    s = _scores(q, k, attn_mask, is_causal, scale)
    weights = dispatcher.call("exp", dispatcher.call("sub.Tensor", s, to(logsumexp, acc).unsqueeze(-1)))
    go, o = to(grad_out, acc), to(out, acc)
    grad_v_full = dispatcher.call("matmul", weights.transpose(-2, -1), go)
    grad_weights = dispatcher.call("matmul", go, v.transpose(-2, -1))
    row_dot = dispatcher.call("sum.dim_IntList", dispatcher.call("mul.Tensor", go, o), [-1], True)
    grad_s = dispatcher.call("mul.Tensor", weights, dispatcher.call("sub.Tensor", grad_weights, row_dot))
    grad_s = dispatcher.call("mul.Scalar", grad_s, scale)
    kv_heads = key.size(1)
    dispatcher.call("copy_", grad_q, dispatcher.call("matmul", grad_s, k))
    dispatcher.call("copy_", grad_k, _sum_kv_heads(dispatcher.call("matmul", grad_s.transpose(-2, -1), q), kv_heads))
    dispatcher.call("copy_", grad_v, _sum_kv_heads(grad_v_full, kv_heads))
    return grad_q, grad_k, grad_v
