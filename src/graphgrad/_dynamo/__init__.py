"""``torch._dynamo``: the names tutorials reach for before ``torch.compiler`` existed
(``torch._dynamo.reset()`` between experiments, ``config``, ``explain``, ``mark_dynamic``),
answered by graphgrad.compile's controls."""

from __future__ import annotations

from types import SimpleNamespace

__all__ = ["reset", "config", "explain", "mark_dynamic", "disable", "allow_in_graph",
           "optimize", "is_compiling", "list_backends"]

# torch's knobs that programs set; graphgrad reads cache_size_limit as its recompile limit
config = SimpleNamespace(cache_size_limit=8, suppress_errors=False, verbose=False,
                         capture_scalar_outputs=False, automatic_dynamic_shapes=True,
                         recompile_limit=8)


def reset() -> None:
    """Forgets every compiled variant (``graphgrad.compiler.reset``)."""
    from ..compiler import reset as _reset

    _reset()


def explain(fn, *args, **kwargs):
    """``torch._dynamo.explain(fn)(*args)``: graphgrad.compiler.explain's report."""
    from ..compiler import explain as _explain

    if args or kwargs:
        return _explain(fn, *args, **kwargs)
    return lambda *a, **k: _explain(fn, *a, **k)


def mark_dynamic(t, index, **kwargs) -> None:
    """Accepted; graphgrad generalizes over dim 0 with ``compile(dynamic=True)``."""


def disable(fn=None, recursive: bool = True):
    """A function that always runs eagerly (graphgrad.compiler.disable when present)."""
    from .. import compiler

    dis = getattr(compiler, "disable", None)
    if dis is not None:
        return dis(fn, recursive=recursive) if fn is not None else dis
    return fn if fn is not None else (lambda f: f)


def allow_in_graph(fn):
    return fn


def optimize(backend="inductor", **kwargs):
    """The pre-2.0 spelling of ``torch.compile``: ``torch._dynamo.optimize(backend)(fn)``."""
    from .. import compile as _compile

    return lambda fn: _compile(fn, backend=backend if isinstance(backend, str) else None)


def is_compiling() -> bool:
    from ..compiler import is_compiling as _is

    return _is()


def list_backends(exclude_tags=()) -> list:
    from ..compiler import list_backends as _lb

    return _lb()
