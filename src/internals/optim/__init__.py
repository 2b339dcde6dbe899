"""Optimizers (``torch/optim``): the base class, SGD and Adam, as torch's single-tensor loops."""
from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam"]
