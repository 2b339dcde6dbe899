"""``torch.return_types``: the named tuples of operators with several outputs (``max(dim)`` gives
``values`` and ``indices``). torch makes them as C structseqs (``torch/csrc/utils/structseq.cpp``)
and prints one field per line; these are namedtuples that print the same way."""
import collections
import threading

__all__ = ["return_type", "as_return_type"]

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


_made = {}      # name -> type, read without the lock once made (a dict read is atomic)


def as_return_type(name, fields, result):
    """What the Python binding hands back for an overload whose returns are all named: the kernels'
    own named tuple as it is, anything else a ``__torch_dispatch__`` handler gave (a plain tuple or
    list) made into it, as torch's binding wraps whatever tuple the dispatcher returns
    (``wrap(NamedTuple, ...)`` in the generated ``python_torch_functions.cpp``)."""
    cls = _made.get(name) or _made.setdefault(name, return_type(name, fields))
    return result if type(result) is cls else cls(*result)
