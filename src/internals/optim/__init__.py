"""Optimizers (``torch/optim``): the base class, SGD, Adadelta, Adagrad, Adam, AdamW, RMSprop, Rprop
and SparseAdam, as torch's single-tensor loops, and the learning-rate schedulers of ``optim.lr_scheduler``."""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "RMSprop", "Rprop", "SparseAdam",
           "lr_scheduler"]
