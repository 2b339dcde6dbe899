"""Operators as Python objects (``torch/_ops.py``): ``internals.ops.aten.add.Tensor``.

``ops.<namespace>.<name>`` is an OpOverloadPacket (all overloads of one name) and
``.<overload>`` (``.default`` for the unnamed one) an OpOverload: one schema, one dispatcher
entry, callable. These are the ``func`` objects a ``__torch_dispatch__`` receives.
"""
from .aten import dispatcher
from .c10.sym import is_symbolic

__all__ = ["ops", "OpOverload", "OpOverloadPacket"]


class OpOverload:
    def __init__(self, packet, handle):
        self._handle = handle
        self.overloadpacket = packet
        self._overloadname = handle.overload or "default"
        self._schema = _Schema(handle)
        self.namespace = handle.namespace
        self.__name__ = f"{packet.__name__}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        if self._number_slots is not _NONE:
            # a graph's code calls ``add.Tensor(x, zf0)``: the symbol too is wrapped, as the binding wraps it
            args, kwargs = self.wrap_numbers(args, kwargs, symbols=True)
        return self._handle(*args, **kwargs)

    def redispatch(self, keyset, *args, **kwargs):
        if self._number_slots is not _NONE:
            args, kwargs = self.wrap_numbers(args, kwargs)
        return self._handle.redispatch(keyset, *args, **kwargs)

    @property
    def _number_slots(self):
        """The positions and names of the ``Tensor`` and ``Tensor?`` arguments, or _NONE."""
        slots = self.__dict__.get("_slots")
        if slots is None:
            slots = self.__dict__["_slots"] = _tensor_slots(self._handle.schema) or _NONE
        return slots

    def wrap_numbers(self, args, kwargs, symbols=False):
        """A Python number given for a Tensor argument as the wrapped-number tensor the Python
        binding would have made (torch's ``toIValue``): a dispatch mode that hands
        ``mul.Tensor(x, 1.702)`` on, as torch's modes see it, calls the same kernel as ``x * 1.702``."""
        from .aten.native.tensor_factories import wrap_scalar  # aten.native's kernels import this module
        positions, names = self._number_slots
        number = _is_number_or_symbol if symbols else _is_number
        if any(i < len(args) and number(args[i]) for i in positions):
            args = tuple(wrap_scalar(a) if i in positions and number(a) else a for i, a in enumerate(args))
        if kwargs and any(number(kwargs.get(n)) for n in names):
            kwargs = {k: wrap_scalar(v) if k in names and number(v) else v for k, v in kwargs.items()}
        return args, kwargs

    def name(self):
        return self._handle.name

    def __str__(self):
        return f"{self.namespace}.{self.__name__}"

    def __repr__(self):
        return f"<OpOverload(op='{self.overloadpacket}', overload='{self._overloadname}')>"


_NONE = ((), ())


def _is_number(value):
    return type(value) in (int, float, bool, complex)


def _is_number_or_symbol(value):
    return _is_number(value) or is_symbolic(value)


def _tensor_slots(schema):
    """(positions, keyword names) of the arguments typed ``Tensor`` or ``Tensor?``."""
    if schema is None:
        return None
    arguments = schema.arguments
    positions = tuple(i for i, a in enumerate(arguments.flat_positional) if str(a.type) in ("Tensor", "Tensor?"))
    names = tuple(a.name for a in arguments.flat_all if str(a.type) in ("Tensor", "Tensor?"))
    return (positions, names) if names else None


class _Schema:
    """The schema as torch prints it: ``aten::add.Tensor(Tensor self, ...) -> Tensor``."""

    def __init__(self, handle):
        self.name = handle.name
        self.overload_name = handle.overload
        self._fs = handle.schema
        self.arguments = handle.schema.arguments
        self.returns = handle.schema.returns

    def __str__(self):
        return f"{self.name.split('::')[0]}::{self._fs}"

    __repr__ = __str__


def _defined(prefix):
    """The names of the overloads of ``prefix`` (``ns::name``) that have a schema: an operator that
    only has kernels so far (``m.impl`` before ``m.def``) cannot be called."""
    return [n for n, op in dispatcher.operators.items()
            if (n == prefix or n.startswith(prefix + ".")) and op.schema is not None]


class OpOverloadPacket:
    def __init__(self, namespace, name):
        self.namespace = namespace
        self.__name__ = name
        self._overloads = {}

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        qualified = f"{self.namespace}::{self.__name__}" + ("" if overload == "default" else f".{overload}")
        handle = dispatcher.operators.get(qualified)
        if handle is None or handle.schema is None:     # kernels registered, no schema yet: not callable
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{overload}'")
        cached = self._overloads.get(overload)
        if cached is None or cached._handle is not handle:    # re-defined since: a new object
            cached = self._overloads[overload] = OpOverload(self, handle)
        return cached

    def overloads(self):
        prefix = f"{self.namespace}::{self.__name__}"
        return ["default" if n == prefix else n[len(prefix) + 1:] for n in _defined(prefix)]

    def __call__(self, *args, **kwargs):
        return self.default(*args, **kwargs)

    def __str__(self):
        return f"{self.namespace}.{self.__name__}"

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"


class _OpNamespace:
    def __init__(self, name):
        self.name = name
        self._packets = {}

    def __getattr__(self, op_name):
        prefix = f"{self.name}::{op_name}"
        if not _defined(prefix):        # a dunder probe (copy, inspect) gets a plain AttributeError;
            if op_name.startswith("__"):    # ``aten.__lshift__`` is an operator
                raise AttributeError(op_name)
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        return self._packets.setdefault(op_name, OpOverloadPacket(self.name, op_name))


class _Ops:
    def __init__(self):
        self._namespaces = {}

    def __getattr__(self, namespace):
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        return self._namespaces.setdefault(namespace, _OpNamespace(namespace))


ops = _Ops()
