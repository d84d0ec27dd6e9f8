"""``graphgrad.jit``: torch.jit's entry points, so scripts that script or trace still run.

graphgrad has no TorchScript: ``script`` and ``trace`` return their argument unchanged (eager)
and warn once that they did; ``graphgrad.compile`` is the way to capture and optimise a function.
The decorators (``ignore``, ``unused``, ``export``, ``interface``) are no-ops, and
``is_scripting()`` / ``is_tracing()`` are always False.
"""

from __future__ import annotations

import typing
import warnings

from . import _flags

__all__ = ["script", "trace", "ignore", "unused", "export", "interface", "is_scripting",
           "is_tracing", "annotate", "Final"]

Final = typing.Final
_warned = [False]


def _warn_once(what: str) -> None:
    if not _warned[0] or _flags.flags.warn_always:
        _warned[0] = True
        warnings.warn(f"graphgrad does not script or trace: torch.jit.{what} returned its "
                      "argument unchanged, to run eagerly. Use graphgrad.compile(fn) to capture "
                      "and optimise a function.", UserWarning, stacklevel=3)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns ``obj`` (a function or Module) unchanged, warning once."""
    _warn_once("script")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Returns ``func`` (a function or Module) unchanged, warning once; nothing is run."""
    _warn_once("trace")
    return func


def ignore(drop=False, **kwargs):
    """``@torch.jit.ignore`` / ``@torch.jit.ignore(drop=True)``: returns the function."""
    if callable(drop):
        return drop
    if drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", FutureWarning,
                      stacklevel=2)
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type, the_value):
    """Returns ``the_value``: the annotation only mattered to TorchScript."""
    return the_value


# the rest of the eager surface (isinstance, fork/wait, freeze, ...) lives in _jit_extras
from ._jit_extras import (  # noqa: E402
    Attribute,
    Error,
    Future,
    enable_onednn_fusion,
    fork,
    freeze,
    isinstance,
    load,
    onednn_fusion_enabled,
    optimize_for_inference,
    save,
    script_if_tracing,
    set_fusion_strategy,
    strict_fusion,
    trace_module,
    wait,
)

__all__ += ["Attribute", "Error", "Future", "enable_onednn_fusion", "fork", "freeze",
            "isinstance", "load", "onednn_fusion_enabled", "optimize_for_inference", "save",
            "script_if_tracing", "set_fusion_strategy", "strict_fusion", "trace_module", "wait"]
