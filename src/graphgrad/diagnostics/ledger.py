"""The memory ledger: bytes of tensor storage alive now, and the peak since the last reset.

Every array that a Tensor is made around and that owns its memory (``base is None``: views
share their base's storage, so they are counted once) is followed with a weak reference whose
callback subtracts its size when NumPy frees it. That costs about 0.6 us, so arrays smaller
than ``min_bytes`` (16 KiB by default) are left out: they cost more to count than they weigh.
See Note [Memory ledger] in docs/design.md.
"""

from __future__ import annotations

import weakref

__all__ = ["track", "allocated", "max_allocated", "reset_peak", "set_min_tracked_bytes",
           "min_tracked_bytes"]


class _Tracked(weakref.ref):
    """A weak reference to a counted array that remembers its key and size for the callback."""

    __slots__ = ("key", "nbytes")


class _Ledger:
    __slots__ = ("live", "bytes", "peak", "min_bytes")

    def __init__(self):
        self.live = {}  # id(array) -> its _Tracked reference (which keeps the entry alive)
        self.bytes = 0
        self.peak = 0
        self.min_bytes = 16 * 1024


ledger = _Ledger()


def _freed(ref, _ledger=ledger):
    # CPython runs the callback as the array is deallocated, before its id can be reused
    if _ledger.live.pop(ref.key, None) is not None:
        _ledger.bytes -= ref.nbytes


def track(array) -> None:
    """Counts ``array``'s storage until it is freed (called by ``wrap`` for large arrays)."""
    if array.base is not None:
        return
    key = id(array)
    live = ledger.live
    if key in live:  # the same array wrapped again (detach, a saved output)
        return
    ref = _Tracked(array, _freed)
    ref.key = key
    ref.nbytes = n = array.nbytes
    live[key] = ref
    ledger.bytes += n
    if ledger.bytes > ledger.peak:
        ledger.peak = ledger.bytes


def allocated() -> int:
    """Bytes of tensor storage alive now (arrays of at least ``min_tracked_bytes()``)."""
    return ledger.bytes


def max_allocated() -> int:
    """The highest ``allocated()`` since the process started or ``reset_peak()``."""
    return ledger.peak


def reset_peak() -> None:
    ledger.peak = ledger.bytes


def set_min_tracked_bytes(n: int) -> None:
    """Arrays of at least ``n`` bytes made from now on are counted (0 counts every array)."""
    ledger.min_bytes = int(n)


def min_tracked_bytes() -> int:
    return ledger.min_bytes
