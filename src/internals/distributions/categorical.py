"""``Categorical`` (``torch/distributions/categorical.py``)."""
import math

from .. import _functional as ops
from .._type_info import finfo
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution, Size, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """One of K classes, the last dim of ``probs`` (normalised) or ``logits`` (log-normalised);
    ``sample`` draws all samples of each batch row with one ``multinomial`` (with replacement)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Expands the batch dims of whichever parametrisation is there; the classes stay last."""
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = Size(list(batch_shape) + [self._num_events])
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(param_shape))
                new._param = new.__dict__[name]
        new._num_events = self._num_events
        return self._expanded(new, batch_shape)

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def mean(self):
        return ops.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def variance(self):
        return ops.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        with no_grad():
            samples_2d = ops.multinomial(probs_2d, math.prod(sample_shape), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ops.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = ops.clamp(self.logits, min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)
