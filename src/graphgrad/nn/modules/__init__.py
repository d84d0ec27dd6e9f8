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
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .module import Module

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "Threshold", "ReLU", "RReLU",
           "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish", "Hardswish",
           "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid",
           "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax",
           "Softmax2d", "LogSoftmax"]
