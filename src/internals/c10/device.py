"""Devices, mirroring ``c10/core/Device.h``: a type ("cpu" or "cuda") and an index."""

__all__ = ["device"]


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():        # torch's parser takes decimal digits only ('cuda:-1' is refused)
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must be -1 or non-negative, got {index}")
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"Expected one of cpu, cuda, meta device type at start of device string: {type}")
        self.type, self.index = type, index   # 'cuda' keeps no index: device('cuda') != device('cuda:0')

    def __eq__(self, other):
        if other.__class__ is device:     # the common case first: every op compares devices
            return self.type == other.type and self.index == other.index
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


def as_device(d):
    """The device an operator works on: cuda without an index means the current device, cuda:0
    (torch's ``ensure_has_index``), so that a tensor made on 'cuda' reports cuda:0."""
    if d is None:
        return device("cpu")
    if isinstance(d, int):
        return device("cuda", d)
    d = d if isinstance(d, device) else device(d)
    return device("cuda", 0) if d.type == "cuda" and d.index is None else d
