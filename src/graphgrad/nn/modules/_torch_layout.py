"""torch's module paths for the layer classes (``torch.nn.modules.activation.MultiheadAttention``).

graphgrad groups its layers in its own files; pickles, ``add_safe_globals`` lists and
``isinstance`` checks name torch's paths, so each class is also reachable where torch defines
it, and ``torch_path`` gives the path ``graphgrad.save`` writes for a class, so that torch
unpickles a saved module without graphgrad installed.
"""

from __future__ import annotations

import sys
import types

# torch 2.13's file (under torch.nn.modules) for every layer class graphgrad has.
TORCH_FILES = {
    "activation": ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish",
                   "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish",
                   "MultiheadAttention", "PReLU", "RReLU", "ReLU", "ReLU6", "SELU", "SiLU",
                   "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink",
                   "Softsign", "Tanh", "Tanhshrink", "Threshold"],
    "adaptive": ["AdaptiveLogSoftmaxWithLoss"],
    "batchnorm": ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d",
                  "LazyBatchNorm2d", "LazyBatchNorm3d", "SyncBatchNorm"],
    "channelshuffle": ["ChannelShuffle"],
    "container": ["Container", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList",
                  "Sequential"],
    "conv": ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
             "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
             "LazyConvTranspose2d", "LazyConvTranspose3d"],
    "distance": ["CosineSimilarity", "PairwiseDistance"],
    "dropout": ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                "FeatureAlphaDropout"],
    "flatten": ["Flatten", "Unflatten"],
    "fold": ["Fold", "Unfold"],
    "instancenorm": ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
                     "LazyInstanceNorm2d", "LazyInstanceNorm3d"],
    "lazy": ["LazyModuleMixin"],
    "linear": ["Bilinear", "Identity", "LazyLinear", "Linear", "NonDynamicallyQuantizableLinear"],
    "loss": ["BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss",
             "CrossEntropyLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss",
             "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss",
             "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "NLLLoss2d",
             "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
             "TripletMarginWithDistanceLoss"],
    "module": ["Module"],
    "normalization": ["CrossMapLRN2d", "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"],
    "padding": ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
                "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
                "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
                "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"],
    "pixelshuffle": ["PixelShuffle", "PixelUnshuffle"],
    "pooling": ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
                "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d",
                "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
                "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
                "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"],
    "rnn": ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"],
    "sparse": ["Embedding", "EmbeddingBag"],
    "transformer": ["Transformer", "TransformerDecoder", "TransformerDecoderLayer",
                    "TransformerEncoder", "TransformerEncoderLayer"],
    "upsampling": ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"],
}

_by_class: dict[type, str] = {}


def install() -> None:
    """Makes ``graphgrad.nn.modules.<torch file>.<name>`` resolve for every class above."""
    from ... import nn
    from .. import modules as package

    for file, names in TORCH_FILES.items():
        full = f"{package.__name__}.{file}"
        module = sys.modules.get(full)
        if module is None:
            try:
                module = __import__(full, fromlist=["_"])
            except ImportError:  # a file torch has and graphgrad does not: a plain namespace
                module = types.ModuleType(full, f"torch.nn.modules.{file}'s classes")
                sys.modules[full] = module
                setattr(package, file, module)
        for name in names:
            cls = getattr(module, name, None) or getattr(nn, name, None)
            if cls is None:
                continue
            if not hasattr(module, name):
                setattr(module, name, cls)
            _by_class.setdefault(cls, f"torch.nn.modules.{file}")


def torch_path(cls) -> str | None:
    """torch's module path for a graphgrad layer class, or None for any other class."""
    return _by_class.get(cls)
