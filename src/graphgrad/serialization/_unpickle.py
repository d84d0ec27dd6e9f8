"""Unpickling torch checkpoints: weights-only (an allowlist, as torch.load's default) or full.

Note [Weights-only loading]
``WeightsOnlyUnpickler.find_class`` is the only way a pickle reaches a Python object: it
resolves torch's allowlisted names (containers, dtypes, storages, ``torch.Size``, the tensor
rebuild functions; see _rebuild.torch_globals) to graphgrad's objects, plus the globals the
user allowed with ``add_safe_globals`` / ``safe_globals``, and refuses anything else with
torch's message, before anything is imported. So nothing is imported or executed but those
callables, and they check their arguments (a tensor view must fit its storage). The full
unpickler (``weights_only=False``, only when asked) imports and runs what the pickle names,
as torch's does; torch's names are mapped onto graphgrad's (``torch.nn.modules.linear.Linear``
-> ``graphgrad.nn.modules.linear.Linear``).
"""

from __future__ import annotations

import _compat_pickle
import collections
import contextlib
import importlib
import pickle
import struct
import threading

from . import _rebuild

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "unpickle"]

_safe: list = []  # what add_safe_globals was given: objects or (object, "module.name")
_local = threading.local()  # safe_globals contexts of this thread


def _full_name(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals: list) -> None:
    """Allows these globals (classes, functions, or ``(obj, "module.name")``) in weights-only
    loads, as ``torch.serialization.add_safe_globals``."""
    for g in _checked(safe_globals):
        _safe.append(g)


def _checked(safe_globals) -> list:
    if not isinstance(safe_globals, (list, tuple)):
        raise TypeError(f"safe_globals must be a list, got {type(safe_globals).__name__}")
    for g in safe_globals:
        if isinstance(g, tuple) and (len(g) != 2 or not isinstance(g[1], str)):
            raise ValueError(f"a safe global given as a tuple must be (obj, 'module.name'), "
                             f"got {g!r}")
    return list(safe_globals)


def clear_safe_globals() -> None:
    """Forgets every global given to ``add_safe_globals``."""
    _safe.clear()


def get_safe_globals() -> list:
    """The globals given to ``add_safe_globals`` (and to open ``safe_globals`` contexts)."""
    return [*_safe, *(g for ctx in getattr(_local, "stack", ()) for g in ctx)]


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """Allows these globals in weights-only loads inside the ``with`` block."""
    entries = _checked(safe_globals)
    stack = _local.__dict__.setdefault("stack", [])
    stack.append(entries)
    try:
        yield
    finally:
        stack.remove(entries)


def _user_allowed() -> dict:
    allowed = {}
    for g in get_safe_globals():
        obj, names = (g[0], [g[1]]) if isinstance(g, tuple) else (g, [_full_name(g)])
        theirs = _rebuild.torch_name(obj)
        if theirs is not None:  # a graphgrad class, allowed under torch's name too
            names.append(".".join(theirs))
        for n in names:
            allowed[n] = obj
    return allowed


def _message(full: str) -> str:
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint.\n"
        "\t(1) Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
        "but it can result in arbitrary code execution. Do it only if you got the file from a "
        "trusted source.\n"
        "\t(2) Alternatively, to load with `weights_only=True` please check the recommended "
        "steps in the following error message.\n"
        f"\tWeightsUnpickler error: Unsupported global: GLOBAL {full} was not an allowed "
        f"global by default. Please use `torch.serialization.add_safe_globals([{full}])` or "
        f"the `torch.serialization.safe_globals([{full}])` context manager to allowlist this "
        "global if you trust this class/function.")


def _fix(module: str, name: str) -> tuple:
    # protocol 2 pickles name Python 2's modules (__builtin__.set); map them as pickle does
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class _BoundedUnpickler(pickle._Unpickler):
    """pickle's own Unpickler in Python: its memo is a dict, where the C one grows an array to
    the largest index a pickle names (one corrupt LONG_BINPUT allocates tens of GB), and a
    counted bytearray is checked against the bytes left before it is allocated."""

    def _load_bytearray8(self):
        (n,) = struct.unpack("<Q", self.read(8))
        if n > _remaining(self):
            raise pickle.UnpicklingError(f"BYTEARRAY8 of {n} bytes past the end of the pickle")
        self.append(bytearray(self.read(n)))

    dispatch = {**pickle._Unpickler.dispatch, pickle.BYTEARRAY8[0]: _load_bytearray8}


def _remaining(u) -> int:
    frame = u._unframer.current_frame
    if frame is not None:
        return len(frame.getbuffer()) - frame.tell()
    f = u._unframer.file_read.__self__
    return len(f._mv) - f.tell() if hasattr(f, "_mv") else 1 << 62


class WeightsOnlyUnpickler(_BoundedUnpickler):
    """Resolves only torch's allowlist and the user's safe globals; see the Note above."""

    def __init__(self, file, persistent_load, **kwargs) -> None:
        super().__init__(file, **kwargs)
        self._persistent = persistent_load
        users = _user_allowed()
        self._allowed = {**_TORCH, **users}
        self._allowed_types = {v for v in users.values() if isinstance(v, type)}

    def persistent_load(self, pid):
        return self._persistent(pid)

    def _load_build(self):
        # BUILD sets an object's attributes: on an OrderedDict (a state dict's _metadata) or
        # an instance of a class the user allowed, never on tensors (graphgrad's slots)
        t = type(self.stack[-2])
        if t not in (collections.OrderedDict, collections.Counter) and t not in self._allowed_types:
            raise pickle.UnpicklingError(
                "Weights only load failed: can only build OrderedDict or types allowlisted "
                f"via `add_safe_globals`, but got {t.__module__}.{t.__qualname__}")
        _BoundedUnpickler.load_build(self)

    dispatch = {**_BoundedUnpickler.dispatch, pickle.BUILD[0]: _load_build}

    def find_class(self, module, name):
        module, name = _fix(module, name)
        full = f"{module}.{name}"
        obj = self._allowed.get(full, _NOT)
        if obj is _NOT:
            raise pickle.UnpicklingError(_message(full))
        return obj


_NOT = object()
_TORCH: dict = {}
_FULL: dict = {}


class FullUnpickler(_BoundedUnpickler):
    """Unpickles everything, as torch.load(weights_only=False); torch's names map to
    graphgrad's."""

    def __init__(self, file, persistent_load, **kwargs) -> None:
        super().__init__(file, **kwargs)
        self._persistent = persistent_load

    def persistent_load(self, pid):
        return self._persistent(pid)

    def find_class(self, module, name):
        module, name = _fix(module, name)
        obj = _FULL.get(f"{module}.{name}", _NOT)
        if obj is not _NOT:
            return obj
        if module == "torch" or module.startswith("torch."):
            return _graphgrad_twin(module, name)
        return super().find_class(module, name)


def _graphgrad_twin(module: str, name: str):
    ours = "graphgrad" + module.removeprefix("torch")
    try:
        obj = importlib.import_module(ours)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise pickle.UnpicklingError(
            f"the checkpoint needs {module}.{name}, which graphgrad does not have "
            f"(looked for {ours}.{name})") from None
    return obj


def _allowed_names() -> dict:
    """torch's weights-only allowlist, as graphgrad plays it."""
    _init()
    return dict(_TORCH)


def unpickle(file, persistent_load, weights_only: bool, **kwargs):
    """One pickle from ``file``, its persistent ids resolved by ``persistent_load``."""
    _init()
    cls = WeightsOnlyUnpickler if weights_only else FullUnpickler
    return cls(file, persistent_load, **kwargs).load()


def _init() -> None:
    if not _TORCH:
        from .._tensor import Tensor
        from ..nn.parameter import Parameter

        _TORCH.update(_rebuild.torch_globals())
        # a trusted load gets the real classes where the allowlist has guarded stand-ins
        _FULL.update(_TORCH, **{"torch.Tensor": Tensor, "torch.nn.parameter.Parameter":
                                Parameter, "builtins.bytearray": bytearray})
