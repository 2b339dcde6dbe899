"""Neural-network building blocks (``torch/nn``): Parameter, Module, a few layers, containers and
losses, and ``nn.utils`` (gradient clipping).

Everything here is composed from internals' operators, so autograd records it and the same
code runs on the CPU and on cuda.
"""
from . import functional, init, utils
from .modules import (
                      BCEWithLogitsLoss,
                      CrossEntropyLoss,
                      Dropout,
                      Linear,
                      Module,
                      ModuleDict,
                      ModuleList,
                      MSELoss,
                      ReLU,
                      Sequential,
)
from .parameter import Parameter

__all__ = ["Parameter", "Module", "Linear", "ReLU", "Dropout", "Sequential", "ModuleList", "ModuleDict", "MSELoss",
           "CrossEntropyLoss", "BCEWithLogitsLoss", "functional", "init", "utils"]
