"""The ``nn`` layers: ``Module`` and the containers, linear, reshape and activation layers.

Later layer families (conv, norm, rnn, loss, ...) add one file here and one import line below.
"""

from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
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
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .linear import Bilinear, Identity, Linear
from .module import Module
from .padding import (
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    LPPool1d,
    LPPool2d,
    MaxPool1d,
    MaxPool2d,
    MaxUnpool1d,
    MaxUnpool2d,
)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "Threshold", "ReLU", "RReLU",
           "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish", "Hardswish",
           "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid",
           "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax",
           "Softmax2d", "LogSoftmax"]
__all__ += ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "Fold", "Unfold",
            "MaxPool1d", "MaxPool2d", "MaxUnpool1d", "MaxUnpool2d", "AvgPool1d", "AvgPool2d",
            "LPPool1d", "LPPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveAvgPool1d",
            "AdaptiveAvgPool2d", "ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d",
            "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
            "CircularPad1d", "CircularPad2d", "Upsample", "UpsamplingNearest2d",
            "UpsamplingBilinear2d"]
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: E402

__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
from .loss import *  # noqa: E402, F403 - the loss classes, listed in loss.__all__
from .loss import __all__ as _loss_all  # noqa: E402

__all__ += _loss_all
from .loss_extra import CTCLoss, MultiLabelMarginLoss, TripletMarginWithDistanceLoss  # noqa: E402

__all__ += ["CTCLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss"]
from . import batchnorm, distance, dropout, normalization, sparse  # noqa: E402
from .batchnorm import *  # noqa: E402, F403 - each family lists its layers in __all__
from .distance import *  # noqa: E402, F403
from .dropout import *  # noqa: E402, F403
from .normalization import *  # noqa: E402, F403
from .sparse import *  # noqa: E402, F403

__all__ += [*batchnorm.__all__, *distance.__all__, *dropout.__all__, *normalization.__all__,
            *sparse.__all__]
from .activation_attention import MultiheadAttention  # noqa: E402
from .transformer import TransformerEncoder, TransformerEncoderLayer  # noqa: E402

__all__ += ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder"]
from .transformer_decoder import *  # noqa: E402, F403 - Transformer and its decoder
from .transformer_decoder import __all__ as _transformer_decoder_all  # noqa: E402

__all__ += _transformer_decoder_all
from .embedding_bag import EmbeddingBag  # noqa: E402

__all__ += ["EmbeddingBag"]
from . import lazy  # noqa: E402
from .lazy import *  # noqa: E402, F403 - the Lazy* layers, listed in lazy.__all__

__all__ += lazy.__all__
from . import conv3d, fractional_pool, padding3d, pixelshuffle, pooling3d  # noqa: E402
from .conv3d import *  # noqa: E402, F403 - the 3-d layers and shuffles, listed in __all__
from .fractional_pool import *  # noqa: E402, F403
from .padding3d import *  # noqa: E402, F403
from .pixelshuffle import *  # noqa: E402, F403
from .pooling3d import *  # noqa: E402, F403

__all__ += [*conv3d.__all__, *fractional_pool.__all__, *padding3d.__all__,
            *pixelshuffle.__all__, *pooling3d.__all__]
from . import adaptive, legacy, sync_batchnorm  # noqa: E402
from .adaptive import *  # noqa: E402, F403 - AdaptiveLogSoftmaxWithLoss
from .legacy import *  # noqa: E402, F403 - CrossMapLRN2d, NLLLoss2d, Container
from .sync_batchnorm import *  # noqa: E402, F403 - SyncBatchNorm

__all__ += [*adaptive.__all__, *legacy.__all__, *sync_batchnorm.__all__]
