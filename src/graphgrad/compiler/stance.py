"""``graphgrad.compiler.set_stance`` and ``reset``, as torch.compiler's.

The stance is process-wide (as torch's): ``"default"`` compiles; ``"force_eager"`` ignores every
``graphgrad.compile`` and runs the original function; ``"eager_on_recompile"`` still replays a
variant whose guards pass but runs eagerly instead of capturing; ``"fail_on_recompile"`` raises
``RuntimeError`` (naming the failed guard) instead of capturing. ``set_stance`` works as a
function, a context manager and a decorator. ``reset()`` drops every compiled function's
variants, so the next call captures again.
"""

from __future__ import annotations

import functools
import weakref

__all__ = ["set_stance", "reset", "STANCES", "state"]

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")
GO = object()  # the prologue's "carry on with the normal call"


class _State:
    __slots__ = ("name",)

    def __init__(self):
        self.name = "default"


state = _State()
_compiled: weakref.WeakSet = weakref.WeakSet()


def register(cf) -> None:
    """Makes ``cf`` (a CompiledFunction) known to ``reset()``."""
    _compiled.add(cf)


def _check(stance):
    if stance not in STANCES:
        raise ValueError(f"graphgrad.compiler.set_stance: unknown stance {stance!r}; expected "
                         f"one of {', '.join(repr(s) for s in STANCES)}")


class set_stance:
    """Sets the compiler's stance now; as a context manager or decorator, for the block or
    the decorated function only (the previous stance comes back after).

    >>> import graphgrad as torch
    >>> with torch.compiler.set_stance("force_eager"):
    ...     torch.compiler.set_stance.current()
    'force_eager'
    >>> torch.compiler.set_stance.current()
    'default'
    """

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend=None):
        _check(stance)
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        if skip_guard_eval_unsafe:
            # A replay whose guards were skipped could be silently wrong: refused.
            raise NotImplementedError("graphgrad.compiler.set_stance: "
                                      "skip_guard_eval_unsafe=True is not supported (guards "
                                      "are always evaluated)")
        if force_backend is not None:
            raise NotImplementedError("graphgrad.compiler.set_stance: force_backend is not "
                                      "supported; pass backend= to graphgrad.compile")
        self.stance = stance
        self.prev = state.name
        state.name = stance

    @staticmethod
    def current() -> str:
        return state.name

    def __enter__(self):
        state.name = self.stance
        return self

    def __exit__(self, *exc):
        state.name = self.prev
        return False

    def __call__(self, fn):
        state.name = self.prev  # as a decorator, the stance applies inside fn only
        stance = self.stance

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = state.name
            state.name = stance
            try:
                return fn(*args, **kwargs)
            finally:
                state.name = prev
        return wrapper


def reset() -> None:
    """Forgets every compiled function's captures (variants, graph breaks, recompile counts),
    as torch.compiler.reset(); the next call of each captures again. The on-disk kernel cache
    is kept (its entries are content-addressed)."""
    for cf in list(_compiled):
        cf.variants = []
        cf.breaks = []
        cf.recaptures = []
        cf.limit_warned = False
        cf.template = None
        cf.not_dynamic = None


def prologue(cf, args, kwargs):
    """A call made while a capture runs in this thread (inlined: it runs eagerly and is
    recorded into that capture) or under "force_eager"; GO otherwise."""
    from ..ops import _dispatch

    t = _dispatch._tracer
    if t is not None and t.mine():
        return cf.fn(*args, **kwargs)
    if state.name == "force_eager":
        return cf.fn(*args, **kwargs)
    return GO


def miss(cf, reason) -> bool:
    """No variant fits and the stance is not "default": True to run this call eagerly;
    raises under "fail_on_recompile"."""
    if state.name == "eager_on_recompile":
        return True
    if state.name == "fail_on_recompile":
        fn = cf.fn
        code = getattr(fn, "__code__", None)
        where = (f"filename: '{code.co_filename}', function name: '{code.co_name}', line "
                 f"number: {code.co_firstlineno}") if code is not None else repr(fn)
        msg = f"Detected recompile when graphgrad.compile stance is 'fail_on_recompile'. {where}"
        if reason:
            msg += f"\n    triggered by the following guard failure(s):\n    - {reason}"
        raise RuntimeError(msg)
    return False
