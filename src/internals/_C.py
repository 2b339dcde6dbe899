"""Dispatcher introspection, named and printed as torch's (``torch/csrc/utils/python_dispatch.cpp``).

``internals._C._dispatch_keys(t)`` is ``torch._C._dispatch_keys(t)``: the same questions,
asked of the `internals` dispatcher. ``TensorBase`` and ``Size`` are here too, as in torch._C.
"""
from ._disable_torch_function import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
    _has_torch_function,
    _has_torch_function_unary,
    _has_torch_function_variadic,
    _is_torch_function_enabled,
    _is_torch_function_mode_enabled,
)
from ._tensor_base import Size, TensorBase
from .aten import dispatcher
from .aten import python_torch_function_tls as tf_tls
from .aten.native.batch_linear_algebra import _LinAlgError
from .c10.dispatch_key import DispatchKey, DispatchKeySet
from .c10.local_dispatch_key_set import tls

__all__ = ["TensorBase", "Size", "_LinAlgError",
           "_dispatch_keys", "_dispatch_dump", "_dispatch_dump_table", "_dispatch_keyset_full",
           "_dispatch_tls_local_include_set", "_dispatch_tls_local_exclude_set",
           "_dispatch_has_kernel_for_dispatch_key", "_dispatch_key_for_device",
           # __torch_function__'s switches and mode stack (torch/csrc/utils/disable_torch_function.cpp)
           "DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
           "_is_torch_function_enabled", "_is_torch_function_mode_enabled", "_has_torch_function",
           "_has_torch_function_unary", "_has_torch_function_variadic", "_push_on_torch_function_stack",
           "_pop_torch_function_stack", "_len_torch_function_stack", "_get_function_stack_at"]

_push_on_torch_function_stack = tf_tls.push_onto_stack
_pop_torch_function_stack = tf_tls.pop_stack
_len_torch_function_stack = tf_tls.stack_len
_get_function_stack_at = tf_tls.get_stack_at


def _dispatch_keys(tensor):
    """The key set a tensor carries."""
    return tensor._impl.key_set


def _dispatch_keyset_full():
    return DispatchKeySet.full()


def _dispatch_tls_local_include_set():
    return tls.included


def _dispatch_tls_local_exclude_set():
    return tls.excluded


def _dispatch_has_kernel_for_dispatch_key(name, key):
    entry = dispatcher.find(name).table.get(DispatchKey[key] if isinstance(key, str) else key)
    return entry is not None and entry[1] == "kernel"


def _dispatch_key_for_device(device_type):
    return {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}[device_type]


def _dispatch_dump(name):
    """The operator's schema and every kernel registered to it, alias keys included."""
    op = dispatcher.operators.get(name)
    if op is None:
        return ""               # torch prints nothing for an operator it does not know
    lines = [f"name: {op.name}", "schema: (none)"] if op.schema is None else \
        [f"name: {op.name}", f"schema: {op.namespace}::{op.schema}", f"debug: {op.debug}",
         "alias analysis kind: FROM_SCHEMA"]
    order = [k.name for k in DispatchKey] + ["Autograd", "CompositeExplicitAutograd",
                                             "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd"]
    for key in sorted(op.kernels, key=order.index):
        kernel = op.kernels[key]
        label = f"{key}[alias]" if key not in DispatchKey.__members__ else key
        lines.append(f"{label}: {kernel.debug.removeprefix('fallthrough ')} :: (none) "
                     f"[ {'fallthrough ' if kernel.fallthrough else ''}boxed ]")
    return "\n".join(lines) + "\n"


def _dispatch_dump_table(name):
    """The computed dispatch table: for each runtime key, the kernel that runs and where it came from."""
    op = dispatcher.find(name)
    return "".join(f"{key.name}: {kernel.debug} [{kind}]\n" for key, (kernel, kind) in sorted(op.table.items()))
