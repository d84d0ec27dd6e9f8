"""``graphgrad.amp``: torch.amp's ``autocast`` and ``GradScaler`` (see docs/compat.md).

autocast casts the ops of torch's CPU lists (docs/numerics.md); GradScaler is torch's
loss-scaling algorithm.
"""

from __future__ import annotations

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]
