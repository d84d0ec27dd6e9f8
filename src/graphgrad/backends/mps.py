"""``graphgrad.backends.mps``: no Metal backend, so neither available nor built."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
