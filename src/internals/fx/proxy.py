"""Proxy: a stand-in value that records what is done to it (``torch/fx/proxy.py``).

While ``symbolic_trace`` runs a module's ``forward``, its inputs are Proxies. Each operation on
one (``x + 1``, ``x.relu()``, ``x.shape``, ``internals.relu(x)`` through ``__torch_function__``)
adds a node to the tracer's graph and returns a new Proxy for the node's result. What a Proxy
cannot do is be a Python value: ``if x:`` or ``for v in x:`` would need the data, so they raise
``TraceError``.
"""
import builtins
import dis
import operator
import sys

from .._tensor import Tensor

__all__ = ["Attribute", "Proxy", "TraceError"]


class TraceError(ValueError):
    """What symbolic tracing raises when a program needs a traced value's data (fx's class)."""


class Proxy:
    """The value of ``node`` while tracing; every use goes through ``tracer.create_proxy``."""

    def __init__(self, node, tracer):
        self.node, self.tracer = node, tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, name):
        # An attribute may be read (``x.shape``) or called (``x.relu()``): which one is known only
        # when the Attribute is used, so its node is made then.
        return Attribute(self, name)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __getitem__(self, index):
        return self.tracer.create_proxy("call_function", operator.getitem, (self, index), {})

    def __iter__(self):
        # ``a, b = proxy`` can be traced: the caller's next instruction says how many values it
        # unpacks, so that many ``getitem`` nodes stand for them (fx reads the bytecode the same way).
        caller = sys._getframe(1)
        for inst in dis.get_instructions(caller.f_code):
            if inst.offset == caller.f_lasti and inst.opname == "UNPACK_SEQUENCE":
                return iter([self[i] for i in range(inst.argval)])
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or as a "
            "*args or **kwargs function argument. See the torch.fx docs on pytorch.org for a more detailed "
            "explanation of what types of control flow can be traced, and check out the Proxy docstring for "
            "help troubleshooting Proxy iteration errors")

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def keys(self):
        """``**proxy`` asks for the keys first: a ``keys`` call the program can record."""
        return self.tracer.create_proxy("call_method", "keys", (self,), {})

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to "
                           "be recorded, please call torch.fx.wrap('len') at module scope")

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """A library function called on a Proxy: a Tensor method becomes ``call_method`` (by
        name), anything else ``call_function`` of the function itself."""
        tracer = next(a.tracer for a in _flat(args, kwargs) if isinstance(a, Proxy))
        if getattr(Tensor, getattr(func, "__name__", ""), None) is func:
            return tracer.create_proxy("call_method", func.__name__, args, kwargs or {})
        return tracer.create_proxy("call_function", func, args, kwargs or {})


class Attribute(Proxy):
    """``proxy.name``: a ``call_method`` node when called, else a ``getattr`` node (made once)."""

    def __init__(self, root, attr):
        self.root, self.attr, self.tracer, self._node = root, attr, root.tracer, None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", builtins.getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


def _flat(args, kwargs):
    for a in (*args, *(kwargs or {}).values()):
        if isinstance(a, (tuple, list)):
            yield from a
        else:
            yield a


def _magic(name):
    target = getattr(operator, name)

    def method(self, *rest):
        return self.tracer.create_proxy("call_function", target, (self, *rest), {})

    def reflected(self, other):
        return self.tracer.create_proxy("call_function", target, (other, self), {})
    return method, reflected


# The Python operators a Proxy records, as fx's ``magic_methods`` lists them; the arithmetic ones
# also from the right (``2 * x``), as its ``reflectable_magic_methods``.
_REFLECTABLE = ["add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift", "and_", "or_",
                "xor", "matmul"]
for _name in _REFLECTABLE + ["eq", "ne", "lt", "gt", "le", "ge", "pos", "neg", "invert"]:
    _dunder = _name.rstrip("_")
    _method, _reflected = _magic(_name)
    setattr(Proxy, f"__{_dunder}__", _method)
    if _name in _REFLECTABLE:
        setattr(Proxy, f"__r{_dunder}__", _reflected)
