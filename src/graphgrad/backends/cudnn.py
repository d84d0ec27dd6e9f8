"""``graphgrad.backends.cudnn``: torch.backends.cudnn's switches, which scripts set freely.

There is no cuDNN here: ``is_available()`` is False and the flags (enabled, benchmark,
deterministic, allow_tf32, benchmark_limit) are plain settable attributes that change nothing.
"""

from __future__ import annotations

import contextlib
import sys

__all__ = ["is_available", "version", "is_acceptable", "flags", "enabled", "benchmark",
           "deterministic", "allow_tf32", "benchmark_limit"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    return False


def version():
    return None


def is_acceptable(tensor) -> bool:
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Sets the flags for a block and restores them after, as torch's ``cudnn.flags``."""
    mod = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {n: getattr(mod, n) for n in names}
    new = (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    for n, v in zip(names, new):
        setattr(mod, n, v)
    try:
        yield
    finally:
        for n, v in saved.items():
            setattr(mod, n, v)
