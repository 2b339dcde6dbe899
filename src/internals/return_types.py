"""``torch.return_types``: the named tuples of operators with several outputs (``max(dim)`` gives
``values`` and ``indices``). torch makes them as C structseqs (``torch/csrc/utils/structseq.cpp``)
and prints one field per line; these are namedtuples that print the same way."""
import collections
import threading

__all__ = ["return_type"]

_lock = threading.Lock()


def _repr(self):
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"internals.return_types.{type(self).__name__}(\n{fields})"


def return_type(name, fields=("values", "indices")):
    """The named tuple type ``internals.return_types.<name>``, made once (threads may ask together)."""
    with _lock:
        cls = globals().get(name)
        if cls is None:
            cls = collections.namedtuple(name, fields, module=__name__)
            cls.__repr__ = _repr
            globals()[name] = cls
        return cls
