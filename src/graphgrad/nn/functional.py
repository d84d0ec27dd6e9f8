"""Stateless neural-network functions, as ``torch.nn.functional`` (activations, padding, ...).

The ops themselves live in the op table (``graphgrad.ops``); this module gives them torch's
``F.<name>`` spelling. Where torch's functional form takes ``inplace=``, ``inplace=True`` runs
the in-place form (``F.elu_``), which writes into ``input`` and returns it.
"""

from __future__ import annotations

from ..ops import activation as _act
from ..ops.activation import (
    celu_,
    elu_,
    gelu,
    hardtanh_,
    leaky_relu_,
    logsigmoid,
    relu_,
    selu_,
    softplus,
    softsign,
    tanhshrink,
)
from ..ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d, fold, unfold
from ..ops.elementwise import relu as _relu
from ..ops.elementwise import sigmoid, tanh
from ..ops.gather import one_hot
from ..ops.nn import log_softmax, softmax
from ..ops.pooling import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
)
from ..ops.resample import adaptive_avg_pool1d, adaptive_avg_pool2d, interpolate
from ..ops.structure import pad
from ._functional.linear import bilinear, linear

__all__ = ["linear", "bilinear",
           "softmax", "log_softmax", "relu", "relu_", "sigmoid", "tanh", "elu", "elu_", "selu",
           "selu_", "celu", "celu_", "gelu", "silu", "mish", "hardtanh", "hardtanh_", "relu6",
           "leaky_relu", "leaky_relu_", "hardsigmoid", "hardswish", "softplus", "softsign",
           "tanhshrink", "logsigmoid", "one_hot", "pad",
           "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold",
           "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "interpolate"]


def relu(input, inplace=False):
    return relu_(input) if inplace else _relu(input)


def elu(input, alpha=1.0, inplace=False):
    return (elu_ if inplace else _act.elu)(input, alpha)


def selu(input, inplace=False):
    return (selu_ if inplace else _act.selu)(input)


def celu(input, alpha=1.0, inplace=False):
    return (celu_ if inplace else _act.celu)(input, alpha)


def silu(input, inplace=False):
    return (_act.silu_ if inplace else _act.silu)(input)


def mish(input, inplace=False):
    return (_act.mish_ if inplace else _act.mish)(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return (hardtanh_ if inplace else _act.hardtanh)(input, min_val, max_val)


def relu6(input, inplace=False):
    """``hardtanh(input, 0, 6)``."""
    return hardtanh_(input, 0.0, 6.0) if inplace else _act.relu6(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return (leaky_relu_ if inplace else _act.leaky_relu)(input, negative_slope)


def hardsigmoid(input, inplace=False):
    return (_act.hardsigmoid_ if inplace else _act.hardsigmoid)(input)


def hardswish(input, inplace=False):
    return (_act.hardswish_ if inplace else _act.hardswish)(input)
