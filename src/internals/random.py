"""The default generators' module-level functions (``torch/random.py``).

They sit above c10 because seeding reaches every device: ``manual_seed`` seeds the default
CPU generator (:mod:`internals.c10.generator`) and, as torch's does, the CUDA ones.
"""
import contextlib

from .c10.generator import default_generator
from .cuda import device_count
from .cuda import random as _cuda_random
from .cuda.random import manual_seed_all

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]


def manual_seed(seed):
    """Seed the default CPU generator and, as torch does, the CUDA ones."""
    manual_seed_all(seed)
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Run the block, then put back the CPU generator's state and those of the CUDA ``devices``
    (all of them, the one simulated device here, when None) as they were before it. ``enabled=False``
    and ``device_type="meta"`` (which has no generator) fork nothing."""
    if device_type == "meta" or not enabled:
        yield
        return
    if device_type not in (None, "cuda"):
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register "
                           "a module by `torch._register_device_module`.")
    devices = list(range(device_count())) if devices is None else list(devices)
    cpu_state = get_rng_state()
    device_states = [_cuda_random.get_rng_state(device) for device in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for device, state in zip(devices, device_states, strict=True):
            _cuda_random.set_rng_state(state, device)
