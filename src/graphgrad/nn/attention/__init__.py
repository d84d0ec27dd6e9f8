"""``torch.nn.attention``: choosing a scaled-dot-product-attention backend. graphgrad has one
implementation (torch's MATH backend), so ``sdpa_kernel`` checks its argument as torch does
and changes nothing."""

from __future__ import annotations

import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The attention backends torch can pick between."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self) -> str:
        return f"<SDPBackend.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"SDPBackend.{self.name}"


_backends = [list(SDPBackend)[1:]]  # the enabled set (the innermost context's)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Context manager limiting scaled_dot_product_attention to ``backends``; accepted and
    without effect here (every call takes the math path).

    >>> from graphgrad.nn.attention import SDPBackend, sdpa_kernel
    >>> with sdpa_kernel(SDPBackend.MATH):
    ...     pass
    """
    if not isinstance(backends, (SDPBackend, list)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    _backends.append(list(dict.fromkeys(backends)))
    try:
        yield {}
    finally:
        _backends.pop()
