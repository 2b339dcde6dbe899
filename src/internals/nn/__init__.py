"""Neural-network building blocks (``torch/nn``): Parameter, Module and a few layers and losses.

Everything here is composed from internals' operators, so autograd records it and the same
code runs on the CPU and on cuda.
"""
from . import functional, init
from .modules import CrossEntropyLoss, Dropout, Linear, Module, MSELoss, ReLU, Sequential
from .parameter import Parameter

__all__ = ["Parameter", "Module", "Linear", "ReLU", "Dropout", "Sequential", "MSELoss", "CrossEntropyLoss",
           "functional", "init"]
