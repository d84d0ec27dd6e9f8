"""Process-wide switches that torch scripts set: determinism, matmul precision, warn-always,
flush-denormal and the default device.

graphgrad's kernels are NumPy's, which are deterministic and run float32 matmuls in float32, so
the determinism and precision switches are recorded and read back but change no result.
"""

from __future__ import annotations

import builtins

from ._device import check_device

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "set_warn_always", "is_warn_always_enabled",
           "set_flush_denormal", "set_default_device", "get_default_device"]

_PRECISIONS = ("highest", "high", "medium")


class _Flags:
    __slots__ = ("deterministic", "warn_only", "matmul_precision", "warn_always", "device")

    def __init__(self):
        self.deterministic = False
        self.warn_only = False
        self.matmul_precision = "highest"
        self.warn_always = False
        self.device = check_device("cpu")


flags = _Flags()


def _bool_arg(fn: str, name: str, value, position: str = "") -> builtins.bool:
    if not isinstance(value, builtins.bool):
        raise TypeError(f"{fn}(): argument '{name}'{position} must be bool, not "
                        f"{type(value).__name__}")
    return value


def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    """Records the mode; every graphgrad kernel is deterministic already."""
    fn = "_set_deterministic_algorithms"
    flags.deterministic = _bool_arg(fn, "mode", mode, " (position 1)")
    flags.warn_only = _bool_arg(fn, "warn_only", warn_only)


def are_deterministic_algorithms_enabled() -> builtins.bool:
    return flags.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> builtins.bool:
    return flags.deterministic and flags.warn_only


def set_deterministic_debug_mode(debug_mode) -> None:
    """0/'default' off, 1/'warn' deterministic with warnings only, 2/'error' deterministic."""
    if isinstance(debug_mode, str):
        names = ("default", "warn", "error")
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names.index(debug_mode)
    elif not isinstance(debug_mode, builtins.int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    flags.deterministic = debug_mode > 0
    flags.warn_only = debug_mode == 1


def get_deterministic_debug_mode() -> builtins.int:
    if not flags.deterministic:
        return 0
    return 1 if flags.warn_only else 2


def set_float32_matmul_precision(precision) -> None:
    """Records 'highest', 'high' or 'medium'; NumPy's float32 matmul is always full precision."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _PRECISIONS:
        import warnings

        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    flags.matmul_precision = precision


def get_float32_matmul_precision() -> str:
    return flags.matmul_precision


def set_warn_always(b) -> None:
    if not isinstance(b, builtins.bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    flags.warn_always = b


def is_warn_always_enabled() -> builtins.bool:
    return flags.warn_always


def set_flush_denormal(mode) -> builtins.bool:
    """Returns False: NumPy offers no way to set the CPU's flush-to-zero mode, so denormals stay.

    torch returns True where it could switch the mode (x86 with SSE3).
    """
    if not isinstance(mode, builtins.bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def set_default_device(device) -> None:
    """Sets the default device; only the CPU exists, so any other device raises now (torch raises
    later, when a tensor is made)."""
    flags.device = check_device("cpu" if device is None else device)


def get_default_device():
    return flags.device
