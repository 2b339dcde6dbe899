"""``kl_divergence`` and ``register_kl`` (``torch/distributions/kl.py``), with the closed forms
torch registers between the distributions this package has: each pair of the same family, and
Normal/Uniform both ways. The formulas are torch's, term for term, so the rounding is too."""
import math

from .. import _functional as ops
from ..nn import functional as F
from .bernoulli import Bernoulli
from .categorical import Categorical
from .normal import Normal
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """A decorator that files ``fn(p, q)`` as KL(p ‖ q) for these two classes (and subclasses)."""
    if not (isinstance(type_p, type) and isinstance(type_q, type)):
        raise TypeError(f"Expected type_p and type_q to be Distribution subclasses but got {type_p} and {type_q}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def _dispatch_kl(type_p, type_q):
    """The registered pair nearest to (type_p, type_q) along both method resolution orders."""
    matches = [(type_p.__mro__.index(p), type_q.__mro__.index(q), fn) for (p, q), fn in _KL_REGISTRY.items()
               if issubclass(type_p, p) and issubclass(type_q, q)]
    return min(matches, key=lambda m: m[:2])[2] if matches else None


def kl_divergence(p, q):
    fn = _dispatch_kl(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and "
                                  f"q type {type(q).__name__}")
    return fn(p, q)


# torch's Normal and Bernoulli derive from ExponentialFamily, whose registered pair refuses two
# different families with this message (the line break's indentation is in torch's string too)


@register_kl(Bernoulli, Normal)
@register_kl(Normal, Bernoulli)
def _kl_expfamily_expfamily(p, q):
    raise NotImplementedError("The cross KL-divergence between different exponential families cannot "
                              "                            be computed using Bregman divergences")


def _infinite_like(tensor):
    return ops.full_like(tensor, math.inf)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1[q.probs == 0] = math.inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2[q.probs == 1] = math.inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = math.inf
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = math.inf
    return result


@register_kl(Normal, Uniform)
def _kl_normal_uniform(p, q):
    """A normal puts mass outside any interval: infinite everywhere."""
    return _infinite_like(p.loc)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
