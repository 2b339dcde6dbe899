"""``Uniform`` (``torch/distributions/uniform.py``)."""
from .. import _functional as ops
from . import constraints
from .distribution import Distribution, Size, broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform on [low, high): ``rsample`` is ``low + rand · (high - low)``."""
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)

    @property
    def arg_constraints(self):
        """Each bound constrained by the other: low below high."""
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = Size(batch_shape)
        new.low, new.high = self.low.expand(batch_shape), self.high.expand(batch_shape)
        return self._expanded(new, batch_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = ops.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return ops.log(lb.mul(ub)) - ops.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return ops.log(self.high - self.low)
