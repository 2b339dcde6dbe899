"""Attention in functional form: ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (re-exported by ``nn.functional``, as torch's live in
``torch/nn/functional.py``).

``scaled_dot_product_attention`` is torch's *math* backend
(``_scaled_dot_product_attention_math`` in ``aten/src/ATen/native/transformers/attention.cpp``),
written with internals' operators so autograd records it: the scale's square root multiplies
both q and k before their product (which keeps the product's range small), a boolean mask
becomes 0 / -inf and is added, the softmax leaves a fully masked row at zero where a plain
softmax would give NaN, and dropout draws from torch's random stream. On the CPU torch picks a
fused flash-attention kernel when there is no dropout; its sums are grouped differently, so the
two agree to rounding, not bit for bit. With dropout torch runs this same math, same mask.
"""
import math
import warnings

from .._functional import baddbmm, bmm, cat, matmul, ones, scalar_tensor, where, zeros, zeros_like
from ..c10 import scalar_type as st
from . import functional as F

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _convert_boolean_attn_mask(mask, dtype):
    """True keeps a position (adds 0), False removes it (adds -inf); a float mask is added as is."""
    if mask is None or mask.dtype != st.bool_:
        return mask
    return where(mask.logical_not(), -math.inf, scalar_tensor(0.0, dtype=dtype, device=mask.device))


def _safe_softmax(attn, dim):
    """softmax, except that a row whose every entry is -inf gives zeros (``at::_safe_softmax``)."""
    out = attn.softmax(dim)
    fully_masked = attn.eq(-math.inf).all(dim, keepdim=True)
    return where(fully_masked, zeros_like(out), out)


def _cpp_type_name(dtype):
    """The C++ element type's name, which torch's message prints ("float", "c10::Half")."""
    name = dtype.torch_name
    return f"c10::{name}" if name in ("Half", "BFloat16") else name.lower()


def _check_sdpa_inputs(query, key, value):
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp_type_name(query.dtype)} key.dtype: {_cpp_type_name(key.dtype)} and value.dtype: "
                           f"{_cpp_type_name(value.dtype)} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must be at least 2-D")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q kᵀ · scale + mask) v over the last two dims, with dropout on the weights;
    ``scale`` defaults to 1/√E, E = ``query.size(-1)``."""
    _check_sdpa_inputs(query, key, value)
    if enable_gqa and query.size(-3) != key.size(-3):
        raise NotImplementedError("internals' scaled_dot_product_attention has no grouped-query attention")
    attn_mask = _convert_boolean_attn_mask(attn_mask, query.dtype)
    negative = scale is not None and scale < 0.0
    base = abs(scale) if negative else scale if scale is not None else 1.0 / math.sqrt(query.size(-1))
    factor = math.sqrt(base)      # computed in double, as torch's SymFloat is
    query = query.mul(0.0 - factor if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        causal = ones((query.size(-2), key.size(-2)), dtype=st.bool_, device=query.device).tril()
        attn_mask = _convert_boolean_attn_mask(causal, query.dtype)
    attn = matmul(query, key.transpose(-2, -1).mul(factor))
    if attn_mask is not None:
        attn = attn.add(attn_mask)
    attn = _safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = F.dropout(attn, dropout_p, True)
    return matmul(attn, value)


# ---- multi-head attention (``multi_head_attention_forward`` and its helpers in torch/nn/functional.py)
def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask as a float one of ``target_type`` (True → -inf); a float mask unchanged."""
    if mask is None:
        return None
    if mask.dtype != st.bool_ and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if mask.dtype == st.bool_:
        mask = zeros_like(mask, dtype=target_type).masked_fill_(mask, -math.inf)
    return mask


def _none_or_dtype(input):
    return None if input is None else input.dtype


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the call is batched ((L, N, E) query) or not ((L, E)); the other arguments' ranks
    must agree with it (torch raises AssertionError for these)."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                             "query tensor")
    batched = query.dim() == 3
    want, kind = (3, "batched (3-D)") if batched else (2, "unbatched (2-D)")
    if key.dim() != want or value.dim() != want:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {want}-D but found "
                             f"{key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != want - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {want - 1}-D "
                             f"but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _split_heads(proj, count, embed_dim):
    """(…, count·E) → ``count`` contiguous (…, E) tensors, through torch's one reshaping copy."""
    proj = proj.unflatten(-1, (count, embed_dim)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
    return [proj[i] for i in range(count)]


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v through the packed (3E, E) weight: one product when q, k and v are one tensor
    (self-attention), two when only k and v are, three otherwise."""
    embed_dim = q.size(-1)
    if k is v:
        if q is k:
            return tuple(_split_heads(F.linear(q, w, b), 3, embed_dim))
        w_q, w_kv = w.split([embed_dim, embed_dim * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed_dim, embed_dim * 2])
        return (F.linear(q, w_q, b_q), *_split_heads(F.linear(k, w_kv, b_kv), 2, embed_dim))
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _check_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    """The float mask as (1 or N·heads, L, S)."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _masks(query, key_padding_mask, attn_mask, is_causal, need_weights):
    """Both masks as float; a causal hint without padding and without weights drops the mask
    (the attention applies causality itself)."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        return key_padding_mask, None, is_causal
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
    return key_padding_mask, attn_mask, is_causal and key_padding_mask is None


def _append_key_position(k, v, extra_k, extra_v, attn_mask, key_padding_mask, dim):
    """One more key/value position along ``dim`` (``bias_k``/``bias_v`` or zeros); the masks
    gain a column."""
    k, v = cat([k, extra_k], dim), cat([v, extra_v], dim)
    attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
    key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))
    return k, v, attn_mask, key_padding_mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Query (L, N, E), key and value (S, N, E) (or unbatched without N): project, split into
    heads, attend, merge the heads and project out. Returns (output, weights): the weights
    (N, L, S) averaged over heads, or per head, or None when ``need_weights`` is false (then
    the attention is ``scaled_dot_product_attention``)."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("internals' multi_head_attention_forward takes no static_k/static_v")
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _masks(query, key_padding_mask, attn_mask, is_causal, need_weights)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    q, k, v = _project_in(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                          q_proj_weight, k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        attn_mask = _check_attn_mask(attn_mask, tgt_len, key.shape[0], bsz, num_heads)
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None else
                             "bias_v is set but bias_k is None")
    if bias_k is not None:
        k, v, attn_mask, key_padding_mask = _append_key_position(
            k, v, bias_k.repeat(1, bsz, 1), bias_v.repeat(1, bsz, 1), attn_mask, key_padding_mask, 0)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zero = zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v, attn_mask, key_padding_mask = _append_key_position(k, v, zero, zero, attn_mask, key_padding_mask, 1)
    src_len = k.size(1)
    if key_padding_mask is not None:
        attn_mask = _merge_padding(key_padding_mask, attn_mask, bsz, num_heads, src_len)
    dropout_p = dropout_p if training else 0.0
    attend = _attend_with_weights if need_weights else _attend_fused
    out, weights = attend(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads, tgt_len, src_len)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if weights is not None and average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


def _project_in(query, key, value, in_proj_weight, in_proj_bias, separate, w_q, w_k, w_v):
    if separate:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        if w_q is None or w_k is None or w_v is None:
            missing = "q" if w_q is None else "k" if w_k is None else "v"
            raise AssertionError(f"use_separate_proj_weight is True but {missing}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)
    if key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)


def _merge_padding(key_padding_mask, attn_mask, bsz, num_heads, src_len):
    """The (N, S) padding mask repeated per head as (N·heads, 1, S) and added to the attn mask."""
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    padding = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
        bsz * num_heads, 1, src_len)
    return padding if attn_mask is None else attn_mask.add(padding)


def _attend_with_weights(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads, tgt_len, src_len):
    """bmm, softmax, dropout, bmm, keeping the weights (N, heads, L, S); the scale 1/√E goes on q."""
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    q_scaled = q.mul(math.sqrt(1.0 / float(q.shape[2])))
    if attn_mask is not None:
        weights = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        weights = bmm(q_scaled, k.transpose(-2, -1))
    weights = F.softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    out = bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, q.shape[2] * num_heads)
    return out, weights.view(bsz, num_heads, tgt_len, src_len)


def _attend_fused(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads, tgt_len, src_len):
    """The heads as (N, heads, L, E/heads) through ``scaled_dot_product_attention``; no weights."""
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    head_dim = q.shape[2]
    q, k, v = (t.view(bsz, num_heads, -1, head_dim) for t in (q, k, v))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    return out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, head_dim * num_heads), None
