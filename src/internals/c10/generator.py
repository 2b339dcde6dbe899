"""Random number generators (``c10/core/GeneratorImpl.h``, ``aten/src/ATen/CPUGeneratorImpl.cpp``).

A Generator holds the random state that ``rand``/``randn`` draw from; a call without one uses the
default generator, which ``manual_seed`` reseeds. Here the state is a NumPy PCG64, so the values
differ from torch's (a Mersenne Twister on the CPU): same seeding API, other numbers.
"""
import numpy as np

__all__ = ["Generator", "default_generator", "manual_seed"]


class Generator:
    """The random state behind ``rand``/``randn``."""

    def __init__(self, seed=0):
        self.manual_seed(seed)

    def manual_seed(self, seed):
        self.seed = int(seed)
        self.bit_generator = np.random.Generator(np.random.PCG64(self.seed))
        return self

    def initial_seed(self):
        return self.seed

    def __repr__(self):                     # torch's Generator is a C type of torch._C
        return f"<internals._C.Generator object at {hex(id(self))}>"


default_generator = Generator(0)


def manual_seed(seed):
    return default_generator.manual_seed(seed)
