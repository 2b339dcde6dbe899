from .activation import (
                         CELU,
                         ELU,
                         GELU,
                         SELU,
                         Dropout,
                         Hardtanh,
                         Identity,
                         LeakyReLU,
                         LogSigmoid,
                         LogSoftmax,
                         ReLU,
                         ReLU6,
                         Sigmoid,
                         SiLU,
                         Softmax,
                         Softmin,
                         Softsign,
                         Tanh,
                         Tanhshrink,
)
from .attention import MultiheadAttention
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .flatten import Flatten
from .linear import Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import LayerNorm
from .padding import (
                      CircularPad1d,
                      CircularPad2d,
                      CircularPad3d,
                      ConstantPad1d,
                      ConstantPad2d,
                      ConstantPad3d,
                      ReflectionPad1d,
                      ReflectionPad2d,
                      ReflectionPad3d,
                      ReplicationPad1d,
                      ReplicationPad2d,
                      ReplicationPad3d,
                      ZeroPad1d,
                      ZeroPad2d,
                      ZeroPad3d,
)
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding
from .transformer import (
                          Transformer,
                          TransformerDecoder,
                          TransformerDecoderLayer,
                          TransformerEncoder,
                          TransformerEncoderLayer,
)

__all__ = ["Module", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d",
           "LayerNorm", "Embedding",
           "Flatten", "ReLU", "GELU", "SiLU", "Sigmoid", "LogSigmoid", "Tanh", "Softmax", "LogSoftmax", "Dropout",
           "Sequential",
           "ModuleList", "ModuleDict", "MSELoss", "L1Loss", "CrossEntropyLoss", "BCEWithLogitsLoss",
           "LeakyReLU", "NLLLoss", "BCELoss",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "Hardtanh", "ReLU6", "ELU", "SELU", "CELU", "Softsign", "Tanhshrink", "Softmin", "Identity"]
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
__all__ += ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
            "TransformerDecoder", "Transformer"]
