"""Packed sequences (``torch/nn/utils/rnn.py``).

A batch of sequences of different lengths is either *padded* to one length (a (T, B, *) tensor,
or (B, T, *) with ``batch_first``) or *packed*: ``PackedSequence.data`` holds, time step by
time step, the elements of the sequences still running at that step, and ``batch_sizes[t]`` says
how many there are. A recurrent layer given a ``PackedSequence`` runs each step on that many
sequences only, so padding never enters its state.

Packing needs the sequences longest first. ``enforce_sorted=False`` sorts them here
(``sorted_indices``) and the results are put back in the caller's order (``unsorted_indices``).
The packing itself is the operator ``_pack_padded_sequence`` (grad_fn
``PackPaddedSequenceBackward0``), and unpacking ``_pad_packed_sequence``, as in torch.
"""
from collections.abc import Iterable
from typing import NamedTuple

from ... import _functional as _F
from ..._tensor_base import TensorBase
from ...aten import dispatcher
from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class _PackedSequenceFields(NamedTuple):
    data: TensorBase
    batch_sizes: TensorBase
    sorted_indices: TensorBase | None
    unsorted_indices: TensorBase | None


class PackedSequence(_PackedSequenceFields):
    """(data, batch_sizes, sorted_indices, unsorted_indices); build one with
    ``pack_padded_sequence`` or ``pack_sequence``, not directly."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never "
                                 "be created manually. They should be instantiated by functions like "
                                 "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                                 "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        data, batch_sizes = data          # a (data, batch_sizes) pair
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The data moved or cast as ``Tensor.to`` would; the index tensors follow the data's
        device (``batch_sizes`` stays on the CPU)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        rest = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        sorted_indices = None if self.sorted_indices is None else self.sorted_indices.to(data.device, **rest)
        unsorted_indices = None if self.unsorted_indices is None else self.unsorted_indices.to(data.device, **rest)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        return self.to(dtype=st.float64)

    def float(self):
        return self.to(dtype=st.float32)

    def half(self):
        return self.to(dtype=st.float16)

    def long(self):
        return self.to(dtype=st.int64)

    def int(self):
        return self.to(dtype=st.int32)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The inverse of a permutation of 0..n-1 (``output[permutation[i]] = i``), or None."""
    if permutation is None:
        return None
    # torch asks for its legacy contiguous format by name: the call (and a traced graph) says so
    output = _F.empty_like(permutation, memory_format=contiguous_format)
    positions = _F.arange(0, permutation.numel(), device=permutation.device)
    return output.scatter_(0, permutation, positions)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch; ``lengths`` (a list or a CPU int64 tensor) longest first unless
    ``enforce_sorted=False``."""
    if not isinstance(lengths, TensorBase):
        lengths = _F.as_tensor(lengths, dtype=st.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=st.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = _F.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = dispatcher.call("_pack_padded_sequence", input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded, lengths): the inverse of ``pack_padded_sequence``, padded to ``total_length``
    steps if given, in the order the sequences were packed from."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    padded, lengths = dispatcher.call("_pad_packed_sequence", sequence.data, sequence.batch_sizes, batch_first,
                                      padding_value, max_seq_length)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes (L_i, *) into (max L, B, *) (or (B, max L, *)), filled with
    ``padding_value`` after each sequence (before it with ``padding_side="left"``)."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    for i, seq in enumerate(sequences):      # torch's argument parser reads a list of Tensors
        if not isinstance(seq, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(seq).__name__}")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if sequences[0].dim() == 0:
        # torch slices the first sequence's sizes past their first before any size(0)
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    max_len = max(s.size(0) for s in sequences)
    trailing = list(sequences[0].shape[1:])
    dims = [len(sequences), max_len] if batch_first else [max_len, len(sequences)]
    out = _F.full(dims + trailing, padding_value, dtype=sequences[0].dtype, device=sequences[0].device)
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        start = max_len - length if padding_side == "left" else 0
        target = out.select(0, i).narrow(0, start, length) if batch_first else out.narrow(0, start, length).select(1, i)
        target.copy_(seq)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences ``pad_sequence`` stacked, each cut to its length. Without
    ``batch_first`` the caller's tensor is transposed in place, as torch's is."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    max_length = padded_sequences.shape[1]
    idx = _F.arange(max_length, device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of (L_i, *) tensors (longest first unless ``enforce_sorted=False``)."""
    lengths = _F.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences ``pack_sequence`` packed."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
