"""Anomaly mode, as ``torch.autograd.detect_anomaly`` / ``set_detect_anomaly``.

While it is on, every graph node records the user's call stack, and backward checks each
gradient for NaN; a NaN raises :class:`AnomalyError` naming the node and the forward line
that made it (PyTorch prints that traceback as a warning; we do both).
"""

from __future__ import annotations

import functools
import warnings

from . import sites

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _Anomaly:
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


# Global, not thread-local, as torch's AnomalyMode.
_state = _Anomaly()


def _set(enabled: bool, check_nan: bool) -> None:
    _state.enabled = bool(enabled)
    _state.check_nan = bool(check_nan)
    sites.state.update(_state.enabled)


def is_anomaly_enabled() -> bool:
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _state.check_nan


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly mode on.

    >>> import graphgrad as torch
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with torch.autograd.detect_anomaly():
    ...         print(torch.autograd.is_anomaly_enabled())
    True
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self.prev = self.prev_check_nan = None
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev, self.prev_check_nan = _state.enabled, _state.check_nan
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _set(self.prev, self.prev_check_nan)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Sets anomaly mode on or off; works as a function call and as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev, self.prev_check_nan = _state.enabled, _state.check_nan
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self.prev, self.prev_check_nan)
        return False
