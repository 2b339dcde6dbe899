"""The default generators' module-level functions (``torch/random.py``).

They sit above c10 because seeding reaches every device: ``manual_seed`` seeds the default
CPU generator (:mod:`internals.c10.generator`) and, as torch's does, the CUDA ones.
"""
from .c10.generator import default_generator
from .cuda.random import manual_seed_all

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"]


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
