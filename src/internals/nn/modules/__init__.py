from .activation import (
                         CELU,
                         ELU,
                         GELU,
                         GLU,
                         SELU,
                         AlphaDropout,
                         Dropout,
                         Dropout1d,
                         Dropout2d,
                         Dropout3d,
                         FeatureAlphaDropout,
                         Hardshrink,
                         Hardsigmoid,
                         Hardswish,
                         Hardtanh,
                         Identity,
                         LeakyReLU,
                         LogSigmoid,
                         LogSoftmax,
                         Mish,
                         PReLU,
                         ReLU,
                         ReLU6,
                         RReLU,
                         Sigmoid,
                         SiLU,
                         Softmax,
                         Softmax2d,
                         Softmin,
                         Softplus,
                         Softshrink,
                         Softsign,
                         Tanh,
                         Tanhshrink,
                         Threshold,
)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .attention import MultiheadAttention
from .batchnorm import (
                         BatchNorm1d,
                         BatchNorm2d,
                         BatchNorm3d,
                         LazyBatchNorm1d,
                         LazyBatchNorm2d,
                         LazyBatchNorm3d,
                         SyncBatchNorm,
)
from .channelshuffle import ChannelShuffle
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import (
                         Conv1d,
                         Conv2d,
                         Conv3d,
                         ConvTranspose1d,
                         ConvTranspose2d,
                         ConvTranspose3d,
                         LazyConv1d,
                         LazyConv2d,
                         LazyConv3d,
                         LazyConvTranspose1d,
                         LazyConvTranspose2d,
                         LazyConvTranspose3d,
)
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .instancenorm import (
                         InstanceNorm1d,
                         InstanceNorm2d,
                         InstanceNorm3d,
                         LazyInstanceNorm1d,
                         LazyInstanceNorm2d,
                         LazyInstanceNorm3d,
)
from .lazy import LazyModuleMixin
from .linear import Bilinear, LazyLinear, Linear
from .loss import (
                         BCELoss,
                         BCEWithLogitsLoss,
                         CosineEmbeddingLoss,
                         CosineSimilarity,
                         CrossEntropyLoss,
                         CTCLoss,
                         GaussianNLLLoss,
                         HingeEmbeddingLoss,
                         HuberLoss,
                         KLDivLoss,
                         L1Loss,
                         MarginRankingLoss,
                         MSELoss,
                         MultiLabelMarginLoss,
                         MultiLabelSoftMarginLoss,
                         MultiMarginLoss,
                         NLLLoss,
                         PairwiseDistance,
                         PoissonNLLLoss,
                         SmoothL1Loss,
                         SoftMarginLoss,
                         TripletMarginLoss,
                         TripletMarginWithDistanceLoss,
)
from .module import Module
from .normalization import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
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
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import (
                         AdaptiveAvgPool1d,
                         AdaptiveAvgPool2d,
                         AdaptiveAvgPool3d,
                         AdaptiveMaxPool1d,
                         AdaptiveMaxPool2d,
                         AdaptiveMaxPool3d,
                         AvgPool1d,
                         AvgPool2d,
                         AvgPool3d,
                         FractionalMaxPool2d,
                         FractionalMaxPool3d,
                         LPPool1d,
                         LPPool2d,
                         LPPool3d,
                         MaxPool1d,
                         MaxPool2d,
                         MaxPool3d,
                         MaxUnpool1d,
                         MaxUnpool2d,
                         MaxUnpool3d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .transformer import (
                         Transformer,
                         TransformerDecoder,
                         TransformerDecoderLayer,
                         TransformerEncoder,
                         TransformerEncoderLayer,
)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Module", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d",
           "LayerNorm", "Embedding",
           "Flatten", "ReLU", "GELU", "SiLU", "Sigmoid", "LogSigmoid", "Tanh", "Softmax", "LogSoftmax", "Dropout",
           "Sequential",
           "ModuleList", "ModuleDict", "MSELoss", "L1Loss", "CrossEntropyLoss", "BCEWithLogitsLoss",
           "LeakyReLU", "NLLLoss", "BCELoss",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "Hardtanh", "ReLU6", "ELU", "SELU", "CELU", "Softsign", "Tanhshrink", "Softmin", "Identity",
           "Softplus", "Mish", "Hardswish", "Hardsigmoid", "Softshrink", "Hardshrink", "Threshold", "PReLU", "GLU",
           "Dropout1d", "Dropout2d", "Dropout3d", "Conv1d", "ConvTranspose1d", "ConvTranspose2d", "GroupNorm",
           "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CosineSimilarity", "PairwiseDistance",
           "Unflatten"]
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
__all__ += ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
            "TransformerDecoder", "Transformer"]
__all__ += ["EmbeddingBag", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
__all__ += ["MarginRankingLoss", "HingeEmbeddingLoss", "PoissonNLLLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
            "GaussianNLLLoss", "MultiLabelSoftMarginLoss"]
__all__ += ["Fold", "Unfold", "PixelShuffle", "PixelUnshuffle", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "MaxPool1d", "AvgPool1d",
            "AdaptiveAvgPool1d", "BatchNorm3d", "LocalResponseNorm", "CrossMapLRN2d", "LPPool1d", "LPPool2d", "RMSNorm",
            "SoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
            "ParameterList", "ParameterDict", "AvgPool3d", "Conv3d", "ConvTranspose3d", "Bilinear",
            "AdaptiveAvgPool3d", "MaxPool3d", "AdaptiveMaxPool3d", "LPPool3d",
            "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "CTCLoss"]
__all__ += ["RReLU", "Softmax2d", "AlphaDropout", "FeatureAlphaDropout", "ChannelShuffle", "FractionalMaxPool2d",
            "FractionalMaxPool3d", "TripletMarginWithDistanceLoss"]
__all__ += ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
            "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
            "SyncBatchNorm", "AdaptiveLogSoftmaxWithLoss",
            "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
