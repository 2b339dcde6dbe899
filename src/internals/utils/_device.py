"""``with torch.device('meta'):`` (``torch/utils/_device.py``): a TorchFunctionMode at the bottom
of the mode stack that gives each factory called without ``device=`` the context's device.

torch's ``Device.cpp`` builds this mode when a device is entered; ``c10/device.py`` here calls the
hook this module registers (c10 imports nothing above it).
"""
import functools
import threading

from .. import overrides
from ..aten import python_torch_function_tls as _tf
from ..c10 import device as _c10_device
from ..c10.device import device

__all__ = ["DeviceContext", "get_default_device", "set_default_device", "set_device"]

CURRENT_DEVICE = None


@functools.lru_cache(1)
def _device_constructors():
    """The factories that take ``device=`` (torch's list, less those internals lacks, such as
    ``fft.fftfreq``; the ``*_like`` ones keep their input's device)."""
    import internals  # the package's namespace: it imports this module while it loads (a real cycle)
    names = ("empty", "empty_permuted", "empty_strided", "ones", "arange", "bartlett_window", "blackman_window",
             "eye", "full", "hamming_window", "hann_window", "kaiser_window", "linspace", "logspace", "rand",
             "randn", "randint", "randperm", "range", "sparse_coo_tensor", "sparse_compressed_tensor",
             "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor", "tril_indices",
             "triu_indices", "zeros", "asarray", "tensor", "as_tensor", "scalar_tensor")
    return {getattr(internals, name) for name in names if hasattr(internals, name)}


class DeviceContext(overrides.TorchFunctionMode):
    """Fills ``device=`` for the factories. It sits at the bottom of the stack, so a mode
    entered inside it and left after it (a ``set_default_device`` inside a mode) stays in place;
    one DeviceContext at a time: entering a second sets the first aside until it exits."""

    def __init__(self, device_):
        self.device = device(device_)
        self.prev_mode = None

    def __enter__(self):
        global CURRENT_DEVICE
        self.old_device, CURRENT_DEVICE = CURRENT_DEVICE, self.device
        above = [overrides._pop_mode() for _ in range(_tf.stack_len())]
        overrides._push_mode(self)
        for mode in reversed(above):
            if isinstance(mode, DeviceContext):
                self.prev_mode = mode
            else:
                overrides._push_mode(mode)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        global CURRENT_DEVICE
        CURRENT_DEVICE = self.old_device
        above = []
        for _ in range(_tf.stack_len() - 1):
            mode = overrides._pop_mode()
            if isinstance(mode, DeviceContext):
                raise AssertionError("Found nested DeviceContext on the mode stack where none expected")
            above.append(mode)
        if _tf.stack_len() > 0 and not isinstance(overrides._pop_mode(), DeviceContext):
            raise AssertionError("Expected a DeviceContext at the bottom of the mode stack")
        if self.prev_mode is not None:
            overrides._push_mode(self.prev_mode)
        for mode in reversed(above):
            overrides._push_mode(mode)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _device_constructors() and kwargs.get("device") is None:
            kwargs["device"] = self.device
        return func(*args, **kwargs)


def device_decorator(device_, func):
    """``func`` run, at each call, inside the device's context (``set_device``'s decorator)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with DeviceContext(device_):
            return func(*args, **kwargs)
    return wrapper


def set_device(device_):
    """A decorator that runs the function with ``device_`` as the factories' device."""
    return lambda func: device_decorator(device(device_), func)


# The DeviceContext ``set_default_device`` entered, per thread (torch keeps it in a
# ``threading.local`` in ``torch/__init__.py``): the mode stack it sits on is the thread's own, so
# another thread's factories still make CPU tensors.
_GLOBAL_DEVICE_CONTEXT = threading.local()


def set_default_device(device_):
    """``torch.set_default_device`` (``torch/__init__.py``): the previous default's DeviceContext
    left, and one for ``device_`` entered and kept entered (at the bottom of this thread's mode
    stack), so that factories called without ``device=`` use it; ``None`` only leaves the old one."""
    context = getattr(_GLOBAL_DEVICE_CONTEXT, "device_context", None)
    if context is not None:
        context.__exit__(None, None, None)
    context = None
    if device_ is not None:
        context = DeviceContext(device_)
        context.__enter__()
    _GLOBAL_DEVICE_CONTEXT.device_context = context


def get_default_device():
    """``torch.get_default_device``: the device of the innermost DeviceContext on this thread's
    mode stack (a ``with device(...)`` block or the default set), else that of the default set,
    else the CPU. A device without an index gets the one a new tensor would have."""
    for mode in reversed(overrides._get_current_function_mode_stack()):
        if isinstance(mode, DeviceContext):
            return _with_index(mode.device)
    context = getattr(_GLOBAL_DEVICE_CONTEXT, "device_context", None)
    return device("cpu") if context is None else _with_index(context.device)


def _with_index(dev):
    """torch asks an empty tensor made under the current modes for the index it lacks."""
    if dev.index is not None:
        return dev
    import internals  # the package's namespace (a real cycle, as in ``_device_constructors``)
    return internals.tensor([]).device


def _enter(dev):
    """``device.__enter__`` (torch's ``THPDevice_enter``): a DeviceContext pushed on top of the mode
    stack as it is (not moved to the bottom, as a DeviceContext's own ``__enter__`` would)."""
    overrides._push_mode(DeviceContext(dev))


def _exit():
    """``device.__exit__``: the mode on top, the context the device pushed, popped again."""
    overrides._pop_mode()


_c10_device.register_context_hooks(_enter, _exit)
