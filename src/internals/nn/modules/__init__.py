from .activation import Dropout, ReLU
from .container import ModuleDict, ModuleList, Sequential
from .linear import Linear
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss
from .module import Module

__all__ = ["Module", "Linear", "ReLU", "Dropout", "Sequential", "ModuleList", "ModuleDict", "MSELoss",
           "CrossEntropyLoss", "BCEWithLogitsLoss"]
