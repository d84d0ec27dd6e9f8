"""``graphgrad.backends.openmp``: False, as graphgrad's eager kernels (NumPy) use no OpenMP pool
(torch's CPU build says True)."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    return False
