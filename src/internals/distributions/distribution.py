"""The base class (``torch/distributions/distribution.py``) and the helpers of
``torch/distributions/utils.py`` the four distributions use."""

from .. import _functional as ops
from .._tensor import Tensor
from .._tensor_base import Size
from .._type_info import finfo
from ..autograd.grad_mode import enable_grad, no_grad
from ..nn import functional as F

__all__ = ["Distribution"]


def broadcast_all(*values):
    """Tensors and numbers broadcast to one shape; numbers become tensors of the default dtype
    (``broadcast_all``)."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    tensors = [v if isinstance(v, Tensor) else
               ops.tensor(v, dtype=like.dtype if like is not None else None,
                          device=like.device if like is not None else None) for v in values]
    return ops.broadcast_tensors(*tensors)


def clamp_probs(probs):
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    clamped = clamp_probs(probs)
    return ops.log(clamped) - ops.log1p(-clamped) if is_binary else ops.log(clamped)


def logits_to_probs(logits, is_binary=False):
    return ops.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


class lazy_property:
    """Computed on first use and then kept on the instance, as torch's ``lazy_property`` (a
    distribution built from ``probs`` derives ``logits`` only if asked). Computed with grad mode
    on: the first use may be inside ``sample``'s ``no_grad``, and the kept value must still
    carry the graph back to the parameter."""

    def __init__(self, fn):
        self.fn, self.__doc__ = fn, fn.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.fn(instance)
        setattr(instance, self.fn.__name__, value)
        return value


class Distribution:
    """Batch and event shapes, and the argument and sample checks (on unless
    ``validate_args=False``, as in torch, where ``__debug__`` turns them on)."""
    _validate_args = __debug__
    arg_constraints = {}
    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_arguments()

    def _check_arguments(self):
        for param, constraint in self.arg_constraints.items():
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue       # derived lazily from the other parametrisation: not given, not checked
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                 f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                 f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _extended_shape(self, sample_shape=()):
        return Size(list(sample_shape) + list(self._batch_shape) + list(self._event_shape))

    def _get_checked_instance(self, cls, _instance=None):
        """A bare instance of this object's class for ``expand`` to fill (a subclass with its own
        ``__init__`` must bring its own ``expand``)."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return type(self).__new__(type(self)) if _instance is None else _instance

    def _expanded(self, new, batch_shape):
        """``expand``'s last step, shared by the subclasses: the new batch shape, no argument check
        (the expanded parameters were checked once already), the original's validation setting."""
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def sample(self, sample_shape=()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def _validate_sample(self, value):
        """``_validate_sample``: a tensor whose shape broadcasts with the batch and event shapes,
        inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim = len(self._event_shape)
        if list(value.shape[value.dim() - event_dim:]) != list(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {value.shape} vs "
                             f"{self._event_shape}.")
        actual, expected = list(value.shape), list(self._batch_shape) + list(self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {value.shape} vs "
                                 f"{Size(expected)}.")
        if not bool(self.support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(f"{k}: {self.__dict__[k] if self.__dict__[k].numel() == 1 else self.__dict__[k].size()}"
                          for k in names)
        return f"{type(self).__name__}({shown})"


