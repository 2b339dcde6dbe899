"""The Transformer's modules (``torch/nn/modules/transformer.py``): ``TransformerEncoderLayer``
(self-attention and a two-layer feed-forward block, each with a residual connection and a
LayerNorm, the norm after the sum with ``norm_first=False``, the original Transformer, or before
the block with ``norm_first=True``), ``TransformerDecoderLayer`` (the same with attention over the
encoder's output between the two), the stacks ``TransformerEncoder`` and ``TransformerDecoder``,
and ``Transformer``, an encoder and a decoder.

torch runs a fused native kernel in eval mode without autograd (and nested tensors for padded
batches); this module always runs the composed path that torch trains with, whose numbers
agree with the fused kernel's to rounding.
"""
import copy
import warnings

from ..._functional import full, triu
from ...amp.autocast_mode import is_autocast_enabled
from ...autograd.grad_mode import is_grad_enabled
from .. import functional as F
from .. import init
from .activation import Dropout
from .attention import MultiheadAttention
from .container import ModuleList
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer", "TransformerDecoder",
           "Transformer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """(sz, sz) float mask: 0 on and below the diagonal, -inf above (a position sees its past)."""
    return triu(full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` when given; otherwise whether ``mask`` equals the square causal mask."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.size(-2)
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    return mask.size() == causal.size() and bool(mask.eq(causal).all())


class TransformerEncoderLayer(Module):
    """``TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
    activation=relu, layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True)``;
    ``activation`` is "relu", "gelu" or a callable."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = 1 if activation is F.relu else 2 if activation is F.gelu else 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        # torch's fused layer (``_transformer_encoder_layer_fwd``) takes no is_causal: only a mask
        # makes its attention causal, and without one it attends everywhere. Its attention adds
        # the masks to the scores before a plain softmax, as the weights' path does, so a row they
        # empty is NaN there (not the zeros of scaled_dot_product_attention's safe softmax).
        fused = self._fast_path_in_torch(src)
        is_causal = is_causal and not fused
        plain_softmax = fused and (src_mask is not None or src_key_padding_mask is not None)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal, plain_softmax)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal, plain_softmax))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _fast_path_in_torch(self, src):
        """Whether torch's layer would run its fused kernel (its ``why_not_sparsity_fast_path``
        checks): a batched batch-first input in eval mode, packed projections with biases, relu or
        gelu, equal norm eps, an even number of heads, no autocast, no forward hooks on any
        submodule, and no gradient to record."""
        attn = self.self_attn
        if (src.dim() != 3 or self.training or not attn.batch_first or attn.in_proj_bias is None
                or not attn._qkv_same_embed_dim or not self.activation_relu_or_gelu
                or self.norm1.eps != self.norm2.eps or attn.num_heads % 2 == 1 or is_autocast_enabled()):
            return False
        if any(m._forward_hooks or m._forward_pre_hooks for m in self.modules()):
            return False
        tensors = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                   self.norm1.weight, self.norm1.bias, self.norm2.weight, self.norm2.bias,
                   self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias)
        return not (is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False, plain_softmax=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=plain_softmax, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


def _why_no_nested_tensor(layer):
    """torch's reason for not using nested tensors with this layer ("" when it would)."""
    checks = [(not isinstance(layer, TransformerEncoderLayer), "encoder_layer was not TransformerEncoderLayer")]
    if not checks[0][0]:
        attn = layer.self_attn
        checks += [(layer.norm_first, "encoder_layer.norm_first was True"),
                   (not attn.batch_first, "encoder_layer.self_attn.batch_first was not True(use batch_first "
                                          "for better inference performance)"),
                   (not attn._qkv_same_embed_dim, "encoder_layer.self_attn._qkv_same_embed_dim was not True"),
                   (attn.in_proj_bias is None, "encoder_layer.self_attn was passed bias=False"),
                   (not layer.activation_relu_or_gelu, "encoder_layer.activation_relu_or_gelu was not True"),
                   (layer.norm1.eps != layer.norm2.eps, "encoder_layer.norm1.eps was not equal to "
                                                        "encoder_layer.norm2.eps"),
                   (attn.num_heads % 2 == 1, "encoder_layer.self_attn.num_heads is odd")]
    return next((why for failed, why in checks if failed), "")


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` (in ``layers``), then ``norm`` if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor = self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(mask), "mask", src.dtype)
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first
        seq_len = src.size(0) if src.dim() == 2 else src.size(1 if batch_first else 0)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        self._check_padding_as_nested(src, mask, src_key_padding_mask)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if self._runs_as_nested(src, mask, src_key_padding_mask):
            output = output.masked_fill(src_key_padding_mask.ne(0).unsqueeze(-1), 0.0)
        return output if self.norm is None else self.norm(output)

    def _check_padding_as_nested(self, src, mask, padding):
        """Before its layers run, in inference with nested tensors, torch asks whether the padding
        is left-aligned (``_nested_tensor_from_mask_left_aligned``, with ``mask_check``, whatever
        else then keeps it off the fused path) or packs the input by it (``_nested_tensor_from_mask``,
        without): both refuse a mask of another shape than the input's (N, S), with their own
        RuntimeError, where the layers' attention would raise an AssertionError."""
        if not self.use_nested_tensor or self.layers[0].training or src.dim() != 3 or padding is None:
            return
        if not (self.mask_check or self._packs_by_padding(src, mask)):
            return
        if padding.dim() != 2:
            raise RuntimeError("Padding mask should be 2D")
        if tuple(padding.shape) != tuple(src.shape[:2]):
            raise RuntimeError("Mask size should match input size")

    def _packs_by_padding(self, src, mask):
        """torch's remaining conditions for packing: no attention mask, no autocast, no gradient
        to record through the first layer."""
        if mask is not None or is_autocast_enabled():
            return False
        return not (is_grad_enabled() and (src.requires_grad or any(p.requires_grad
                                                                    for p in self.layers[0].parameters())))

    def _runs_as_nested(self, src, mask, padding):
        """Whether torch would pack this batch into a nested tensor (inference, padding at the
        ends of the rows, no attention mask). Its padded positions then come back as zeros, not
        as the values the masked attention computes there, and this module zeroes them too."""
        if not self.use_nested_tensor or self.layers[0].training or src.dim() != 3:
            return False
        if padding is None or not self._packs_by_padding(src, mask):
            return False
        keep = padding.eq(0).tolist()
        return not self.mask_check or all(row == sorted(row, reverse=True) for row in keep)


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention from the target to ``memory`` (the encoder's
    output), then the feed-forward block; each with its residual connection, dropout and norm."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1, self.dropout2, self.dropout3 = Dropout(dropout), Dropout(dropout), Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer``, then ``norm`` if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        batch_first = self.layers[0].self_attn.batch_first
        seq_len = tgt.size(0) if tgt.dim() == 2 else tgt.size(1 if batch_first else 0)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                           memory_is_causal=memory_is_causal)
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    """An encoder and a decoder (each with a final LayerNorm); every matrix parameter is then
    redrawn Xavier-uniform, in parameter order."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **factory), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **factory), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
