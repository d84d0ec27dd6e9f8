"""``save`` and ``load``: checkpoints both ways with PyTorch, and safetensors files.

``graphgrad.save`` writes torch's zip format (what ``torch.save`` writes; ``torch.load`` reads
it, with ``weights_only=True`` for tensors, state dicts and plain containers) and, for a path
ending in ``.safetensors`` or ``format="safetensors"``, a safetensors file. ``graphgrad.load``
reads all three kinds of file (torch's zip and legacy formats, safetensors, telling them apart
by their first bytes); as torch.load it is weights-only by default: only an allowlist of
globals is resolved and nothing else is imported or run (Note [Weights-only loading]).
Writes to a path are atomic (Note [Atomic checkpoint writes]).
"""

from __future__ import annotations

import io
import os
import pickle
from tempfile import mkdtemp  # torch.serialization exposes it (an import there): kept

from . import _options, _safetensors, _torch_format
from ._atomic import atomic_write
from ._errors import SerializationError
from ._options import (
    INT_SIZE,
    IS_WINDOWS,
    LONG_SIZE,
    SHORT_SIZE,
    UNSAFE_MESSAGE,
    LoadEndianness,
    SourceChangeWarning,
    check_module_version_greater_or_equal,
    default_restore_location,
    get_crc32_options,
    get_default_load_endianness,
    get_default_mmap_options,
    location_tag,
    normalize_storage_type,
    register_package,
    set_crc32_options,
    set_default_load_endianness,
    set_default_mmap_options,
    skip_data,
    storage_to_tensor_type,
    validate_cuda_device,
    validate_hpu_device,
)
from ._rebuild import StorageType
from ._torch_format import MAGIC_NUMBER, PROTOCOL_VERSION
from ._unpickle import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["save", "load", "SerializationError", "add_safe_globals", "clear_safe_globals",
           "get_safe_globals", "safe_globals", "get_unsafe_globals_in_checkpoint",
           "DEFAULT_PROTOCOL", "MAGIC_NUMBER", "PROTOCOL_VERSION", "STORAGE_KEY_SEPARATOR",
           "LoadEndianness", "get_default_load_endianness", "set_default_load_endianness",
           "get_default_mmap_options", "set_default_mmap_options", "get_crc32_options",
           "set_crc32_options", "SourceChangeWarning", "location_tag",
           "default_restore_location", "normalize_storage_type", "register_package",
           "skip_data", "validate_cuda_device", "check_module_version_greater_or_equal",
           "SHORT_SIZE", "INT_SIZE", "LONG_SIZE", "IS_WINDOWS", "UNSAFE_MESSAGE", "StorageType",
           "validate_hpu_device", "storage_to_tensor_type", "mkdtemp"]

DEFAULT_PROTOCOL = 2  # torch's: the pickles stay readable by every torch version
STORAGE_KEY_SEPARATOR = ","
_FORMATS = ("torch", "safetensors")


# -- save -----------------------------------------------------------------------------------
def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False, *,
         format=None) -> None:
    """Saves ``obj`` to ``f`` (a path or a writable binary file), as ``torch.save``.

    The file is torch's zip format unless ``f`` is a path ending in ``.safetensors`` or
    ``format="safetensors"`` is given; ``_use_new_zipfile_serialization=False`` writes torch's
    legacy format. Anything picklable can be saved (a whole module too: ``torch.load`` then
    needs ``weights_only=False``, as for torch's own); graphgrad tensors, layers, dtypes and
    ``Size`` are written under torch's names, so PyTorch reads the file without graphgrad.
    safetensors files hold tensors, NumPy arrays and plain containers only and never pickle.
    A path is written atomically: a crash leaves the previous file intact.

    >>> import io, graphgrad as torch
    >>> buf = io.BytesIO()
    >>> torch.save({"w": torch.ones(2), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> torch.load(buf)
    {'w': tensor([1., 1.]), 'step': 3}
    """
    is_path = isinstance(f, (str, bytes, os.PathLike))
    if format is None:
        name = os.fsdecode(os.fspath(f)) if is_path else ""
        format = "safetensors" if name.lower().endswith(".safetensors") else "torch"
    if format not in _FORMATS:
        raise ValueError(f"save(): format must be one of {_FORMATS}, got {format!r}")
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("save(): graphgrad pickles with the standard pickle module "
                                  f"only, got pickle_module={pickle_module!r}")
    if format == "safetensors":
        write = _safetensors.prepare_safetensors(obj)
    else:
        write = _torch_format.prepare_torch(obj, pickle_protocol or DEFAULT_PROTOCOL,
                                            legacy=not _use_new_zipfile_serialization)
    if is_path:
        atomic_write(f, write)
    elif hasattr(f, "write"):
        write(f)
        if hasattr(f, "flush"):
            f.flush()
    else:
        raise TypeError(f"save() expected a path or a writable binary file, got "
                        f"{type(f).__name__}")


# -- load -----------------------------------------------------------------------------------
def _weights_only_default(weights_only, pickle_module) -> bool:
    if os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0") not in ("0", ""):
        return True
    if weights_only is None:
        if os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") not in ("0", ""):
            return False
        return pickle_module is None  # torch: an explicit pickle_module means a full load
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    return bool(weights_only)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Loads what ``torch.save`` or ``graphgrad.save`` wrote, or a safetensors file.

    ``weights_only`` defaults to True, as in torch: pickles may use only tensors, containers,
    dtypes, ``Size`` and the globals allowed by ``add_safe_globals``; anything else raises
    ``pickle.UnpicklingError``. ``weights_only=False`` unpickles fully, which can run code in
    the file: use it only for files you trust. ``map_location`` (a device, a string, a dict of
    locations or a function ``(storage, location)``) must end on the CPU; ``mmap=True`` maps
    a path's file instead of reading it (copy-on-write).
    """
    weights_only = _weights_only_default(weights_only, pickle_module)
    if map_location is not None and not isinstance(map_location, dict) \
            and not callable(map_location):
        from .._device import check_device

        check_device(map_location)
    buf, name = _read(f, mmap)
    if buf[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _torch_format.read_zip(buf, name, weights_only, map_location, pickle_load_args)
    if _safetensors.is_safetensors(buf):
        return _safetensors.read_safetensors(buf, name)
    if len(buf) > 1 and buf[0] == 0x80 and 2 <= buf[1] <= 5:  # a pickle's PROTO opcode
        if mmap:
            raise RuntimeError("mmap can only be used with files saved with "
                               "`torch.save(_use_new_zipfile_serialization=True), please "
                               "torch.save your checkpoint with this option in order to use "
                               "mmap.")
        return _torch_format.read_legacy(buf, name, weights_only, map_location,
                                         pickle_load_args)
    if len(buf) > 262 and buf[257:262] == b"ustar":
        raise SerializationError(f"{name} is a tar archive: torch's pre-1.0 tar checkpoints "
                                 "are not supported")
    return _safetensors.read_safetensors(buf, name)  # its errors say what is wrong


def _read(f, mmap):
    if isinstance(f, (str, bytes, os.PathLike)):
        name = os.fsdecode(os.fspath(f))
        with open(name, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if mmap and size:
                import mmap as _mmap

                # private (copy-on-write) by default, as torch's mmap loads: tensors are
                # writable and writes never reach the file; MAP_SHARED writes through
                if _options.shared_mmap():
                    with open(name, "r+b") as rw:
                        return _mmap.mmap(rw.fileno(), 0, access=_mmap.ACCESS_WRITE), repr(name)
                return _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY), repr(name)
            buf = bytearray(size)
            n = fh.readinto(buf)
        return (buf if n == size else buf[:n]), repr(name)
    if mmap:
        raise ValueError("f must be a file path in order to use the mmap argument")
    if hasattr(f, "read"):
        name = getattr(f, "name", None)
        label = repr(name) if isinstance(name, str) else f"<{type(f).__name__}>"
        data = f.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"load() expected a binary file, got {type(f).__name__}")
        return bytearray(data), label
    raise TypeError(f"load() expected a path or a readable binary file, got {type(f).__name__}")


def get_unsafe_globals_in_checkpoint(f) -> list:
    """The globals of a torch checkpoint that a weights-only load would refuse (the file's
    pickle is scanned, never run)."""
    import pickletools

    from . import _unpickle

    buf, name = _read(f, False)
    if buf[:4] == b"PK\x03\x04":
        import zipfile

        zf = zipfile.ZipFile(_torch_format.BufferFile(buf))
        pkls = [n for n in zf.namelist() if n.endswith("data.pkl")]
        data = zf.read(pkls[0]) if pkls else b""
        count = 1
    else:
        data = bytes(buf)
        count = 5  # legacy: magic, protocol, sys info, the object, the storage keys
    allowed = {**_unpickle._allowed_names(), **_unpickle._user_allowed()}
    found, strings = [], []
    stream = io.BytesIO(data)
    for _ in range(count):
        for op, arg, _ in pickletools.genops(stream):
            if op.name in ("BINUNICODE", "SHORT_BINUNICODE", "UNICODE", "BINUNICODE8"):
                strings.append(arg)
            full = None
            if op.name == "GLOBAL":
                full = ".".join(_unpickle._fix(*arg.split(" ", 1)))
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                full = ".".join(_unpickle._fix(strings[-2], strings[-1]))
            if full and full not in allowed and full not in found:
                found.append(full)
    return found
