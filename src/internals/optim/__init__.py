"""Optimizers (``torch/optim``): the base class, SGD and Adam, as torch's single-tensor loops."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam

__all__ = ["Optimizer", "SGD", "Adam"]
