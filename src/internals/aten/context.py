"""The process-wide settings of ATen that concern determinism (``aten/src/ATen/Context.h``, ``Context.cpp``).

``use_deterministic_algorithms(True)`` sets ``deterministic_algorithms``: an operator that has
only a nondeterministic implementation then calls :func:`alert_not_deterministic`, which raises
(or, with ``warn_only``, warns). With ``deterministic_fill_uninitialized_memory`` on too (the
default), the memory ``empty`` and ``empty_strided`` hand out, and the elements a growing
``resize_`` adds to a storage, are filled with a known value (NaN, or the largest integer), so a
program that reads it before writing it gives the same answer each run. Like torch's
``at::globalContext()``, the settings are shared by all threads.
"""
import warnings

__all__ = ["Context", "global_context", "alert_not_deterministic"]


class Context:
    """The determinism flags of ``at::Context``."""

    def __init__(self):
        self.deterministic_algorithms = False
        self.deterministic_algorithms_warn_only = False
        self.deterministic_fill_uninitialized_memory = True

    def set_deterministic_algorithms(self, mode, warn_only=False):
        self.deterministic_algorithms, self.deterministic_algorithms_warn_only = mode, warn_only

    def fills_uninitialized_memory(self):
        """Whether ``empty`` and its kin (and a growing ``resize_``) must fill what they allocate."""
        return self.deterministic_algorithms and self.deterministic_fill_uninitialized_memory


_context = Context()


def global_context():
    return _context


def alert_not_deterministic(caller):
    """What an operator without a deterministic implementation calls first
    (``Context::alertNotDeterministic``): nothing unless deterministic algorithms are on."""
    if not _context.deterministic_algorithms:
        return
    if _context.deterministic_algorithms_warn_only:
        warnings.warn(f"{caller} does not have a deterministic implementation, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
                      "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support "
                      "for this operation.", UserWarning, stacklevel=3)
        return
    raise RuntimeError(f"{caller} does not have a deterministic implementation, but you set "
                       "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
                       "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
                       "application. You can also file an issue at https://github.com/pytorch/pytorch/issues to help "
                       "us prioritize adding deterministic support for this operation.")
