"""``graphgrad.backends.mkldnn``: graphgrad's kernels are NumPy's, not oneDNN's, so it is not
available; ``enabled`` is a settable flag that changes nothing."""

from __future__ import annotations

__all__ = ["is_available", "enabled"]

enabled = True


def is_available() -> bool:
    return False
