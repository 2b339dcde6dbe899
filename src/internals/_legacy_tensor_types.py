"""The legacy tensor types: ``torch.FloatTensor``, ``torch.LongTensor``, ... (``torch/csrc/tensor/python_tensor.cpp``).

Each is a class whose call makes a CPU tensor of its dtype -- from data (a sequence, copied as
``tensor()`` copies) or, given sizes, uninitialized (``FloatTensor(2, 3)``; no argument: no
element) -- and whose ``isinstance`` asks for that dtype on the CPU, as torch's metaclass does.
"""
from ._python_arg_parser import PythonArgParser
from ._tensor_base import Size, TensorBase
from .aten import dispatcher
from .aten.native.tensor_factories import tensor
from .c10 import scalar_type as st
from .c10.device import as_device

__all__ = ["legacy_new", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
           "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


# ``legacy_tensor_generic_ctor_new``'s signatures, in torch's order (the hidden ones are tried
# but not listed when none matches)
_PARSER = PythonArgParser(["new(*, Device? device=None)", "new(Storage storage)", "new(*, int64_t cdata)|hidden",
                           "new(Tensor other)", "new(Tensor other, *, Device? device=None)|hidden",
                           "new(SymIntArrayRef size, *, Device? device=None)",
                           "new(PyObject* data, *, Device? device=None)"])
_SIZES, _DATA = 5, 6


def legacy_new(dtype, args, kwargs):
    """``legacy_tensor_generic_ctor_new``: sizes (ints, or a Size) make an uninitialized CPU
    tensor, no argument an empty one, a tensor an alias of it; anything else is data, copied
    into ``dtype`` as ``tensor()`` copies (a plain tuple of ints is data too: only a Size is sizes).
    Arguments no signature takes raise torch's TypeError, which lists the signatures."""
    r = _PARSER.parse(args, kwargs)
    device = kwargs.get("device")
    if device is not None and as_device(device).type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {as_device(device).type} "
                           "was passed")
    if r.idx in (3, 4):
        return dispatcher.call("alias", args[0])
    if r.idx == _SIZES and (len(args) != 1 or isinstance(args[0], (int, Size))):
        return dispatcher.call("empty.memory_format", r.intlist(0), dtype=dtype)
    if r.idx in (_SIZES, _DATA, 1):
        data = args[0]
        if isinstance(data, str):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if not hasattr(type(data), "__getitem__") or isinstance(data, dict):     # ``PySequence_Check``
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return tensor(data, dtype=dtype)
    return dispatcher.call("empty.memory_format", [0], dtype=dtype)


class _LegacyTensorType(type):
    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, args, kwargs)

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
