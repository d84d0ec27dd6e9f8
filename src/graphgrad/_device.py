"""Devices: ``device('cpu')`` works; any other type raises an error naming what is missing."""

from __future__ import annotations

__all__ = ["device"]

_KNOWN = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla")


class device:
    """Where a tensor's data lives; only ``cpu`` has a backend today."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's parameter name
        if isinstance(type, device):
            type, index = type.type, type.index
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string, got {type.__class__.__name__}")
        if ":" in type:
            type, _, idx = type.partition(":")
            index = int(idx)
        if type not in _KNOWN:
            raise RuntimeError(
                f"Expected one of {', '.join(_KNOWN)} device type at start of device string: "
                f"{type}"
            )
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")


def check_device(d) -> device:
    """Validates a ``device=`` argument; only the CPU backend exists so far."""
    if d is None:
        return CPU
    d = device(d) if not isinstance(d, device) else d
    if d.type != "cpu":
        first = (f"Torch not compiled with {d.type.upper()} enabled"
                 if d.type in ("cuda", "xpu") else "")
        raise DeviceUnavailableError(
            (f"{first}: " if first else "")
            + f"graphgrad has no backend for device '{d}': only 'cpu' (NumPy) is available in "
            f"this build. A '{d.type}' backend would be a module in graphgrad/backends/ "
            "(see docs/design.md, 'Backends')."
        )
    return d


class DeviceUnavailableError(AssertionError, RuntimeError):
    """A device this build has no backend for. torch raises AssertionError for CUDA and XPU on
    a CPU-only build and RuntimeError for others; this is both, so either ``except`` works."""
