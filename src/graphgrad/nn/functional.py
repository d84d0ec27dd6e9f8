"""Stateless neural-network functions, as ``torch.nn.functional`` (activations, padding, ...).

The ops themselves live in the op table (``graphgrad.ops``); this module gives them torch's
``F.<name>`` spelling. Where torch's functional form takes ``inplace=``, ``inplace=True`` calls
the tensor's in-place method of the same name (``x.relu_()``), with the same arguments.
"""

from __future__ import annotations

from ..ops import activation as _act
from ..ops.activation import gelu, logsigmoid, softplus, softsign, tanhshrink
from ..ops.elementwise import relu as _relu
from ..ops.elementwise import sigmoid, tanh
from ..ops.nn import log_softmax, softmax
from ..ops.structure import pad

__all__ = ["softmax", "log_softmax", "relu", "sigmoid", "tanh", "elu", "selu", "celu", "gelu",
           "silu", "mish", "hardtanh", "relu6", "leaky_relu", "hardsigmoid", "hardswish",
           "softplus", "softsign", "tanhshrink", "logsigmoid", "pad"]


def _in_place(name, input, *args):
    method = getattr(input, f"{name}_", None)
    if method is None:
        raise NotImplementedError(f"{name}(inplace=True): graphgrad has no in-place "
                                  f"Tensor.{name}_ yet; use inplace=False")
    return method(*args)


def relu(input, inplace=False):
    return _in_place("relu", input) if inplace else _relu(input)


def elu(input, alpha=1.0, inplace=False):
    return _in_place("elu", input, alpha) if inplace else _act.elu(input, alpha)


def selu(input, inplace=False):
    return _in_place("selu", input) if inplace else _act.selu(input)


def celu(input, alpha=1.0, inplace=False):
    return _in_place("celu", input, alpha) if inplace else _act.celu(input, alpha)


def silu(input, inplace=False):
    return _in_place("silu", input) if inplace else _act.silu(input)


def mish(input, inplace=False):
    return _in_place("mish", input) if inplace else _act.mish(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if inplace:
        return _in_place("hardtanh", input, min_val, max_val)
    return _act.hardtanh(input, min_val, max_val)


def relu6(input, inplace=False):
    return _in_place("relu6", input) if inplace else _act.relu6(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return _in_place("leaky_relu", input, negative_slope)
    return _act.leaky_relu(input, negative_slope)


def hardsigmoid(input, inplace=False):
    return _in_place("hardsigmoid", input) if inplace else _act.hardsigmoid(input)


def hardswish(input, inplace=False):
    return _in_place("hardswish", input) if inplace else _act.hardswish(input)
