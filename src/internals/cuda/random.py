"""``torch.cuda``'s random functions (``torch/cuda/random.py``): each reaches the default CUDA
generator, ATen's Philox generator (:mod:`internals.aten.native.cuda.philox`, where the
generator, its state and the numbers it draws are explained).
"""
from ..aten.native.cuda.philox import default_cuda_generator, philox4x32_10  # noqa: F401  (chapter 10 shows the rounds)
from ..c10.device import as_device

__all__ = ["manual_seed", "manual_seed_all", "initial_seed", "get_rng_state", "set_rng_state"]


def _current():
    return default_cuda_generator(as_device("cuda"))


def manual_seed(seed):
    """``torch.cuda.manual_seed``: the current device's generator."""
    _current().manual_seed(seed)


def manual_seed_all(seed):
    """``torch.cuda.manual_seed_all``: every device's generator (one device here)."""
    _current().manual_seed(seed)


def initial_seed():
    return _current().initial_seed()


def get_rng_state(device="cuda"):
    return _current().get_state()


def set_rng_state(new_state, device="cuda"):
    _current().set_state(new_state)
