"""``graphgrad.cuda.amp``: torch.cuda.amp's deprecated ``autocast`` and ``GradScaler``.

Both warn as torch's do (FutureWarning), and both disable themselves: there is no CUDA.
"""

from __future__ import annotations

import functools
import warnings

from ..amp import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(autocast_mode.autocast):
    """``torch.cuda.amp.autocast(...)``: ``torch.amp.autocast('cuda', ...)``, disabled here."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """``torch.cuda.amp.GradScaler(...)``: ``torch.amp.GradScaler('cuda', ...)``, disabled."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd):
    return bwd
