"""``graphgrad.random``: torch.random's seeding functions and ``fork_rng``.

The functions are the default generator's (graphgrad.ops.random); ``fork_rng`` saves its state
and restores it on exit, so draws inside the block do not shift the stream outside it.
"""

from __future__ import annotations

import contextlib

from .ops.random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng", "thread_safe_generator"]


def thread_safe_generator():
    """The generator a DataLoader thread worker should draw from, or None (use the default
    generator). graphgrad's DataLoader workers are processes, never threads, so always None,
    as torch answers in the main process and in process workers."""
    return None


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Restores the CPU generator's state (and the named devices', of which there are none
    here) when the block ends.

    >>> import graphgrad as torch
    >>> _ = torch.manual_seed(0)
    >>> with torch.random.fork_rng():
    ...     a = torch.rand(2)
    >>> bool((torch.rand(2) == a).all())
    True
    """
    if not enabled:
        yield
        return
    if devices:
        from . import cuda

        for d in devices:  # raises as torch's CPU build does: no accelerator devices exist
            cuda.get_rng_state(d)
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
