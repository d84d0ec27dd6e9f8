"""``graphgrad.cuda``: torch.cuda as a CPU-only torch build answers it.

graphgrad has no CUDA backend, so ``is_available()`` is False and ``device_count()`` 0. Each
function does what torch 2.13's CPU build does: seeding, ``empty_cache`` and the memory counters
are quiet no-ops (0), and calls that need a device raise AssertionError("Torch not compiled with
CUDA enabled"), so ``if torch.cuda.is_available(): ...`` scripts take their CPU path.
"""

from __future__ import annotations

from collections import OrderedDict

from . import amp
from .tensor_types import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)

__all__ = ["amp", "is_available", "device_count", "is_initialized", "init", "current_device",
           "set_device", "synchronize", "empty_cache", "ipc_collect", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state",
           "set_rng_state", "get_rng_state_all", "set_rng_state_all", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached",
           "max_memory_cached", "memory_stats", "memory_summary", "mem_get_info",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "get_device_name",
           "get_device_capability", "get_device_properties", "get_arch_list",
           "get_gencode_flags", "is_bf16_supported", "current_stream", "default_stream",
           "OutOfMemoryError"]
__all__ += ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
            "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]

OutOfMemoryError = type("OutOfMemoryError", (RuntimeError,), {
    "__module__": __name__, "__doc__": "torch.cuda.OutOfMemoryError (never raised here)."})


def _lazy_init():
    raise AssertionError("Torch not compiled with CUDA enabled")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def get_arch_list() -> list:
    return []


def get_gencode_flags() -> str:
    return ""


def init() -> None:
    _lazy_init()


def current_device() -> int:
    _lazy_init()


def set_device(device) -> None:
    # NOTE: torch's CPU build fails here with an AttributeError from its C extension; the
    # missing-CUDA AssertionError says what is wrong.
    _lazy_init()


def synchronize(device=None) -> None:
    _lazy_init()


def ipc_collect() -> None:
    _lazy_init()


def empty_cache() -> None:
    """Nothing to free: no CUDA caching allocator exists."""


def manual_seed(seed) -> None:
    int(seed)  # torch validates the seed even when it has no device to seed


def manual_seed_all(seed) -> None:
    int(seed)


def seed() -> None:
    pass


def seed_all() -> None:
    pass


def initial_seed() -> int:
    _lazy_init()


def get_rng_state(device="cuda"):
    _lazy_init()


def set_rng_state(new_state, device="cuda") -> None:
    pass


def get_rng_state_all() -> list:
    return []


def set_rng_state_all(new_states) -> None:
    pass


def memory_allocated(device=None) -> int:
    return 0


def max_memory_allocated(device=None) -> int:
    return 0


def memory_reserved(device=None) -> int:
    return 0


def max_memory_reserved(device=None) -> int:
    return 0


memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def memory_stats(device=None) -> OrderedDict:
    return OrderedDict()


def memory_summary(device=None, abbreviated=False) -> str:
    _lazy_init()


def mem_get_info(device=None):
    _lazy_init()


def reset_peak_memory_stats(device=None) -> None:
    _lazy_init()


def reset_max_memory_allocated(device=None) -> None:
    _lazy_init()


def get_device_name(device=None) -> str:
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def get_device_properties(device=None):
    _lazy_init()


def current_stream(device=None):
    _lazy_init()


def default_stream(device=None):
    _lazy_init()
