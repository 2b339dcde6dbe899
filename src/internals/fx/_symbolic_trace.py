"""symbolic_trace and Tracer: a module's ``forward`` run on Proxies (``torch/fx/_symbolic_trace.py``).

Unlike ``make_fx``, which records the aten operators a function reaches, symbolic tracing
records the calls as the Python source spelled them: ``self.linear(x)`` is one ``call_module``
node (a library layer is a leaf, not traced into), ``x.relu()`` a ``call_method`` node,
``internals.relu(x)`` a ``call_function`` node, ``self.weight`` a ``get_attr`` node. Nothing is
computed: no tensor data exists while tracing, which is why control flow on a traced value fails.
"""
import builtins
import functools
import inspect
import math
import sys
import types

from .. import nn
from .._tensor import Tensor
from .graph import Graph
from .graph_module import GraphModule
from .proxy import Proxy

__all__ = ["Tracer", "symbolic_trace", "wrap"]

# (the globals dict of a module, a function's name in it): calls through these names are
# recorded as call_function nodes instead of being run (``wrap``).
_wrapped = []

def wrap(fn_or_name):
    """Record calls of a function of the calling module's scope as one node, without tracing
    into it (fx's ``wrap``): call it at module level, with the function or its name."""
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    caller = sys._getframe(1)
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped.append((caller.f_globals, name))
    return fn_or_name

def _assert(condition, message):
    """The check a ``concrete_args`` value leaves in the graph: the input must be that value."""
    assert condition, message

def _assert_is_none(value, message):
    assert value is None, message

class Tracer:
    """Runs a module's ``forward`` (or a function) on Proxies and collects the graph."""

    def is_leaf_module(self, m, module_qualified_name):
        """A layer of the library (``internals.nn``) is called as one ``call_module`` node, not
        traced into; a Sequential is only a container, so it is traced through, as in fx."""
        return m.__module__.startswith("internals.nn") and not isinstance(m, nn.Sequential)

    def path_of_module(self, mod):
        for name, candidate in self.root.named_modules():
            if candidate is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def create_proxy(self, kind, target, args, kwargs, name=None):
        node = self.graph.create_node(kind, target, self.create_arg(tuple(args)), self.create_arg(dict(kwargs)),
                                      name)
        return Proxy(node, self)

    def create_arg(self, a):
        """A node's argument: Proxies become their nodes, tensors of the module ``get_attr``
        nodes (a stray tensor is kept on the module as ``_tensor_constant0``)."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, tuple):
            return tuple(self.create_arg(v) for v in a)
        if isinstance(a, list):
            return [self.create_arg(v) for v in a]
        if isinstance(a, dict):
            return {k: self.create_arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, Tensor):
            for name, t in (*self.root.named_parameters(), *self.root.named_buffers()):
                if t is a:
                    return self.graph.get_attr(name)
            name = f"_tensor_constant{len(self._constants)}"
            self._constants[name] = a
            return self.graph.get_attr(name)
        if isinstance(a, nn.Module):
            raise NotImplementedError(f"argument of type: {type(a)}")
        return a

    def call_module(self, m, forward, args, kwargs):
        name = self.path_of_module(m)
        if self.is_leaf_module(m, name):
            return self.create_proxy("call_module", name, args, kwargs)
        return forward(*args, **kwargs)

    # fx's default: a buffer read is the tensor itself, so what is computed from the buffer alone
    # runs while tracing and enters the graph as a constant; the buffer used with a traced value
    # becomes a ``get_attr`` node (``create_arg``). True makes every buffer read a node.
    proxy_buffer_attributes = False

    def getattr(self, attr, value):
        """A parameter read inside a traced forward becomes a ``get_attr`` node, a buffer read too
        when ``proxy_buffer_attributes`` says so (fx's ``_module_getattr``)."""
        if isinstance(value, nn.Parameter) or (self.proxy_buffer_attributes and isinstance(value, Tensor)):
            for name, t in (*self.root.named_parameters(), *self.root.named_buffers()):
                if t is value:      # read again, the same node (fx's parameter_proxy_cache)
                    if name not in self._attr_proxies:
                        self._attr_proxies[name] = Proxy(self.graph.get_attr(name), self)
                    return self._attr_proxies[name]
        return value

    def trace(self, root, concrete_args=None):
        """The graph of ``root`` (a module's ``forward`` or a function) on placeholder Proxies."""
        if isinstance(root, nn.Module):
            self.root, fn, bound = root, type(root).forward, [root]
        else:
            if not isinstance(root, types.FunctionType):    # a lambda or a def, as fx asserts
                raise AssertionError(f"Expected FunctionType, got {type(root)}")
            self.root, fn, bound = nn.Module(), root, []
        self.graph, self._constants, self._attr_proxies = Graph(), {}, {}
        fn = inspect.unwrap(fn)
        params = list(inspect.signature(fn).parameters.values())[len(bound):]
        variadic = [p for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if variadic:
            if concrete_args:
                raise NotImplementedError("concrete_args with *args or **kwargs is not supported here")
            # fx's order: the named parameters (keyword-only ones too), then ``*args``, then ``**kwargs``,
            # each one placeholder; the function runs with its code changed so that each is a plain
            # positional parameter: ``args`` receives one Proxy, read as ``args[0]`` (fx's ``_patch_function``)
            params = [p for p in params if p not in variadic] + variadic
            fn = _patch_function(fn, len(bound) + len(params))
        if isinstance(concrete_args, tuple):
            if len(params) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(params)} arguments but got {len(concrete_args)} "
                                   "concrete arguments")
            concrete_args = {p.name: v for p, v in zip(params, concrete_args, strict=True)}
        args = [self._placeholder(p, concrete_args or {}) for p in params]
        kwargs = {p.name: a for p, a in zip(params, args, strict=True) if p.kind is p.KEYWORD_ONLY and not variadic}
        args = args[:len(args) - len(kwargs)]
        self.fn_globals = getattr(fn, "__globals__", {})
        with _patched(self):
            result = fn(*bound, *args, **kwargs)
        self.graph.output(self.create_arg(result))
        for name, value in self._constants.items():
            setattr(self.root, name, value)
        return self.graph

    def _placeholder(self, param, concrete_args):
        default = () if param.default is inspect.Parameter.empty else (param.default,)
        star = {param.VAR_POSITIONAL: "*", param.VAR_KEYWORD: "**"}.get(param.kind)
        if star:        # target ``*args``, name ``_args`` (fx turns what is no identifier into ``_``)
            return self.create_proxy("placeholder", star + param.name, (), {})
        if param.name not in concrete_args:
            return self.create_proxy("placeholder", param.name, default, {}, name=param.name)
        value = concrete_args[param.name]
        proxy = self.create_proxy("placeholder", f"{param.name}_1", default, {}, name=f"{param.name}_1")
        if value is None:
            message = f"{param.name} has been specialized to have value None but got another value"
            self.create_proxy("call_function", _assert_is_none, (proxy, message), {})
        elif isinstance(value, (bool, int, float, str)):
            self.create_proxy("call_function", _assert, (proxy == value, f"{param.name} has been specialized to have "
                                                         f"value {value} but got another value"), {})
        return value

def _patch_function(fn, nargs):
    """``fn`` with its ``*args``/``**kwargs`` turned into plain positional parameters, the keyword-only
    ones too: a copy of its code with other flags and counts (fx's ``_patch_function``)."""
    code = fn.__code__
    code = code.replace(co_flags=code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS),
                        co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0)
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)

class _patched:
    """While tracing: module calls go through ``tracer.call_module``, parameter reads through
    ``tracer.getattr``, and the ``wrap``ped names record their calls (fx patches the same)."""

    def __init__(self, tracer):
        self.tracer, self.saved = tracer, []

    def __enter__(self):
        tracer = self.tracer
        module_call, module_getattr = nn.Module.__call__, nn.Module.__getattr__

        def call(mod, *args, **kwargs):
            return tracer.call_module(mod, functools.partial(module_call, mod), args, kwargs)

        def get(mod, name):
            return tracer.getattr(name, module_getattr(mod, name))
        self._set(nn.Module, "__call__", call)
        self._set(nn.Module, "__getattr__", get)
        # ``math``'s functions record their calls on a traced value (``math.sqrt(x.size(-1))``),
        # reached as ``math.sqrt`` or as a global of the traced code's module: fx's autowrap.
        for name, fn in list(vars(math).items()):
            if isinstance(fn, types.BuiltinFunctionType):
                self._set(math, name, _recording(tracer, fn))
                for scope_name, value in list(tracer.fn_globals.items()):
                    if value is fn:
                        self._set_global(tracer.fn_globals, scope_name, _recording(tracer, fn))
        for scope, name in _wrapped:
            if name in scope or name in vars(builtins):
                self._set_global(scope, name, _recording(tracer, scope.get(name, vars(builtins).get(name))))
        return self

    def _set(self, owner, name, value):
        self.saved.append((setattr, owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def _set_global(self, scope, name, value):
        self.saved.append((dict.__setitem__, scope, name, scope[name]) if name in scope
                          else (dict.pop, scope, name))
        scope[name] = value

    def __exit__(self, *exc):
        for undo, *args in reversed(self.saved):
            undo(*args)

def _recording(tracer, fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if any(isinstance(a, Proxy) for a in (*args, *kwargs.values())):
            return tracer.create_proxy("call_function", fn, args, kwargs)
        return fn(*args, **kwargs)
    return call

def symbolic_trace(root, concrete_args=None):
    """``root`` (a module or a function) traced into a GraphModule whose ``code`` is the recorded
    program (fx's ``symbolic_trace``); ``concrete_args`` fixes some inputs to given values."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
