from .module import Module
from .linear import Linear
from .activation import ReLU, Dropout
from .container import Sequential
from .loss import MSELoss, CrossEntropyLoss

__all__ = ["Module", "Linear", "ReLU", "Dropout", "Sequential", "MSELoss", "CrossEntropyLoss"]
