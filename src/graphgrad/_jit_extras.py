"""The rest of torch.jit's eager surface: ``isinstance`` (a runtime check of typing
annotations), ``Attribute``, ``Error``, ``fork``/``wait`` (run at once), ``freeze`` and
``optimize_for_inference`` (the module itself, in eval mode), ``script_if_tracing``, the fusion
switches; and ``save``/``load``, which refuse (no TorchScript archives)."""

from __future__ import annotations

import builtins
import contextlib
import functools
import threading
import types
import typing
import warnings
from collections import namedtuple

__all__ = ["isinstance", "Attribute", "Error", "Future", "fork", "wait", "freeze",
           "optimize_for_inference", "script_if_tracing", "enable_onednn_fusion",
           "onednn_fusion_enabled", "set_fusion_strategy", "strict_fusion", "save", "load",
           "trace_module"]

Attribute = namedtuple("Attribute", ["value", "type"])  # eager: the value and its annotation


class Error(Exception):
    """``torch.jit.Error``: what a scripted ``raise`` becomes (never raised by graphgrad)."""


def _check(obj, target):
    origin, args = typing.get_origin(target), typing.get_args(target)
    if target is typing.Any:
        return True
    if origin is typing.Union or origin is types.UnionType:
        return builtins.any(_check(obj, a) for a in args)
    if origin in (list, typing.List):  # noqa: UP006 - typing.List annotations are checked too
        return builtins.isinstance(obj, list) and builtins.all(_check(x, args[0]) for x in obj)
    if origin in (dict, typing.Dict):  # noqa: UP006
        return builtins.isinstance(obj, dict) and builtins.all(
            _check(k, args[0]) and _check(v, args[1]) for k, v in obj.items())
    if origin in (tuple, typing.Tuple):  # noqa: UP006
        return builtins.isinstance(obj, tuple) and len(obj) == len(args) and builtins.all(
            _check(x, a) for x, a in zip(obj, args))
    if target is type(None):
        return obj is None
    return builtins.isinstance(obj, origin or target)


def isinstance(obj, target_type):  # noqa: A001 - torch's name
    """Whether ``obj`` matches a typing annotation (``List[int]``, ``Dict[str, Tensor]``,
    ``Optional[...]``, ``Tuple[...]``), elements included."""
    if builtins.isinstance(obj, (list, dict, tuple)) and not obj and typing.get_args(target_type):
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance "
                      "in eager mode. For example, List[int] would become list and therefore "
                      "falsely return True for List[float] or List[str].", UserWarning,
                      stacklevel=2)
    return _check(obj, target_type)


class Future:
    """``torch.futures.Future``: a value set once (``set_result``); ``wait`` blocks until then.
    ``fork``'s futures are set at once (graphgrad runs the call eagerly)."""

    def __init__(self, *, devices=None):
        self._event = threading.Event()
        self._value = None
        self._callbacks = []

    @classmethod
    def _done_with(cls, value):
        fut = cls()
        fut.set_result(value)
        return fut

    def set_result(self, result) -> None:
        if self._event.is_set():
            raise RuntimeError("Attempting to mark a completed Future as complete again. Note "
                               "that a Future can only be marked completed once.")
        self._value = result
        self._event.set()
        for callback in self._callbacks:
            callback(self)
        self._callbacks = []

    def done(self) -> bool:
        return self._event.is_set()

    def wait(self):
        self._event.wait()
        return self._value

    def value(self):
        return self._value

    def then(self, callback):
        out = Future()
        self.add_done_callback(lambda fut: out.set_result(callback(fut)))
        return out

    def add_done_callback(self, callback) -> None:
        if self._event.is_set():
            callback(self)
        else:
            self._callbacks.append(callback)


def fork(func, *args, **kwargs):
    return Future._done_with(func(*args, **kwargs))


def wait(future):
    return future.wait()


def _eval_module(mod, what):
    if getattr(mod, "training", False):
        raise RuntimeError(f"{what} is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """The module itself (``script`` returned it unscripted); torch requires eval mode."""
    return _eval_module(mod, "Freezing")


def optimize_for_inference(mod, other_methods=None):
    return _eval_module(mod, "Freezing")


def script_if_tracing(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        return fn(*args, **kwargs)

    return call


_fusion = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled: bool) -> None:
    _fusion["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _fusion["onednn"]


def set_fusion_strategy(strategy):
    """Records the strategy and returns the previous one (nothing is fused by TorchScript)."""
    old, _fusion["strategy"] = _fusion["strategy"], list(strategy)
    return old


@contextlib.contextmanager
def strict_fusion():
    yield


def _no_archives(what):
    raise NotImplementedError(f"torch.jit.{what}: graphgrad has no TorchScript archives; save "
                              "the model's state_dict with graphgrad.save and rebuild the "
                              "module to load it")


def save(m, f, _extra_files=None):
    _no_archives("save")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    _no_archives("load")


def trace_module(mod, inputs, *args, **kwargs):
    from .jit import _warn_once

    _warn_once("trace_module")
    return mod
