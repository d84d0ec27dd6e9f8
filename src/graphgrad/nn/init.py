"""Parameter initialisers, as ``torch.nn.init``: each fills a tensor in place under no_grad.

The fan and gain formulas are torch's; the random numbers come from graphgrad's generator, so
the values differ from torch's for the same seed while the distributions are the same.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._tensor import wrap
from ..autograd.grad_mode import no_grad
from ..ops.random import _rng

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (``relu``: sqrt(2), ``tanh``: 5/3, ...).

    >>> from graphgrad.nn import init
    >>> init.calculate_gain("leaky_relu", 0.2)
    1.3867504905630728
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _write(tensor, values):
    """Copies an array into ``tensor`` in place (cast to its dtype), outside the graph."""
    with no_grad():
        tensor.copy_(wrap(np.asarray(values), False, None))
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills ``tensor`` with samples from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills ``tensor`` with samples from N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills ``tensor`` with N(mean, std**2) samples redrawn until they fall in [a, b]."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    rng = _rng(generator)
    shape = tuple(tensor.shape)
    mass = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
    if mass > 0.3:
        # Most normal draws land in [a, b]: redraw the ones that do not.
        out = rng.normal(mean, std, shape)
        bad = (out < a) | (out > b)
        while bad.any():
            out[bad] = rng.normal(mean, std, int(bad.sum()))
            bad = (out < a) | (out > b)
    else:
        # Little mass in [a, b]: uniform proposals on [a, b], accepted with the normal density
        # relative to its peak inside the interval (torch's scheme too).
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        out = np.empty(shape)
        pending = np.ones(shape, dtype=bool)
        while pending.any():
            n = int(pending.sum())
            cand = rng.uniform(a, b, n)
            accept = np.log(rng.random(n)) <= -0.5 * ((cand - mean) / std) ** 2 - log_peak
            idx = np.flatnonzero(pending)[accept]
            out.flat[idx] = cand[accept]
            pending.flat[idx] = False
    return _write(tensor, out)


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def constant_(tensor, val):
    """Fills ``tensor`` with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fills a 2-D tensor with the identity matrix."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """Fills a 3-, 4- or 5-D convolution weight so the convolution is the identity (per group)."""
    dimensions = tensor.ndimension()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    values = np.zeros(tuple(sizes))
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            values[(g * out_per_group + d, d) + centre] = 1
    return _write(tensor, values)


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan_mode)`` (He et al.)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std**2) with ``std = gain / sqrt(fan_mode)`` (He et al.)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix, from the QR decomposition of a normal sample, times gain."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique, as torch does
    if rows < cols:
        q = q.T
    return _write(tensor, gain * q.reshape(tuple(tensor.shape)))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D normal N(0, std**2) matrix with a ``sparsity`` fraction of each column zeroed."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    rng = _rng(generator)
    values = rng.normal(0, std, (rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[:num_zeros], col] = 0
    return _write(tensor, values)


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"Deprecated alias of ``{new_name}``."
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
