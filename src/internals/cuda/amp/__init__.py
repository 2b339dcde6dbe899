"""``torch.cuda.amp`` (``torch/cuda/amp/__init__.py``): the older spelling of ``torch.amp`` for
CUDA, kept by torch for old scripts; each name warns ``FutureWarning`` and forwards to the
device-generic class with ``"cuda"`` filled in."""
from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler"]
