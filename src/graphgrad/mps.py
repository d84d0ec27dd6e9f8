"""``graphgrad.mps``: torch.mps as torch 2.13's CPU build (no Metal backend) answers it.

``is_available()`` is False and ``device_count()`` 0; ``manual_seed`` is a quiet no-op; calls
that need the device raise torch's RuntimeError ("Cannot execute ... without MPS backend.").
"""

from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed", "seed", "get_rng_state",
           "set_rng_state", "synchronize", "empty_cache", "current_allocated_memory",
           "driver_allocated_memory", "recommended_max_memory",
           "set_per_process_memory_fraction", "compile_shader"]


def _no_mps(what):
    def call(*_args, **_kwargs):
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")
    call.__name__ = what
    return call


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed) -> None:
    return None


seed = _no_mps("getDefaultGenerator")
get_rng_state = _no_mps("getDefaultGenerator")
synchronize = _no_mps("deviceSynchronize")
empty_cache = _no_mps("emptyCache")
current_allocated_memory = _no_mps("getCurrentAllocatedMemory")
driver_allocated_memory = _no_mps("getDriverAllocatedMemory")
recommended_max_memory = _no_mps("getRecommendedMaxMemory")


def set_rng_state(new_state, device="mps") -> None:
    _no_mps("getDefaultGenerator")()


def set_per_process_memory_fraction(fraction) -> None:
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    _no_mps("setMemoryFraction")()


def compile_shader(source):
    raise RuntimeError("MPS is not available")
