"""``torch.distributions``, the few a reader's reinforcement-learning or VAE script reaches for:
``Normal``, ``Bernoulli``, ``Categorical`` and ``Uniform``, with ``sample``/``rsample``,
``log_prob``, ``entropy``, the moments, ``expand``, ``cdf``/``icdf`` where torch has them, and
``kl_divergence`` between the pairs torch registers. Each draws through the same random
operators torch's class calls (``normal``, ``bernoulli``, ``multinomial``, ``rand``, ``normal_``), so one seed gives
both libraries the same samples."""
from . import constraints, kl
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "constraints", "kl_divergence",
           "register_kl"]
