"""``graphgrad.cpu``: torch.cpu's device functions for the one device graphgrad has."""

from __future__ import annotations

from . import amp
from ._streams import Event, Stream, StreamContext, current_stream, stream

__all__ = ["amp", "is_available", "device_count", "current_device", "is_initialized",
           "synchronize", "set_device", "Stream", "Event", "StreamContext", "stream",
           "current_stream"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def is_initialized() -> bool:
    return True


def synchronize(device=None) -> None:
    """Nothing to wait for: NumPy work is done when a call returns."""


def set_device(device) -> None:
    """A no-op, as in torch: the CPU is the only CPU device."""
