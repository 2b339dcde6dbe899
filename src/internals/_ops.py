"""Operators as Python objects (``torch/_ops.py``): ``internals.ops.aten.add.Tensor``.

``ops.<namespace>.<name>`` is an OpOverloadPacket (all overloads of one name) and
``.<overload>`` (``.default`` for the unnamed one) an OpOverload: one schema, one dispatcher
entry, callable. These are the ``func`` objects a ``__torch_dispatch__`` receives.
"""
from torchgen.model import BaseTy, BaseType, ListType, OptionalType

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
        result = self._handle(*args, **kwargs)
        if isinstance(result, (tuple, list)):
            if self._returns_list:
                return list(result)     # a ``Tensor[]`` comes back to Python as a list (torch's IValue to list)
            if type(result) is not tuple and len(self._handle.schema.returns) > 1:
                # several returns come back as a plain tuple, whether a kernel's named tuple or a
                # dispatch mode's list: only torch's Python bindings make the named ``return_types``
                # tuple (``max.dim`` gives a tuple, ``torch.max(x, 0)`` a max)
                return tuple(result)
        return result

    @property
    def _returns_list(self):
        """Whether the schema returns one list (``Tensor[]``): torch hands such a result to Python as
        a list, where the kernels here return a tuple."""
        returns = self._handle.schema.returns
        return len(returns) == 1 and isinstance(returns[0].type, ListType)

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


_found = {}                  # prefix -> its overloads' names, while dispatcher.schema_generation is _found_at
_found_at = None


def _defined(prefix):
    """The names of the overloads of ``prefix`` (``ns::name``) that have a schema: an operator that
    only has kernels so far (``m.impl`` before ``m.def``) cannot be called. Each ``torch.ops.aten.x``
    and each call of an overload packet asks, and the walk over five thousand operators took
    milliseconds: the answer is kept until a schema is defined or taken away, and a kept answer
    is checked against the table, which code that restores the dispatcher edits directly."""
    global _found, _found_at
    if _found_at != dispatcher.schema_generation:
        _found, _found_at = {}, dispatcher.schema_generation
    names = _found.get(prefix)
    operators = dispatcher.operators
    if names is None or not all(n in operators and operators[n].schema is not None for n in names):
        names = _found[prefix] = [n for n, op in operators.items()
                                  if (n == prefix or n.startswith(prefix + ".")) and op.schema is not None]
    return list(names)


def _fits(schema, args, kwargs, numbers_as_tensors):
    """Whether ``args`` and ``kwargs`` bind to ``schema``'s arguments with values of their types."""
    arguments = schema.arguments
    positional = arguments.flat_positional
    if len(args) > len(positional):
        return False
    by_name = {a.name: a for a in arguments.flat_all}
    if any(k not in by_name for k in kwargs):
        return False
    given = dict(zip((a.name for a in positional), args))
    if any(k in given for k in kwargs):
        return False
    given.update(kwargs)
    for name, argument in by_name.items():
        if name not in given:
            if argument.default is None:
                return False
        elif not _value_fits(argument.type, given[name], numbers_as_tensors):
            return False
    return True


_NUMBERS = (int, float, bool, complex)


def _value_fits(typ, value, numbers_as_tensors):
    """Whether one Python value converts to a schema type, as torch's ``toIValue`` checks it."""
    from ._tensor_base import TensorBase  # imported late: the frontend's base imports aten (a real cycle)
    if isinstance(typ, OptionalType):
        return value is None or _value_fits(typ.elem, value, numbers_as_tensors)
    if isinstance(typ, ListType):
        if typ.size is not None and _value_fits(typ.elem, value, False) and not isinstance(value, TensorBase):
            return True     # ``int[1] dim`` takes a lone int
        return isinstance(value, (list, tuple)) and all(_value_fits(typ.elem, v, numbers_as_tensors) for v in value)
    if not isinstance(typ, BaseType):
        return True
    name = typ.name
    if name == BaseTy.Tensor:
        return isinstance(value, TensorBase) or (numbers_as_tensors and type(value) in _NUMBERS)
    if name == BaseTy.Scalar:
        return type(value) in _NUMBERS or is_symbolic(value)
    if name in (BaseTy.int, BaseTy.SymInt):
        return type(value) in (int, bool) or is_symbolic(value)
    if name == BaseTy.float:
        return type(value) in (int, float, bool) or is_symbolic(value)
    if name == BaseTy.bool:
        return type(value) is bool
    if name == BaseTy.str:
        return isinstance(value, str)
    if name == BaseTy.Device:
        return not isinstance(value, TensorBase)    # a device, its name or its index
    return not isinstance(value, TensorBase) and type(value) not in _NUMBERS


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
        return getattr(self, self._resolve(args, kwargs))(*args, **kwargs)

    def _resolve(self, args, kwargs):
        """The overload a call names by its arguments, as torch's ``_jit_get_operation`` picks it:
        the first schema the arguments fit. A Python number fits a ``Tensor`` only for the
        arithmetic operators torch lets take one (``add(x, 1)`` is ``add.Tensor``)."""
        names = self.overloads()
        numbers_as_tensors = self.namespace == "aten" and self.__name__ in _NUMBERS_AS_TENSORS
        for name in names:
            if _fits(getattr(self, name)._handle.schema, args, kwargs, numbers_as_tensors):
                return name
        schemas = "\n".join(str(getattr(self, name)._schema) for name in names)
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any schema:\n"
                           + schemas)

    def __str__(self):
        return f"{self.namespace}.{self.__name__}"

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"


# the operators whose Tensor arguments take Python numbers when called through a packet
# (``should_allow_numbers_as_tensors`` in python_arg_parser.cpp)
_NUMBERS_AS_TENSORS = frozenset(
    base + suffix
    for base in ("add", "div", "divide", "mul", "multiply", "sub", "subtract", "true_divide", "floor_divide")
    for suffix in ("", "_", "_out")) | {"to", "_to_copy", "copy_", "copy", "_conj"}


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
