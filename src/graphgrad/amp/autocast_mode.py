"""``autocast``: torch's mixed-precision region, as a context manager and decorator.

NOTE: graphgrad has no reduced-precision matmul path worth emulating, so an enabled CPU region
runs every op in its tensors' own dtypes (float32 stays float32); it warns once to say so.
torch's checks and warnings are kept: CUDA regions disable themselves (no CUDA here), and an
unsupported CPU dtype (anything but bfloat16/float16) disables the region with torch's warning.
"""

from __future__ import annotations

import functools
import threading
import warnings

from .. import _dtype, _flags
from .._device import device as _device

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
           "custom_fwd", "custom_bwd"]


class _State(threading.local):
    def __init__(self):
        self.enabled = {}


_state = _State()
_warned = [False]


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` accepts the device type (cpu and cuda, as in torch)."""
    return device_type in ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia")


def is_autocast_enabled(device_type=None) -> bool:
    """Whether an enabled autocast region is active for the device type ('cuda' by default)."""
    return _state.enabled.get("cuda" if device_type is None else device_type, False)


def set_autocast_enabled(device_type, enabled=None) -> None:
    if enabled is None:  # torch's old one-argument form sets CUDA's flag
        device_type, enabled = "cuda", device_type
    _state.enabled[device_type] = bool(enabled)


def _cpu_dtypes():
    return tuple(d for d in (getattr(_dtype, "bfloat16", None), _dtype.float16) if d is not None)


class autocast:
    """Marks a region (or a function, as a decorator) as autocast, with torch's arguments.

    >>> import graphgrad as torch
    >>> with torch.autocast("cpu", enabled=False):
    ...     torch.is_autocast_enabled("cpu")
    False
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            _device(device_type)  # an unknown type raises torch's RuntimeError here
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", UserWarning, stacklevel=2)
                enabled = False
            elif device_type == "cpu" and dtype is not None and dtype not in _cpu_dtypes():
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                              "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                              "torch.float16 currently.", UserWarning, stacklevel=2)
                enabled = False
            elif device_type == "cpu" and (not _warned[0] or _flags.flags.warn_always):
                _warned[0] = True
                warnings.warn("graphgrad runs autocast regions in the tensors' own dtypes: ops "
                              "are not cast to bfloat16/float16 (results match a region without "
                              "autocast)", UserWarning, stacklevel=2)
        self._enabled = bool(enabled)

    def __enter__(self):
        self._prev = _state.enabled.get(self.device, False)
        _state.enabled[self.device] = self._enabled
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _state.enabled[self.device] = self._prev
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def custom_fwd(fwd=None, *, device_type=None, cast_inputs=None):
    """A custom Function's forward under autocast: runs it as is (no casting happens here)."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type=None):
    """A custom Function's backward under autocast: runs it as is."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
