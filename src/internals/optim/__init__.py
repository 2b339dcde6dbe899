"""Optimizers (``torch/optim``): the base class, SGD, Adadelta, Adafactor, Adagrad, Adam, AdamW, Adamax,
ASGD, LBFGS, Muon, NAdam, RAdam, RMSprop, Rprop and SparseAdam, as torch's single-tensor loops, and the
learning-rate schedulers of ``optim.lr_scheduler``, and the weight averaging of ``optim.swa_utils``."""
from . import lr_scheduler, swa_utils
from ._adafactor import Adafactor
from ._muon import Muon
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "ASGD", "LBFGS",
           "Muon", "NAdam", "RAdam", "RMSprop", "Rprop", "SparseAdam", "lr_scheduler", "swa_utils"]
