"""The rest of ``torch.serialization``'s public names: load endianness, mmap flags, CRC32
option, storage location helpers, ``SourceChangeWarning`` and the refusals for what a
one-backend build cannot do (``register_package``, ``skip_data``)."""

from __future__ import annotations

import enum
import mmap as _mmap
import struct
import sys

__all__ = ["LoadEndianness", "get_default_load_endianness", "set_default_load_endianness",
           "get_default_mmap_options", "set_default_mmap_options", "get_crc32_options",
           "set_crc32_options", "SourceChangeWarning", "location_tag",
           "default_restore_location", "normalize_storage_type", "register_package",
           "skip_data", "validate_cuda_device", "check_module_version_greater_or_equal",
           "SHORT_SIZE", "INT_SIZE", "LONG_SIZE", "IS_WINDOWS", "UNSAFE_MESSAGE",
           "validate_hpu_device", "storage_to_tensor_type"]


SHORT_SIZE, INT_SIZE, LONG_SIZE = (struct.calcsize("=" + c) for c in "hil")  # standard sizes
IS_WINDOWS = sys.platform == "win32"
UNSAFE_MESSAGE = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument "
                  "in `torch.load` from `False` to `True`. Re-running `torch.load` with "
                  "`weights_only` set to `False` will likely succeed, but it can result in "
                  "arbitrary code execution. Do it only if you got the file from a trusted "
                  "source.")


class SourceChangeWarning(Warning):
    """torch warns with it when a saved module's source changed; graphgrad never does."""


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_state = {"endianness": None, "mmap": getattr(_mmap, "MAP_PRIVATE", 2), "crc32": True}


def get_default_load_endianness():
    """The byte order assumed for checkpoints that do not record theirs (None: native)."""
    return _state["endianness"]


def set_default_load_endianness(endianness) -> None:
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _state["endianness"] = endianness


def byteorder_for_unrecorded(native: str) -> str:
    e = _state["endianness"]
    return native if e in (None, LoadEndianness.NATIVE) else e.name.lower()


def get_default_mmap_options() -> int:
    return _state["mmap"]


class set_default_mmap_options:  # noqa: N801 - torch's name (a class: also a context manager)
    """``mmap.MAP_PRIVATE`` (the default: writes to mmap-loaded tensors stay in memory) or
    ``mmap.MAP_SHARED`` (they reach the file), for ``load(..., mmap=True)``."""

    def __init__(self, flags: int) -> None:
        if flags not in (getattr(_mmap, "MAP_PRIVATE", 2), getattr(_mmap, "MAP_SHARED", 1)):
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _state["mmap"]
        _state["mmap"] = flags

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        _state["mmap"] = self.prev


def shared_mmap() -> bool:
    return _state["mmap"] == getattr(_mmap, "MAP_SHARED", 1)


def get_crc32_options() -> bool:
    return _state["crc32"]


def set_crc32_options(compute_crc32: bool) -> None:
    """Accepted for torch's API; graphgrad always writes CRC-32s (Python's zipfile does)."""
    _state["crc32"] = bool(compute_crc32)


def location_tag(storage) -> str:
    return "cpu"


def default_restore_location(storage, location: str):
    if str(location) != "cpu":
        from .._device import check_device

        check_device(location)
    return storage


def normalize_storage_type(storage_type):
    return storage_type


def validate_cuda_device(location):
    raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                       "torch.cuda.is_available() is False. If you are running on a CPU-only "
                       "machine, please use torch.load with map_location=torch.device('cpu') "
                       "to map your storages to the CPU.")


def validate_hpu_device(location):
    raise RuntimeError("Attempting to deserialize object on a HPU device but "
                       "torch.hpu.is_available() is False. If you are running on a CPU-only "
                       "machine, please use torch.load with map_location=torch.device('cpu') "
                       "to map your storages to the CPU.")


def storage_to_tensor_type(storage):
    raise NotImplementedError("torch.serialization.storage_to_tensor_type: graphgrad has no "
                              "legacy tensor types (torch.FloatTensor, ...) to map storages to")


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether ``module.__version__`` is at least ``req_version_tuple`` (torch's helper)."""
    try:
        parts = [int(p) for p in module.__version__.split("+")[0].split(".")[:len(
            req_version_tuple)]]
    except ValueError:
        if error_if_malformed:
            raise RuntimeError(f"'{module.__name__}' module version string is malformed "
                               f"'{module.__version__}' and cannot be compared with tuple "
                               f"{req_version_tuple}") from None
        return False
    return tuple(parts) >= tuple(req_version_tuple)


def register_package(priority, tagger, deserializer):
    raise NotImplementedError("torch.serialization.register_package: graphgrad has one "
                              "storage backend (cpu) and no device-tag registry")


class skip_data:  # noqa: N801 - torch's name
    """torch's prototype for saving/loading without storage bytes: not supported."""

    def __init__(self, materialize_fake_tensors: bool = False) -> None:
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        raise NotImplementedError("torch.serialization.skip_data: graphgrad always reads and "
                                  "writes storage bytes")

    def __exit__(self, *exc) -> None:
        return None
