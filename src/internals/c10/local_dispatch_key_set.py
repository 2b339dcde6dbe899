"""Thread-local dispatch state (``c10/core/impl/LocalDispatchKeySet.h``).

Besides the keys its tensors carry, a call's key set gets two thread-local adjustments: keys
*included* for every call on this thread, and keys *excluded* from every call. By default
BackendSelect and ADInplaceOrView are included, so that factories (which have no tensor
arguments) and in-place/view bookkeeping always get a turn, and the Autocast keys are
excluded, so mixed precision is off until ``autocast`` switches it on. Guards change the sets
for the length of a ``with`` block: that is how a kernel stops the layers above it from running
again for the calls it makes (``AutoDispatchBelowADInplaceOrView``).
"""
import contextlib
import threading

from .dispatch_key import AUTOCAST_KEYS, AUTOGRAD_KEYS, DispatchKey, DispatchKeySet

__all__ = ["tls", "include_keys", "exclude_keys", "below_autograd", "below_ad_inplace_or_view",
           "DEFAULT_INCLUDED", "DEFAULT_EXCLUDED"]

DEFAULT_INCLUDED = DispatchKeySet([DispatchKey.BackendSelect, DispatchKey.ADInplaceOrView])
DEFAULT_EXCLUDED = AUTOCAST_KEYS


class _LocalDispatchKeySet(threading.local):
    def __init__(self):
        self.included = DEFAULT_INCLUDED
        self.excluded = DEFAULT_EXCLUDED


tls = _LocalDispatchKeySet()


@contextlib.contextmanager
def include_keys(keys):
    """``c10::impl::IncludeDispatchKeyGuard``: add ``keys`` to every call in the block."""
    saved = tls.included
    tls.included = saved | keys
    try:
        yield
    finally:
        tls.included = saved


@contextlib.contextmanager
def exclude_keys(keys):
    """``c10::impl::ExcludeDispatchKeyGuard``: remove ``keys`` from every call in the block."""
    saved = tls.excluded
    tls.excluded = saved | keys
    try:
        yield
    finally:
        tls.excluded = saved


def below_autograd():
    """``at::AutoDispatchBelowAutograd``: calls in the block skip the Autograd keys."""
    return exclude_keys(AUTOGRAD_KEYS)


def below_ad_inplace_or_view():
    """``at::AutoDispatchBelowADInplaceOrView``: calls in the block skip Autograd and ADInplaceOrView.

    Kernels run inside it, and so do factories: a write a kernel makes into a fresh tensor is
    not a user's in-place op, so it must not bump a version counter or record a graph.
    """
    return exclude_keys(AUTOGRAD_KEYS | DispatchKeySet(DispatchKey.ADInplaceOrView))
