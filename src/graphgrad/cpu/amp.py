"""``graphgrad.cpu.amp``: torch.cpu.amp's deprecated ``autocast`` and ``GradScaler``."""

from __future__ import annotations

import warnings

from ..amp import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler"]


class autocast(autocast_mode.autocast):
    """``torch.cpu.amp.autocast(...)``: ``torch.amp.autocast('cpu', ...)`` (see graphgrad.amp)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """``torch.cpu.amp.GradScaler(...)``: ``torch.amp.GradScaler('cpu', ...)``."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
