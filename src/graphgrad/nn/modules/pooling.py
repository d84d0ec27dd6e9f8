"""Pooling layers: max, average, power-average (LP) and adaptive pooling over 1-D and 2-D
signals, and ``MaxUnpool`` (the partial inverse of max pooling).

Each layer stores its arguments as torch's does (some as given, some through ``_pair``), since
that is what its repr prints, and forwards to ``graphgrad.nn.functional``.
"""

from __future__ import annotations

from ...ops.creation import zeros
from ...ops.elementwise import relu, sign
from .. import functional as F
from .module import Module
from .utils import _pair, _single

__all__ = ["MaxPool1d", "MaxPool2d", "MaxUnpool1d", "MaxUnpool2d", "AvgPool1d", "AvgPool2d",
           "LPPool1d", "LPPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """The maximum over sliding windows of (N, C, L) or (C, L) input."""

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """The maximum over sliding windows of (N, C, H, W) or (C, H, W) input.

    >>> import graphgrad as torch
    >>> torch.nn.MaxPool2d(2)(torch.arange(16.).reshape(1, 4, 4)).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


# -- MaxUnpool -------------------------------------------------------------------------------

def _unpool_size(input, indices, kernel_size, stride, padding, output_size, d, name):
    """The spatial output size, as torch's ``_unpool_output_size``."""
    if input.shape != indices.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    in_size = input.shape[-d:]
    default = [(in_size[i] - 1) * stride[i] + kernel_size[i] - 2 * padding[i]
               for i in range(d)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == d + 2:
        output_size = output_size[2:]
    if len(output_size) != d:
        raise ValueError(f"output_size should be a sequence containing {d} or {d + 2} elements, "
                         f"but it has a length of '{len(output_size)}'")
    for i in range(d):
        lo, hi = default[i] - stride[i], default[i] + stride[i]
        if not lo < output_size[i] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {i} must be between '
                             f"{lo} and {hi})")
    return output_size


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, d, name):
    """Scatters ``input`` to the flat positions ``indices`` of a zero plane per channel."""
    size = _unpool_size(input, indices, kernel_size, stride, padding, output_size, d, name)
    lead = tuple(input.shape[:-d])
    n = 1
    for s in size:
        n *= s
    flat_idx = indices.flatten(-d) if d > 1 else indices
    if flat_idx.numel() and (int(flat_idx.min()) < 0 or int(flat_idx.max()) >= n):
        raise RuntimeError(f"Found an invalid max index: {int(flat_idx.max())} (output volumes "
                           f"are of size {'x'.join(map(str, size))}")
    out = zeros(lead + (n,), dtype=input.dtype)
    src = input.flatten(-d) if d > 1 else input
    return out.scatter(-1, flat_idx, src).reshape(lead + tuple(size))


class _MaxUnpoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Puts each value of a ``MaxPool1d(return_indices=True)`` output back where it came from;
    every other position is zero."""

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if (stride is not None) else kernel_size)
        self.padding = _single(padding)

    def forward(self, input, indices, output_size=None):
        return _max_unpool(input, indices, self.kernel_size, self.stride, self.padding,
                           output_size, 1, "max_unpool1d")


class MaxUnpool2d(_MaxUnpoolNd):
    """Puts each value of a ``MaxPool2d(return_indices=True)`` output back where it came from;
    every other position is zero."""

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride if (stride is not None) else kernel_size)
        self.padding = _pair(padding)

    def forward(self, input, indices, output_size=None):
        return _max_unpool(input, indices, self.kernel_size, self.stride, self.padding,
                           output_size, 2, "max_unpool2d")


# -- average pooling -------------------------------------------------------------------------

class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """The mean over sliding windows of (N, C, L) or (C, L) input."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """The mean over sliding windows of (N, C, H, W) or (C, H, W) input."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


# -- power-average pooling -------------------------------------------------------------------

def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, d):
    """torch's ``lp_pool{1,2}d``: ``(sum over the window of x**p) ** (1/p)``, through avg_pool
    times the window size (so a negative window sum, possible for odd p, is clamped to 0)."""
    if norm_type == float("inf"):
        pool = F.max_pool1d if d == 1 else F.max_pool2d
        return pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        pool = F.max_pool1d if d == 1 else F.max_pool2d
        return -pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    avg = F.avg_pool1d if d == 1 else F.avg_pool2d
    if stride is not None:
        out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    if d == 1:
        size = kernel_size if isinstance(kernel_size, int) else kernel_size[0]
    else:
        kw, kh = _pair(kernel_size)
        size = kw * kh
    return (sign(out) * relu(out.abs())).mul(size).pow(1.0 / norm_type)


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """The p-norm over sliding windows of (N, C, L) or (C, L) input."""

    def forward(self, input):
        return _lp_pool(input, float(self.norm_type), self.kernel_size, self.stride,
                        self.ceil_mode, 1)


class LPPool2d(_LPPoolNd):
    """The p-norm over sliding windows of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        return _lp_pool(input, float(self.norm_type), self.kernel_size, self.stride,
                        self.ceil_mode, 2)


# -- adaptive pooling ------------------------------------------------------------------------

class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """The maximum over ``output_size`` near-equal windows of (N, C, L) or (C, L) input."""

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """The maximum over near-equal windows giving an ``output_size`` plane (None keeps a dim)."""

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """The mean over ``output_size`` near-equal windows of (N, C, L) or (C, L) input."""

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """The mean over near-equal windows giving an ``output_size`` plane (None keeps a dim).

    >>> import graphgrad as torch
    >>> torch.nn.AdaptiveAvgPool2d(1)(torch.ones(2, 3, 5, 7)).shape
    torch.Size([2, 3, 1, 1])
    """

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)
