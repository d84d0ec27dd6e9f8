"""``set_num_threads`` / ``get_num_threads`` and the inter-op pair, with torch's checks.

NOTE: graphgrad records the numbers; NumPy's BLAS pool is not resized (that would need
threadpoolctl, which is not a runtime dependency). When numba is already loaded (graphgrad.compile's
fused kernels), ``set_num_threads`` also sets numba's parallel pool, capped at its maximum.
"""

from __future__ import annotations

import builtins
import os
import sys

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads"]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _Threads:
    __slots__ = ("intra", "interop", "interop_set")

    def __init__(self):
        self.intra = _cores()
        self.interop = _cores()
        self.interop_set = False


_state = _Threads()


def _positive_int(name: str, n) -> builtins.int:
    if isinstance(n, builtins.bool) or not isinstance(n, builtins.int):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def set_num_threads(int) -> None:  # noqa: A002 - torch's parameter name
    """Sets the number of threads used for intra-op parallelism (recorded; see the module note)."""
    _state.intra = _positive_int("set_num_threads", int)
    numba = sys.modules.get("numba")
    if numba is not None:
        try:
            numba.set_num_threads(min(_state.intra, numba.config.NUMBA_NUM_THREADS))
        except (AttributeError, ValueError):  # a numba without a parallel layer
            pass


def get_num_threads() -> builtins.int:
    return _state.intra


def set_num_interop_threads(int) -> None:  # noqa: A002 - torch's parameter name
    """Sets the inter-op thread count once, as torch allows only one call."""
    n = _positive_int("set_num_interop_threads", int)
    if _state.interop_set:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _state.interop = n
    _state.interop_set = True


def get_num_interop_threads() -> builtins.int:
    return _state.interop
