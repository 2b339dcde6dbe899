"""``torch.cuda.amp.autocast`` (``torch/cuda/amp/autocast_mode.py``): ``amp.autocast("cuda")``
under its deprecated name, float16 by default."""
import warnings

from ...amp.autocast_mode import autocast as _autocast
from ...c10 import scalar_type as st

__all__ = ["autocast"]


class autocast(_autocast):
    """Warns as torch's ``@deprecated`` class does when it is built, then enters CUDA autocast."""

    def __init__(self, enabled=True, dtype=st.float16, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
