"""OpInfos for activations and extra elementwise math: logit, softplus, elu, selu, gelu, silu,
mish, hardtanh, leaky_relu, nan_to_num, lerp, hypot, atan2, fmod, logaddexp.
"""

from __future__ import annotations

from .core import OpInfo


def op_db() -> list[OpInfo]:
    return []
