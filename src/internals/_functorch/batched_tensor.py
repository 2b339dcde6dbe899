"""A batched value (``aten/src/ATen/functorch/BatchedTensorImpl.h``): a tensor that stands for a
batch of tensors inside ``vmap``.

It shows the *logical* shape (one example's) and holds the *physical* tensor, which has the batch
dim in front, and the ``level`` of the ``vmap`` that made it: inside nested vmaps a batched value
wraps another, the outer level's, and the higher level is the inner vmap. Torch gives it the
FuncTorchBatched dispatch key; here it is a wrapper subclass, so every operator called on it
reaches its ``__torch_dispatch__`` through the dispatcher's Python key, below autograd, and there
the batching rules run (``batch_rules.py``) on the physical tensors. Two graphs can be recorded:
``grad`` inside ``vmap`` makes batched values that require grad, and autograd records their
operators above the Python key; a transform outside the vmap sees the rules' operators on the
physical tensors, which require grad when the vmap's inputs did.
"""
import itertools
import threading

from .._disable_torch_function import _disabled_torch_function_impl
from .._tensor import Tensor

__all__ = ["BatchedTensor", "add_batch_dim", "remove_batch_dim", "is_batched", "new_level"]

# the public functions whose batched calls ``batch_rules.run_before_decomposition`` sees first
CAUGHT_BEFORE_DECOMPOSITION = frozenset({"argwhere", "nonzero", "where"})
_levels = itertools.count(1)     # unique and increasing: an inner vmap always has the higher level
_lock = threading.Lock()


def new_level():
    with _lock:
        return next(_levels)


class BatchedTensor(Tensor):
    """The logical view of a batch: ``_value`` has the batch in dim 0; ``_level`` says which vmap."""

    _functorch_batched = True   # the FuncTorchBatched key: indexing keeps a 0-dim one a tensor index

    @staticmethod
    def __new__(cls, value, level):
        size, strides = tuple(value.shape[1:]), tuple(value.stride()[1:])
        r = Tensor._make_wrapper_subclass(cls, size, strides=strides, dtype=value.dtype, device=value.device)
        r._value = value
        r._level = level
        return r

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """Torch's FuncTorchBatched key sits above autograd, so it meets a composite operator
        before the composite is decomposed; this class's dispatch hook is the Python key, below
        autograd, and meets the parts. The few composites whose batched behaviour differs from
        their parts' (``argwhere`` runs torch's fallback, where its part ``nonzero`` is refused)
        are caught here, as their public functions are called; everything else passes through."""
        if getattr(func, "__name__", None) in CAUGHT_BEFORE_DECOMPOSITION:    # one set lookup for all others
            from .batch_rules import run_before_decomposition  # the rules sit above this class, which they build

            result = run_before_decomposition(func, args, kwargs or {})
            if result is not NotImplemented:
                return result
        return _disabled_torch_function_impl(func, types, args, kwargs)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        from .batch_rules import run_batched  # the rules sit above this class, which they build

        return run_batched(func, args, kwargs or {})

    def __repr__(self):
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n    {self._value!r}\n)"


def is_batched(x, level=None):
    return isinstance(x, BatchedTensor) and (level is None or x._level == level)


def add_batch_dim(x, in_dim, level):
    """``x`` as a batched value of ``level`` over its dim ``in_dim`` (``_add_batch_dim``). The
    physical tensor is ``x`` itself for dim 0 (``vmap(lambda a: a)(x) is x``, as torch's), else
    a view of ``x``: a transform outside this vmap (``grad(vmap(f))``) records
    its graph on the physical tensors, as torch's outer interpreter sees the batching rules'
    physical operators; one inside (``vmap(grad(f))``) records on the batched values."""
    return BatchedTensor(x if in_dim == 0 else x.movedim(in_dim, 0), level)


def remove_batch_dim(x, level, size, out_dim):
    """The physical tensor of a ``level`` output with its batch at ``out_dim`` (``_remove_batch_dim``);
    an output the vmap did not batch is expanded to ``size`` at ``out_dim``, as torch does."""
    if is_batched(x, level):
        # out dim 0 hands back the physical tensor itself, so its grad_fn is the last operator's
        return x._value if out_dim == 0 else x._value.movedim(0, out_dim)
    # torch's ``_remove_batch_dim`` expands to the sizes with the batch inserted, without an
    # unsqueeze first: past dim 0 that broadcasts from the right, and raises where it cannot
    shape = list(x.shape)
    shape.insert(out_dim, size)
    return x.expand(shape)
