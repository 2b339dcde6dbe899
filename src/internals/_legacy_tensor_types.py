"""The legacy tensor types: ``torch.FloatTensor``, ``torch.LongTensor``, ... (``torch/csrc/tensor/python_tensor.cpp``).

Each is a class whose call makes a CPU tensor of its dtype -- from data (a sequence, copied as
``tensor()`` copies) or, given sizes, uninitialized (``FloatTensor(2, 3)``; no argument: no
element) -- and whose ``isinstance`` asks for that dtype on the CPU, as torch's metaclass does.
"""
from ._tensor_base import Size, TensorBase
from .aten import dispatcher
from .aten.native.tensor_factories import tensor
from .c10 import scalar_type as st
from .c10.device import as_device

__all__ = ["legacy_new", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
           "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


def legacy_new(dtype, args, device=None):
    """``legacy_tensor_generic_ctor_new``: sizes (ints, or a Size) make an uninitialized CPU
    tensor, no argument an empty one, a tensor an alias of it; anything else is data, copied
    into ``dtype`` as ``tensor()`` copies (a plain tuple of ints is data too: only a Size is sizes)."""
    if device is not None and as_device(device).type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {as_device(device).type} "
                           "was passed")
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, TensorBase):
            return dispatcher.call("alias", data)
        if isinstance(data, Size):
            return dispatcher.call("empty.memory_format", list(data), dtype=dtype)
        if isinstance(data, str):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if isinstance(data, (float, bool, complex)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return tensor(data, dtype=dtype)
    if not all(isinstance(n, int) for n in args):
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)})")
    return dispatcher.call("empty.memory_format", list(args) if args else [0], dtype=dtype)


class _LegacyTensorType(type):
    def __call__(cls, *args, device=None):
        return legacy_new(cls.dtype, args, device)

    def __instancecheck__(cls, obj):
        return isinstance(obj, TensorBase) and obj.dtype is cls.dtype and obj.device.type == "cpu"


def _legacy_type(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype, "__module__": "internals", "__doc__": f"``torch.{name}``"})


FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor = (
    _legacy_type(n, d) for n, d in (("FloatTensor", st.float32), ("DoubleTensor", st.float64),
                                    ("HalfTensor", st.float16), ("BFloat16Tensor", st.bfloat16)))
ByteTensor, CharTensor, ShortTensor, IntTensor, LongTensor, BoolTensor = (
    _legacy_type(n, d) for n, d in (("ByteTensor", st.uint8), ("CharTensor", st.int8), ("ShortTensor", st.int16),
                                    ("IntTensor", st.int32), ("LongTensor", st.int64), ("BoolTensor", st.bool_)))
