"""``torch.distributions``, the few a reader's reinforcement-learning or VAE script reaches for:
``Normal``, ``Bernoulli``, ``Categorical`` and ``Uniform``, with ``sample``/``rsample``,
``log_prob``, ``entropy`` and the moments. Each draws through the same random operators torch's
class calls (``normal``, ``bernoulli``, ``multinomial``, ``rand``, ``normal_``), so one seed gives
both libraries the same samples."""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "constraints"]
