"""Optimizers (``torch/optim``): the base class, SGD, Adagrad, Adam, AdamW, RMSprop and SparseAdam, as
torch's single-tensor loops, and the learning-rate schedulers of ``optim.lr_scheduler``."""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adagrad", "Adam", "AdamW", "RMSprop", "SparseAdam", "lr_scheduler"]
