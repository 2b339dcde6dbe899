"""An exception carried from one thread or process to another (``torch/_utils.py``)."""
import sys
import traceback

__all__ = ["ExceptionWrapper", "KeyErrorMessage"]


class KeyErrorMessage(str):
    """A KeyError prints its message through ``repr``; this string's repr is itself, so the
    traceback text keeps its line breaks."""

    __slots__ = ()

    def __repr__(self):
        return self


class ExceptionWrapper:
    """The exception being handled, as its class and its formatted traceback (a traceback object
    cannot be pickled; its text can). ``where`` says where it was caught."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = sys.exc_info() if exc_info is None else exc_info
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the same class here, its message the original traceback. A class that cannot be
        built from one string becomes a RuntimeError, as in torch."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception
