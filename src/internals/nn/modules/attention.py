"""``MultiheadAttention`` (``torch/nn/modules/activation.py``): the packed input projection
``in_proj_weight`` (3E, E) (or ``q_proj_weight``/``k_proj_weight``/``v_proj_weight`` where the key
or value width differs), ``in_proj_bias``, and ``out_proj``, a Linear, initialised in torch's
order so that one seed gives torch's weights.

torch's module takes a fused native kernel in eval mode without autograd (its "fast path");
this one always runs ``multi_head_attention_forward``, the path torch trains with, whose
numbers agree with the fused kernel's to rounding; where torch would take the fused kernel, the
output is laid out as that kernel writes it (a contiguous batch-first tensor).
"""
from ..._functional import empty
from ...amp.autocast_mode import is_autocast_enabled
from ...autograd.grad_mode import is_grad_enabled
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name, as torch's ``out_proj`` is (its quantization tools skip it);
    the name shows in the module's repr."""


class MultiheadAttention(Module):
    """``MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
    add_zero_attn=False, kdim=None, vdim=None, batch_first=False)``."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self._make_projections(bias, factory)
        # out_proj initialises itself here, before the input projection below: torch's order
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _make_projections(self, bias, factory):
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * e, e), **factory))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty((e, e), **factory))
            self.k_proj_weight = Parameter(empty((e, self.kdim), **factory))
            self.v_proj_weight = Parameter(empty((e, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty((3 * e,), **factory))
        else:
            self.register_parameter("in_proj_bias", None)

    def _reset_parameters(self):
        """Xavier-uniform projections, zero biases (out_proj's too), Xavier-normal bias_k/bias_v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """(output, weights); with ``batch_first`` the inputs and output are (N, L, E)."""
        float_masks = any(m is not None and m.is_floating_point() for m in (key_padding_mask, attn_mask))
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask", F._none_or_dtype(attn_mask),
                                             "attn_mask", query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        is_batched = query.dim() == 3
        given = (query, key, value)
        fused = self.batch_first and is_batched and self._fused_in_torch(*given, float_masks)
        # torch's fused kernel (``_native_multi_head_attention``) takes no is_causal: only a mask
        # makes it causal, and without one it attends everywhere. With a mask it adds the mask to
        # the scores and takes a plain softmax, as the weights' path does (a fully masked row is
        # NaN there, not the zeros of scaled_dot_product_attention's safe softmax).
        is_causal = is_causal and not fused
        masked = key_padding_mask is not None or attn_mask is not None
        keep_weights = need_weights
        need_weights = need_weights or (fused and masked)
        if self.batch_first and is_batched:
            query, key, value = _batch_second(query, key, value)
        separate = not self._qkv_same_embed_dim
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight if separate else None,
            k_proj_weight=self.k_proj_weight if separate else None,
            v_proj_weight=self.v_proj_weight if separate else None,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
            if fused:
                out = out.contiguous()      # the fused kernel writes a fresh (N, L, E) output
        return out, weights if keep_weights else None

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """(merged mask, mask type) for a batch-first ``query`` (N, L, E), as torch's module
        builds it for its fused kernel: type 1 the (N, S) padding mask alone, type 2 the attention
        mask expanded to (N, heads, L, L), plus the padding mask where both are given; (None, None)
        without masks."""
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
        return merged, mask_type

    def _fused_in_torch(self, query, key, value, float_masks):
        """Whether torch's module would take its fused kernel (its ``why_not_fast_path`` checks, for
        a batched batch-first input): self-attention in eval mode with no gradient to record, an
        even number of heads, packed projections with biases, no floating-point mask."""
        params = (self.in_proj_weight, self.in_proj_bias, self.out_proj.weight, self.out_proj.bias)
        return (query is key and key is value and not self.training and self.num_heads % 2 == 0
                and self._qkv_same_embed_dim and self.bias_k is None and self.add_zero_attn is False
                and self.in_proj_bias is not None and self.in_proj_weight.dtype == query.dtype
                and self.in_proj_bias.dtype == query.dtype
                and not float_masks and not is_autocast_enabled()
                and not (is_grad_enabled() and any(t is not None and t.requires_grad for t in (query, *params))))


def _batch_second(query, key, value):
    """(N, L, E) → (L, N, E), keeping "the same tensor" where it was, since the projection takes
    one product for self-attention."""
    if key is value:
        if query is key:
            query = query.transpose(1, 0)
            return query, query, query
        query, key = query.transpose(1, 0), key.transpose(1, 0)
        return query, key, key
    return query.transpose(1, 0), key.transpose(1, 0), value.transpose(1, 0)
