"""The errors of data-dependent tracing (``torch/fx/experimental/symbolic_shapes.py``).

torch's fake and symbolic tracing turn a value read from a traced tensor (``x.sum().item()``)
into a symbol with no known value; a decision on it -- an ``if``, an ``int()`` for an index --
cannot be made, and raises ``GuardOnDataDependentSymNode``. This package has no symbols: the
read itself raises it.
"""

__all__ = ["GuardOnDataDependentSymNode"]


class GuardOnDataDependentSymNode(RuntimeError):
    """A traced function needs a value that depends on its input tensors' data."""
