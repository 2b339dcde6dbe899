"""Thread-local dispatch state (``c10/core/impl/LocalDispatchKeySet.h``).

Besides the keys its tensors carry, a call's key set gets two thread-local adjustments: keys
*included* for every call on this thread, and keys *excluded* from every call. By default
BackendSelect and ADInplaceOrView are included, so that factories (which have no tensor
arguments) and in-place/view bookkeeping always get a turn, and the Autocast keys are
excluded, so mixed precision is off until ``autocast`` switches it on. Guards change the sets
for the length of a ``with`` block: that is how a kernel stops the layers above it from running
again for the calls it makes (``AutoDispatchBelowADInplaceOrView``).
"""
import threading

from .dispatch_key import AUTOCAST_KEYS, AUTOGRAD_KEYS, DispatchKey, DispatchKeySet

__all__ = ["tls", "include_keys", "exclude_keys", "below_autograd", "below_ad_inplace_or_view",
           "enter_below_autograd", "enter_below_ad_inplace_or_view",
           "AUTOGRAD_AND_AD_INPLACE_OR_VIEW", "DEFAULT_INCLUDED", "DEFAULT_EXCLUDED"]

DEFAULT_INCLUDED = DispatchKeySet([DispatchKey.BackendSelect, DispatchKey.ADInplaceOrView])
DEFAULT_EXCLUDED = AUTOCAST_KEYS


class _LocalDispatchKeySet(threading.local):
    def __init__(self):
        self.included = DEFAULT_INCLUDED
        self.excluded = DEFAULT_EXCLUDED


tls = _LocalDispatchKeySet()


class _Guard:
    """Adds ``keys`` to one of the thread-local sets for a ``with`` block, then restores it.

    A class rather than a generator-based context manager: kernels enter one on every call,
    and this is the cheaper of the two.
    """
    __slots__ = ("keys", "saved")
    attribute = None

    def __enter__(self):
        saved = self.saved = getattr(tls, self.attribute)
        setattr(tls, self.attribute, DispatchKeySet._from_bits(saved.bits | self.keys.bits))

    def __exit__(self, exc_type, exc, traceback):
        setattr(tls, self.attribute, self.saved)


class include_keys(_Guard):
    """``c10::impl::IncludeDispatchKeyGuard``: add ``keys`` to every call in the block."""
    __slots__ = ()
    attribute = "included"

    def __init__(self, keys):
        self.keys = keys


class exclude_keys(_Guard):
    """``c10::impl::ExcludeDispatchKeyGuard``: remove ``keys`` from every call in the block."""
    __slots__ = ()
    attribute = "excluded"

    def __init__(self, keys):
        self.keys = keys


AUTOGRAD_AND_AD_INPLACE_OR_VIEW = AUTOGRAD_KEYS | DispatchKeySet(DispatchKey.ADInplaceOrView)


class _BelowGuard(_Guard):
    """An ``exclude_keys`` with its keys fixed by the class. Every kernel call enters one, so it
    names ``tls.excluded`` directly rather than through ``getattr``."""
    __slots__ = ()
    attribute = "excluded"

    def __enter__(self):
        saved = self.saved = tls.excluded
        tls.excluded = DispatchKeySet._from_bits(saved.bits | self.keys.bits)

    def __exit__(self, exc_type, exc, traceback):
        tls.excluded = self.saved


# The two guards every kernel call enters are classes with their keys fixed, so entering one
# costs no Python-level constructor call.
class below_autograd(_BelowGuard):
    """``at::AutoDispatchBelowAutograd``: calls in the block skip the Autograd keys."""
    __slots__ = ()
    keys = AUTOGRAD_KEYS


class below_ad_inplace_or_view(_BelowGuard):
    """``at::AutoDispatchBelowADInplaceOrView``: calls in the block skip Autograd and ADInplaceOrView.

    Kernels run inside it, and so do factories: a write a kernel makes into a fresh tensor is
    not a user's in-place op, so it must not bump a version counter or record a graph.
    """
    __slots__ = ()
    keys = AUTOGRAD_AND_AD_INPLACE_OR_VIEW


# The same two guards for the generated autograd kernels, which every differentiable call runs:
# entered by one function that returns the excluded set to put back, restored by the kernel's
# ``finally``. A ``with`` block makes a guard object and calls its ``__enter__`` and ``__exit__``,
# three calls where this makes one: about a hundredth of a one-element add.
_AUTOGRAD_BITS = AUTOGRAD_KEYS.bits
_AD_INPLACE_OR_VIEW_BITS = AUTOGRAD_AND_AD_INPLACE_OR_VIEW.bits


def enter_below_autograd():
    """``below_autograd().__enter__()``: returns what ``tls.excluded`` was."""
    saved = tls.excluded
    tls.excluded = DispatchKeySet._from_bits(saved.bits | _AUTOGRAD_BITS)
    return saved


def enter_below_ad_inplace_or_view():
    """``below_ad_inplace_or_view().__enter__()``: returns what ``tls.excluded`` was."""
    saved = tls.excluded
    tls.excluded = DispatchKeySet._from_bits(saved.bits | _AD_INPLACE_OR_VIEW_BITS)
    return saved
