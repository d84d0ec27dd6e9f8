"""``F.glu`` and ``F.softmin`` composed from existing ops, and torch's ``F.*`` spellings (with
``inplace=``) of the primitives in ``ops/activation_extra.py``."""

from __future__ import annotations

import warnings

from ...ops import activation_extra as _extra
from ...ops._util import wrap_dim
from ...ops.activation_extra import hardshrink, prelu, softshrink, threshold_
from ...ops.elementwise import _TORCH_NAMES, _tensor_arg, sigmoid
from ...ops.nn import log_softmax as _log_softmax
from ...ops.nn import softmax as _softmax

__all__ = ["threshold", "threshold_", "rrelu", "rrelu_", "hardshrink", "softshrink", "glu",
           "prelu", "softmin"]


def threshold(input, threshold, value, inplace=False):
    """``value`` where ``input <= threshold``, else ``input``."""
    return (threshold_ if inplace else _extra.threshold)(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky relu: slopes drawn from ``U(lower, upper)`` in training, their mean
    ``(lower + upper) / 2`` otherwise."""
    return (_extra.rrelu_ if inplace else _extra.rrelu)(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return _extra.rrelu_(input, lower, upper, training)


def glu(input, dim=-1):
    """The gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``.

    >>> import graphgrad as torch
    >>> torch.nn.functional.glu(torch.tensor([[1.0, 2.0, 0.0, 0.0]]))
    tensor([[0.5000, 1.0000]])
    """
    _tensor_arg(input, "glu")
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.dim())
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    if not input.dtype.is_floating_point:
        name = str(input.dtype).removeprefix("torch.")
        raise NotImplementedError(f"\"glu_cpu\" not implemented for '{_TORCH_NAMES[name]}'")
    half = n // 2
    return input.narrow(d, 0, half) * sigmoid(input.narrow(d, half, half))


def _implicit_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """torch.nn.functional.softmax: as torch.softmax, but ``dim`` may be left out (deprecated
    in torch): it then warns and picks 0 for 0-, 1- and 3-d inputs, else 1."""
    _tensor_arg(input, "softmax")
    if dim is None:
        dim = _implicit_dim("softmax", input.dim(), _stacklevel)
    return _softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """torch.nn.functional.log_softmax, with softmax's implicit ``dim``."""
    _tensor_arg(input, "log_softmax")
    if dim is None:
        dim = _implicit_dim("log_softmax", input.dim(), _stacklevel)
    return _log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)``: weights that favour the smallest entries.

    >>> import graphgrad as torch
    >>> torch.nn.functional.softmin(torch.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    _tensor_arg(input, "softmin")
    if dim is None:
        dim = _implicit_dim("softmin", input.dim(), _stacklevel)
    neg = -input
    if dtype is None and not neg.dtype.is_floating_point:
        # torch's kernel refuses integers with NotImplementedError (a RuntimeError subclass)
        name = str(neg.dtype).removeprefix("torch.")
        raise NotImplementedError(f"\"softmax_lastdim_kernel_impl\" not implemented for "
                                  f"'{_TORCH_NAMES[name]}'")
    return _softmax(neg, dim, dtype)
