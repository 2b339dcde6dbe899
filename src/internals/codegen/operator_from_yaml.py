"""Add an operator while the program runs, from two YAML snippets, the way a build adds one to
PyTorch: an entry in the format of ``native_functions.yaml``, one in the format of
``derivatives.yaml``, and the kernels the first one names.

torch does this at build time, in three generated places: ``RegisterSchema.cpp`` (``m.def`` of
each schema), ``RegisterCPU.cpp`` and friends (``m.impl`` of each ``dispatch:`` kernel), both
from ``torchgen/gen.py``, and the autograd layer from ``tools/autograd/gen_autograd.py``
(``load_derivatives``, then ``Functions.cpp``'s node class and ``VariableType``'s Autograd
kernel). :func:`register_operator` runs the package's own generator (``codegen/gen_autograd.py``)
on the snippets and executes what it writes instead of saving it, so the installed files stay as
they are. It is chapter 8's core exercise (``internals.exercises.use_mine("register_operator",
...)``); ``internals.library.register_operator`` is the same function.
"""
import threading

import yaml
from torchgen.model import FunctionSchema

from ..aten import dispatcher
from ..autograd import functions_manual
from ..autograd.generated import functions as _generated_functions
from ..autograd.generated import variable_type as _generated_variable_type
from . import gen_autograd

__all__ = ["OperatorRegistration", "register_operator"]

WHERE = "registered at a native_functions.yaml snippet"
_lock = threading.RLock()       # one registration or undo at a time; a failed one undoes itself inside


class OperatorRegistration:
    """What one :func:`register_operator` call put in the dispatcher; :meth:`undo` takes it back."""

    def __init__(self):
        self.defined = []        # the OperatorHandles it defined
        self.kernels = []        # (operator name, dispatch key, KernelFunction) it registered
        self.nodes = {}          # node class name -> the generated backward Node class

    @property
    def operators(self):
        return [op.name for op in self.defined]

    def undo(self):
        """Remove every registration this call made, newest first. Only what is still its own
        goes: after an undo and a second registration of the same schema, undoing this one again
        leaves the second alone."""
        with _lock:
            for name, key, kernel in reversed(self.kernels):
                op = dispatcher.operators.get(name)
                if op is not None and op.kernels.get(key) is kernel:
                    dispatcher.deregister(name, key)
            for op in reversed(self.defined):
                if dispatcher.operators.get(op.name) is op and op.schema is not None:
                    dispatcher.deregister(op.name)
            self.kernels, self.defined = [], []

    def __repr__(self):
        return f"<OperatorRegistration of {', '.join(self.operators) or 'nothing (undone)'}>"


def register_operator(native_functions, derivatives, kernels):
    """Define the operators of ``native_functions`` (YAML text, entries as in
    ``native_functions.yaml``) in the ``aten`` namespace, register each ``dispatch:`` kernel
    (``kernels`` maps the names the YAML gives to functions), and for each entry of
    ``derivatives`` (YAML text, as in ``derivatives.yaml``) generate the backward node and the
    Autograd kernel of every operator it covers. All or nothing: a schema that is already
    defined raises ``RuntimeError`` and leaves the dispatcher as it was."""
    infos = gen_autograd.load_derivatives(text=derivatives)
    gen_autograd.match_natives(infos, text=native_functions)
    registration = OperatorRegistration()
    with _lock:
        try:
            for entry in yaml.safe_load(native_functions) or []:
                _define(registration, entry, kernels)
            for info in infos:
                _register_autograd(registration, info)
        except BaseException:
            registration.undo()
            raise
    return registration


def _impl(registration, name, key, kernel):
    dispatcher.impl(name, key, kernel)
    registration.kernels.append((name, key, kernel))


def _define(registration, entry, kernels):
    """``m.def`` of the schema, then ``m.impl`` of each kernel under its keys. No ``dispatch:``
    means a ``CompositeImplicitAutograd`` kernel named after the operator, as in torch."""
    schema = FunctionSchema.parse(entry["func"])
    op = dispatcher.define("aten", entry["func"], WHERE)
    registration.defined.append(op)
    dispatch = entry.get("dispatch") or {"CompositeImplicitAutograd": str(schema.name.name)}
    for keys, kernel_name in dispatch.items():
        if kernel_name not in kernels:
            raise KeyError(f"{op.name}: the YAML names the kernel {kernel_name!r}, which kernels does not hold")
        kernel = dispatcher.KernelFunction(kernels[kernel_name], f"{WHERE} ({kernel_name})")
        for key in keys.split(","):
            _impl(registration, op.name, key.strip(), kernel)


def _generated_namespace():
    """The names the generated code uses: what ``functions.py`` and ``variable_type.py`` import
    (Node, SavedVariable, the grad-mode guards) and every helper a formula may call."""
    namespace = dict(vars(_generated_variable_type))
    namespace.update(vars(_generated_functions))
    namespace.update({name: getattr(functions_manual, name) for name in functions_manual.__all__})
    namespace["__name__"] = __name__
    return namespace


def _register_autograd(registration, info):
    """Functions.cpp's node class and VariableType's kernel, generated and executed; the kernel
    goes under the ``Autograd`` alias key of each operator the derivative entry covers."""
    namespace = _generated_namespace()
    exec(gen_autograd.gen_node(info), namespace)    # noqa: S102 - code the package's own generator wrote
    registration.nodes[info.node] = namespace[info.node]
    namespace["OPS"] = {str(s.name): dispatcher.find(str(s.name)) for s in info.natives}
    for schema in info.natives:
        name, code = gen_autograd.gen_kernel(info, schema)
        exec(code, namespace)                        # noqa: S102 - code the package's own generator wrote
        kernel = dispatcher.KernelFunction(namespace[name], f"{WHERE} (generated Autograd kernel)",
                                           with_keyset=True)
        _impl(registration, f"aten::{schema.name}", "Autograd", kernel)
