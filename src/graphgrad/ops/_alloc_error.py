"""torch's allocation failure: a RuntimeError naming the bytes, where NumPy raises MemoryError.

torch 2.13 says "[enforce fail at alloc_cpu.cpp:...] ... DefaultCPUAllocator: can't allocate
memory: you tried to allocate N bytes."; programs catch it as RuntimeError.
"""

from __future__ import annotations

import math

__all__ = ["alloc_error"]


def alloc_error(err: MemoryError, where: str) -> RuntimeError:
    """The RuntimeError for NumPy's MemoryError ``err`` raised while ``where`` ran."""
    size = getattr(err, "_total_size", None)  # NumPy's _ArrayMemoryError carries the request
    if size is None and getattr(err, "shape", None) is not None:
        size = math.prod(err.shape) * err.dtype.itemsize
    what = f"{size} bytes" if size is not None else "more memory than is available"
    return RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                        f"{what}. (in {where}: {err})")
