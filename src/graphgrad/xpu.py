"""``graphgrad.xpu``: torch.xpu as a CPU-only torch build answers it.

Programs probe ``torch.xpu.is_available()`` when they pick a device: it is False, seeding and
the memory counters are quiet no-ops (0), and calls that need a device raise
AssertionError("Torch not compiled with XPU enabled"), as torch 2.13's CPU build does.
Streams, events, graphs and the pyzes telemetry calls are absent (docs/compat.md).
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["is_available", "device_count", "is_initialized", "init", "current_device",
           "set_device", "synchronize", "empty_cache", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "get_rng_state", "get_rng_state_all", "set_rng_state",
           "set_rng_state_all", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "memory_stats_as_nested_dict",
           "memory_snapshot", "mem_get_info", "get_device_name", "get_device_capability",
           "get_device_properties", "get_arch_list", "get_gencode_flags", "is_bf16_supported",
           "is_tf32_supported", "default_generators", "current_stream", "set_stream",
           "can_device_access_peer", "set_per_process_memory_fraction",
           "get_per_process_memory_fraction"]

default_generators: tuple = ()


def _lazy_init(*_args, **_kwargs):
    raise AssertionError("Torch not compiled with XPU enabled")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    return False


def get_arch_list() -> list:
    return []


def get_gencode_flags() -> str:
    return ""


def _quiet(*_args, **_kwargs):
    return None


def _zero(device=None) -> int:
    return 0


manual_seed = manual_seed_all = seed = seed_all = empty_cache = _quiet
memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _zero
init = current_device = set_device = synchronize = initial_seed = get_rng_state = _lazy_init
mem_get_info = get_device_name = get_device_capability = get_device_properties = _lazy_init
current_stream = set_stream = can_device_access_peer = _lazy_init
set_per_process_memory_fraction = get_per_process_memory_fraction = _lazy_init


def get_rng_state_all() -> list:
    return []


def set_rng_state(new_state, device="xpu") -> None:
    _lazy_init()


def set_rng_state_all(new_states) -> None:
    for state in new_states:
        set_rng_state(state)


def memory_stats(device=None):
    return OrderedDict()


def memory_stats_as_nested_dict(device=None) -> dict:
    return {}


def memory_snapshot(mempool_id=None) -> list:
    return []
