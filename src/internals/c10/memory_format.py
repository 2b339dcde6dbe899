"""Memory formats, mirroring ``c10/core/MemoryFormat.h``: how the dims of a dense tensor are
ordered in memory. ``contiguous_format`` is row-major (NCHW for images); ``channels_last`` puts
the channels innermost (NHWC: every pixel's channels side by side), ``channels_last_3d`` the same
for 5-d tensors; ``preserve_format`` asks an operator to keep its input's order.
"""

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
           "channels_last_strides", "is_channels_last_contiguous", "is_channels_last_strides", "suggest_memory_format"]


class memory_format:
    """One of the four formats, printed and pickled as torch's ``torch.channels_last`` is."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name     # pickle by name: the module-level object comes back


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

# channels_last: the channel dim first (stride 1), then the others from the last one in
_CHANNELS_INNERMOST = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}


def channels_last_strides(sizes, fmt):
    """``get_channels_last_strides_2d`` / ``_3d``: strides that put the channels innermost."""
    order = _CHANNELS_INNERMOST[fmt]
    if len(sizes) != len(order):
        raise RuntimeError(f"required rank {len(order)} tensor to use {fmt.name} format")
    strides, step = [0] * len(sizes), 1
    for d in order:
        strides[d] = step
        step *= sizes[d]
    return tuple(strides)


def is_channels_last_contiguous(sizes, strides, fmt):
    """``compute_channels_last_contiguous_2d`` / ``_3d``: laid out as ``fmt``, size-1 dims aside."""
    order = _CHANNELS_INNERMOST[fmt]
    if len(sizes) != len(order):
        return False
    expected = 1
    for d in order:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def is_channels_last_strides(sizes, strides, fmt):
    """``is_channels_last_strides_2d`` / ``_3d``: do the strides *look* channels-last? torch's
    heuristic, ambiguous layouts (N111, size-1 channels) counting as contiguous."""
    order = _CHANNELS_INNERMOST[fmt]
    if len(sizes) != len(order) or strides[1] == 0:
        return False
    smallest = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < smallest:
            return False
        if d == 0 and smallest == strides[1]:
            return False
        smallest = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


def suggest_memory_format(sizes, strides):
    """``TensorBase::suggest_memory_format``: the format a strided tensor's strides suggest."""
    for fmt in (channels_last, channels_last_3d):
        if is_channels_last_strides(sizes, strides, fmt):
            return fmt
    return contiguous_format
