"""torch's legacy layers kept for old scripts: ``CrossMapLRN2d`` (Lua Torch's cross-channel
LRN, with its window quirk), ``NLLLoss2d`` (an alias of ``NLLLoss``) and the deprecated
``Container``."""

from __future__ import annotations

import warnings

import numpy as np

from ..._tensor import wrap
from ...autograd.function import Function
from ...ops.contraction import einsum
from .loss import NLLLoss
from .module import Module

__all__ = ["CrossMapLRN2d", "NLLLoss2d", "Container"]


def _cross_map_window(channels, size):
    """W[c, j] = 1 when channel j's square enters channel c's scale. Built as torch's running
    sum: add the channel ``pre_pad - 1`` ahead, drop the one ``pre_pad`` behind only once
    ``c > pre_pad`` (so channel 0 stays in every later window, as in torch)."""
    pre_pad = int((size - 1) / 2 + 1)
    w = np.zeros((channels, channels))
    w[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        w[c] = w[c - 1]
        if c < channels - pre_pad + 1:
            w[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            w[c, c - pre_pad] -= 1
    return w


def _backward_window(channels, size):
    """Wb[c, j] = 1 for the ratios torch's backward sums into channel c: a symmetric window
    ``[c - ipp, c + size - 1 - ipp]`` with ``ipp = int(size - (size - 1) / 2)``."""
    ipp = int(size - (size - 1) / 2)
    c = np.arange(channels)[:, None]
    j = np.arange(channels)[None, :]
    return ((j >= c - ipp) & (j <= c + size - 1 - ipp)).astype(np.float64)


class _CrossMapLRN2dFn(Function):
    """torch's legacy function: its backward is its own formula (a symmetric window), not the
    exact derivative of the quirky forward window, and graphgrad reproduces both."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        dt = input._data.dtype
        win = wrap(_cross_map_window(input.shape[1], size).astype(dt), False, None)
        scale = einsum("dc,nchw->ndhw", win, input * input) * (alpha / size) + k
        output = input * scale.pow(-beta)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        dt = input._data.dtype
        win = wrap(_backward_window(input.shape[1], ctx.size).astype(dt), False, None)
        ratio = grad_output * output / scale
        accum = einsum("cj,njhw->nchw", win, ratio)
        cache = 2 * ctx.alpha * ctx.beta / ctx.size
        grad_input = scale.pow(-ctx.beta) * grad_output - cache * input * accum
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    """``x / (k + alpha / size * sum of x**2 over a channel window) ** beta`` on 4-D input."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        return _CrossMapLRN2dFn.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class NLLLoss2d(NLLLoss):
    """Deprecated name of ``NLLLoss`` (which handles N-d input)."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
                      FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    """Deprecated: a Module built from keyword submodules."""

    def __init__(self, **kwargs) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
