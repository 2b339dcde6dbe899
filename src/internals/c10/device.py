"""Devices, mirroring ``c10/core/Device.h``: a type ("cpu" or "cuda") and an index."""

import re

__all__ = ["device"]


class device:
    __slots__ = ("type", "index")
    __module__ = "internals"     # the public name, as ``torch.device.__module__`` is ``torch``

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool) and index is None:
            type, index = "cuda", type          # torch.device(0): an index on the accelerator
        elif isinstance(type, str):
            type, index = _parse(type, index)
        else:
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({type.__class__.__name__}), but expected one of:\n * (torch.device device)\n"
                            f"      didn't match because some of the arguments have invalid types: "
                            f"(!{type.__class__.__name__}!)\n * (str type, int index = -1)\n")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
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

    # ``with device('meta'):``: the factories' default device for a while.
    # The mode that does it lives above c10 (utils/_device.py) and registers these hooks.
    def __enter__(self):
        _HOOKS["enter"](self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _HOOKS["exit"]()

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


_DEVICE_STRING = re.compile(r"([A-Za-z_]+)(?::([1-9][0-9]*|0))?")    # ASCII letters and digits only


def _parse(text, index):
    """A device string (``Device::Device(const std::string&)``): a type, then maybe ``:`` and a
    decimal index without leading zeros; an explicit ``index`` excludes one in the string."""
    if not text:
        raise RuntimeError("Device string must not be empty")
    match = _DEVICE_STRING.fullmatch(text)
    if match is None:
        raise RuntimeError(f"Invalid device string: '{text}'")
    if index is not None and not isinstance(index, int):
        raise TypeError(f"device(): argument 'index' (position 2) must be int, not {index.__class__.__name__}")
    if match[2] is not None:
        if index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {text}")
        index = int(match[2])
    return match[1], index


_HOOKS = {}


def register_context_hooks(enter, exit_):
    """``enter(device)`` pushes the device's context on the mode stack; ``exit_()`` pops it."""
    _HOOKS.update(enter=enter, exit=exit_)


_CPU = device("cpu")     # what ``device=None`` means, made once: a device is never changed


def as_device(d):
    """The device an operator works on: cuda without an index means the current device, cuda:0
    (torch's ``ensure_has_index``), so that a tensor made on 'cuda' reports cuda:0."""
    if d is None:
        return _CPU
    if isinstance(d, int):
        return device("cuda", d)
    d = d if isinstance(d, device) else device(d)
    return device("cuda", 0) if d.type == "cuda" and d.index is None else d
