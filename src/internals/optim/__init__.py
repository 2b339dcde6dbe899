"""Optimizers (``torch/optim``): the base class, SGD, Adam, AdamW and RMSprop, as torch's single-tensor loops,
and the learning-rate schedulers of ``optim.lr_scheduler``."""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adagrad", "Adam", "AdamW", "RMSprop", "lr_scheduler"]
