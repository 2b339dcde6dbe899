from .activation import Dropout, ReLU
from .container import Sequential
from .linear import Linear
from .loss import CrossEntropyLoss, MSELoss
from .module import Module

__all__ = ["Module", "Linear", "ReLU", "Dropout", "Sequential", "MSELoss", "CrossEntropyLoss"]
