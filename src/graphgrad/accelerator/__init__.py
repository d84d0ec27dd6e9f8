"""``graphgrad.accelerator``: torch.accelerator as a CPU-only torch build answers it.

Official examples pick their device with
``torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"``.
graphgrad has no accelerator: ``is_available()`` is False, ``current_accelerator()`` None,
``device_count()`` 0, and calls that need a device raise torch's RuntimeError.
"""

from __future__ import annotations

import warnings

from . import graphs, memory
from ._none import no_accelerator
from .graphs import Graph
from .memory import (
    empty_cache,
    empty_host_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)

__all__ = ["Graph", "current_accelerator", "current_device_idx", "current_device_index",
           "get_device_capability", "current_stream", "device_count", "device_index",
           "empty_cache", "empty_host_cache", "get_memory_info", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
           "set_device_idx", "set_device_index", "set_stream", "synchronize", "graphs",
           "memory"]


def device_count() -> int:
    """The number of accelerator devices: 0."""
    return 0


def is_available() -> bool:
    """Whether an accelerator is present: False."""
    return False


def current_accelerator(check_available: bool = False):
    """The accelerator's device type (a ``device``), or None when there is none, as here."""
    return None


def current_device_index() -> int:
    no_accelerator()


def current_device_idx() -> int:
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /) -> None:
    no_accelerator()


def set_device_idx(device, /) -> None:
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


def current_stream(device=None, /):
    no_accelerator()


def set_stream(stream) -> None:
    no_accelerator()


def synchronize(device=None, /) -> None:
    no_accelerator()


def get_device_capability(device=None, /):
    no_accelerator()


class device_index:  # noqa: N801 - torch's name
    """Context manager that switches the current accelerator index; ``None`` does nothing,
    any index raises (there is no accelerator)."""

    def __init__(self, device, /):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            no_accelerator()

    def __exit__(self, *exc_info):
        return None
