"""Writes into tensors whose elements share memory (made by ``expand``).

NumPy hands out broadcast views read-only, so a write raises "assignment destination is
read-only". torch refuses a write only where two written elements alias one location
("unsupported operation: more than one element of the written-to tensor refers to a single
memory location"); ``x.expand(2, 3)[0] = v``, ``fill_`` and ``zero_`` are allowed and reach
every alias. ``writable_alias`` gives the writable array over the same memory for those.
"""

from __future__ import annotations

import numpy as np

__all__ = ["OVERLAP_MESSAGE", "overlap_error", "internal_overlap", "writable_alias"]

OVERLAP_MESSAGE = ("unsupported operation: more than one element of the written-to tensor "
                   "refers to a single memory location. Please clone() the tensor before "
                   "performing the operation.")


def overlap_error(name: str) -> RuntimeError:
    return RuntimeError(f"{OVERLAP_MESSAGE} (in {name})")


def internal_overlap(a: np.ndarray) -> bool:
    """True when two elements of ``a`` are one memory location (a stretched dim: stride 0)."""
    return any(n > 1 and s == 0 for n, s in zip(a.shape, a.strides))


def writable_alias(a: np.ndarray):
    """A writable array over ``a``'s memory, or None when ``a``'s memory is not writable."""
    if a.flags.writeable:
        return a
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.writeable or not root.flags.c_contiguous or a.size == 0:
        return None
    start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    flat = root.reshape(-1).view(np.uint8)
    return np.ndarray(a.shape, a.dtype, buffer=flat, offset=start, strides=a.strides)
