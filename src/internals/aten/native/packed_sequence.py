"""Packed sequences (``aten/src/ATen/native/PackedSequence.cpp``).

A batch of sequences of decreasing lengths, padded to (T, B, *), is packed time step by time
step: step t keeps the first ``batch_sizes[t]`` sequences (those still running), and ``data`` is
those rows of every step, one after the other. ``_pack_padded_sequence`` builds ``data`` and
``batch_sizes`` (its backward puts each step's gradient back in the padded layout);
``_pad_packed_sequence`` undoes it, filling the rest with ``padding_value``.
"""
import numpy as np

from ...c10 import scalar_type as st
from ..dispatcher import call
from .tensor_factories import from_host


def _host_lengths(lengths):
    if lengths.dtype != st.int64 or lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                           f"{lengths.device.type} {lengths.dtype.torch_name.capitalize()} tensor")
    return np.array(lengths._host_values(), dtype=np.int64)


def _check_batch_sizes(batch_sizes):
    if batch_sizes.dtype != st.int64 or batch_sizes.dim() != 1 or batch_sizes.device.type != "cpu":
        raise RuntimeError(f"'batch_sizes' argument should be a 1D CPU int64 tensor, but got {batch_sizes.dim()}D "
                           f"{batch_sizes.device.type} {batch_sizes.dtype.torch_name.capitalize()} tensor")
    return np.array(batch_sizes._host_values(), dtype=np.int64)


def _pack_padded_sequence(input, lengths, batch_first):
    """Steps of equal batch size are sliced together: for each distinct length l (shortest
    first), the time steps since the previous length, over the sequences at least that long."""
    host = _host_lengths(lengths)
    if batch_first:
        input = call("transpose.int", input, 0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.shape[1]
    if host.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {host.size} "
                           f"(batch_size={batch})")
    if host[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if np.any(host[:-1] < host[1:]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    steps, batch_sizes, previous = [], [], 0
    for i in range(batch):
        length = int(host[batch - 1 - i])
        if length > previous:
            running = batch - i
            chunk = call("slice.Tensor", call("slice.Tensor", input, 0, previous, length), 1, 0, running)
            steps.append(call("reshape", chunk, [-1, *input.shape[2:]]))
            batch_sizes.extend([running] * (length - previous))
            previous = length
    return call("cat", steps), from_host(np.array(batch_sizes, dtype=np.int64), st.int64, lengths.device)


def _pack_padded_sequence_backward(grad, input_size, batch_sizes, batch_first):
    sizes = list(input_size)
    if batch_first:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grad_input = call("zeros", sizes, dtype=grad.dtype, device=grad.device)
    offset = 0
    for t, size in enumerate(_check_batch_sizes(batch_sizes).tolist()):
        target = call("slice.Tensor", call("select.int", grad_input, 0, t), 0, 0, size)
        call("copy_", target, call("slice.Tensor", grad, 0, offset, offset + size))
        offset += size
    return call("transpose.int", grad_input, 0, 1) if batch_first else grad_input


def _pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length):
    """The padded (T, B, *) tensor and each sequence's length; runs of steps with one batch size
    are copied as one block."""
    sizes = _check_batch_sizes(batch_sizes)
    longest, widest = sizes.size, int(sizes[0])
    steps = longest
    if total_length > 0:
        if total_length < longest:
            raise RuntimeError("Expected total_length to be at least the length of the longest sequence in input, "
                               f"but got total_length={total_length} and max sequence length being {longest}")
        steps = total_length
    output = call("full", [steps, widest, *data.shape[1:]], padding_value, dtype=data.dtype, device=data.device)
    lengths = np.zeros(widest, dtype=np.int64)
    offset, previous_size, previous_t = 0, widest, 0
    for t in range(longest + 1):
        size = int(sizes[t]) if t != longest else 0
        if size != previous_size:
            count = previous_size * (t - previous_t)
            block = call("view", call("slice.Tensor", data, 0, offset, offset + count),
                         [t - previous_t, previous_size, *data.shape[1:]])
            target = call("slice.Tensor", call("slice.Tensor", output, 0, previous_t, t), 1, 0, previous_size)
            call("copy_", target, block)
            offset += count
            previous_t = t
        lengths[size:previous_size] = t       # the sequences that ended before step t
        previous_size = size
    if batch_first:
        output = call("transpose.int", output, 0, 1)
    return output, from_host(lengths, st.int64, batch_sizes.device)
