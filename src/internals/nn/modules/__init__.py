from .activation import GELU, Dropout, LeakyReLU, LogSigmoid, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .flatten import Flatten
from .linear import Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import LayerNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .sparse import Embedding

__all__ = ["Module", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d",
           "LayerNorm", "Embedding",
           "Flatten", "ReLU", "GELU", "SiLU", "Sigmoid", "LogSigmoid", "Tanh", "Softmax", "LogSoftmax", "Dropout",
           "Sequential",
           "ModuleList", "ModuleDict", "MSELoss", "L1Loss", "CrossEntropyLoss", "BCEWithLogitsLoss",
           "LeakyReLU", "NLLLoss", "BCELoss"]
