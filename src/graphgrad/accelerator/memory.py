"""``torch.accelerator.memory``: the memory counters of the current accelerator.

graphgrad has no accelerator, so each call raises torch's CPU-build RuntimeError.
"""

from __future__ import annotations

from ._none import no_accelerator

__all__ = ["empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats"]


def empty_cache() -> None:
    no_accelerator()


def empty_host_cache() -> None:
    no_accelerator()


def get_memory_info(device_index=None, /):
    no_accelerator()


def max_memory_allocated(device_index=None, /):
    no_accelerator()


def max_memory_reserved(device_index=None, /):
    no_accelerator()


def memory_allocated(device_index=None, /):
    no_accelerator()


def memory_reserved(device_index=None, /):
    no_accelerator()


def memory_stats(device_index=None, /):
    no_accelerator()


def reset_accumulated_memory_stats(device_index=None, /):
    no_accelerator()


def reset_peak_memory_stats(device_index=None, /):
    no_accelerator()
