"""The legacy tensor types: ``torch.FloatTensor``, ``torch.LongTensor``, ... (``torch/csrc/tensor/python_tensor.cpp``).

Each is a class whose call makes a CPU tensor of its dtype -- from data (a sequence, copied as
``tensor()`` copies) or, given sizes, uninitialized (``FloatTensor(2, 3)``; no argument: no
element) -- and whose ``isinstance`` asks for that dtype on the CPU, as torch's metaclass does.
"""
from ._tensor_base import TensorBase
from .aten import dispatcher
from .aten.native.tensor_factories import tensor
from .c10 import scalar_type as st

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
           "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


class _LegacyTensorType(type):
    def __call__(cls, *args):
        if len(args) == 1 and not isinstance(args[0], int):
            if isinstance(args[0], tuple) and all(isinstance(n, int) for n in args[0]):   # a Size
                return dispatcher.call("empty.memory_format", list(args[0]), dtype=cls.dtype)
            if isinstance(args[0], str):
                raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")
            return tensor(args[0], dtype=cls.dtype)
        return dispatcher.call("empty.memory_format", list(args) if args else [0], dtype=cls.dtype)

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
