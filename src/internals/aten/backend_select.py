"""BackendSelect kernels (torch generates them: ``RegisterBackendSelect.cpp``, by
``torchgen/gen_backend_select.py``).

A call's backend usually comes from its tensor arguments. A factory (``zeros``, ``empty``,
``arange``, ...) has none: its key set holds only the thread-local keys, and BackendSelect is
one of them (``DEFAULT_INCLUDED``). Its kernel reads the backend from the ``device`` and
``layout`` arguments and redispatches with that backend's key alone: CPU, CUDA, SparseCPU, ...
Every other operator falls through BackendSelect.
"""
from ..c10.device import as_device
from ..c10.dispatch_key import DispatchKeySet, backend_key_for
from ..c10.tensor_impl import COMPRESSED_LAYOUTS, sparse_coo
from . import dispatcher

__all__ = ["needs_backend_select", "backend_select_kernel"]


def needs_backend_select(schema):
    """torchgen's rule: the operator has TensorOptions arguments and is not a ``*_like`` or
    ``new_*`` one (those take the backend from their tensor argument)."""
    name = str(schema.name.name)
    return schema.arguments.tensor_options is not None and not name.endswith("_like") and not name.startswith("new_")


def backend_select_kernel(op):
    """The BackendSelect kernel of one operator."""
    def backend_select(keys, *args, layout=None, device=None, **kwargs):
        # computeDispatchKey(dtype, layout, device), then a redispatch with that key alone
        key = backend_key_for(as_device(device).type, sparse=layout is sparse_coo,
                              compressed=layout in COMPRESSED_LAYOUTS)
        return op.redispatch(DispatchKeySet(key), *args, layout=layout, device=device, **kwargs)
    return dispatcher.KernelFunction(backend_select, with_keyset=True)
