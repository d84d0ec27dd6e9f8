"""Recording for the profiler: times every op at the dispatch point, every backward node and
leaf accumulation, and ``record_function`` ranges, nesting them by time.

Note [Profiler hook]: while no profiler is active the eager path pays one module-level check
(``_dispatch._profiler is not None``) per op. An active recorder is installed there; backward
nodes are timed by wrapping every op's derivative rule for the duration of the profile (and
``_Run.accumulate`` for ``AccumulateGrad``), so the engine has no check at all.
"""

from __future__ import annotations

import threading
import time

from ..ops import _dispatch
from ._events import EventList, FunctionEvent

__all__ = ["Recorder", "record_function", "active"]

_now = time.perf_counter_ns
_lock = threading.Lock()
_recorders = []  # the active recorders (nested profiles record into each)


def active():
    """The innermost active recorder, or None."""
    return _recorders[-1] if _recorders else None


def _aten_name(op):
    return "aten::" + op.name.split(".")[0]


class Recorder:
    """One profile's events. ``busy`` is set while an op runs, so the dispatch calls the op
    makes internally (view refreshes) are part of its time, not events of their own."""

    def __init__(self, record_shapes=False):
        self.record_shapes = record_shapes
        self.busy = False
        self.events = []
        self.open = []  # the enclosing ranges (record_function, backward nodes)
        self._id = 0
        self.t0 = _now()

    # -- ranges ---------------------------------------------------------------------------------
    def _add(self, name, start, end, shapes=None, user=False, category="cpu_op"):
        self._id += 1
        ev = FunctionEvent(self._id, name, threading.get_ident(), (start - self.t0) / 1e3,
                           (end - self.t0) / 1e3, shapes, is_user_annotation=user,
                           category=category)
        if self.open:
            parent = self.open[-1]
            ev.cpu_parent = parent
            parent.cpu_children.append(ev)
        self.events.append(ev)
        return ev

    def begin(self, name, user=True, category="user_annotation"):
        ev = self._add(name, _now(), _now(), user=user, category=category)
        self.open.append(ev)
        return ev

    def end(self, ev):
        ev.time_range.end = (_now() - self.t0) / 1e3
        if self.open and self.open[-1] is ev:
            self.open.pop()
        elif ev in self.open:
            self.open.remove(ev)

    # -- the dispatch hook --------------------------------------------------------------------
    def run(self, fn, op, args):
        """Called by the dispatcher instead of ``fn(op, *args)``."""
        self.busy = True
        start = _now()
        try:
            return fn(op, *args)
        finally:
            end = _now()
            self.busy = False
            shapes = None
            if self.record_shapes:  # apply gets (inputs, params); unary/binary (*inputs, params)
                shapes = _shapes(args[0] if isinstance(args[0], (list, tuple)) else args[:-1])
            self._add(_aten_name(op), start, end, shapes)

    def timed(self, name, fn, args, kwargs):
        """Runs a backward function as a range (ops it dispatches nest inside it)."""
        ev = self.begin(name, user=False, category="cpu_op")
        try:
            return fn(*args, **kwargs)
        finally:
            self.end(ev)

    def result(self):
        return EventList(sorted(self.events, key=lambda e: e.time_range.start))


def _shapes(args):
    """Input shapes as torch records them: a list per tensor input, [] for anything else."""
    from .._tensor import Tensor

    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(list(a._data.shape))
        else:
            out.append([])
    return out


# -- installing and removing the hooks -------------------------------------------------------
_saved_rules = {}


def _node_name(op, kwargs):
    ctx = kwargs.get("ctx")
    return type(ctx).__name__ if ctx is not None else op.node_cls.__name__


def _wrap_rule(op, rule):
    def profiled(ns, g, *saved, **params):
        rec = active()
        if rec is None:
            return rule(ns, g, *saved, **params)
        return rec.timed(_node_name(op, params), rule, (ns, g) + saved, params)
    return profiled


def _wrap_accumulate(accumulate):
    def profiled(run, t, g):
        rec = active()
        if rec is None:
            return accumulate(run, t, g)
        return rec.timed("torch::autograd::AccumulateGrad", accumulate, (run, t, g), {})
    return profiled


def install(rec):
    """Starts recording into ``rec`` (the first active profile installs the hooks)."""
    from ..autograd import engine
    from ..autograd.function import FUNCTION_OP
    from ..ops import OPS

    with _lock:
        _recorders.append(rec)
        if len(_recorders) > 1:
            _dispatch._profiler = _recorders[-1]
            return
        ops = list(OPS.values()) + [FUNCTION_OP]
        for op in ops:
            if op.vjp is not None and op.node_cls is not None or op is FUNCTION_OP:
                _saved_rules[op] = op.vjp
                op.vjp = _wrap_rule(op, op.vjp)
        _saved_rules["accumulate"] = engine._Run.accumulate
        engine._Run.accumulate = _wrap_accumulate(engine._Run.accumulate)
        _dispatch._profiler = rec


def uninstall(rec):
    from ..autograd import engine

    with _lock:
        if rec in _recorders:
            _recorders.remove(rec)
        if _recorders:
            _dispatch._profiler = _recorders[-1]
            return
        _dispatch._profiler = None
        engine._Run.accumulate = _saved_rules.pop("accumulate")
        for op, rule in _saved_rules.items():
            op.vjp = rule
        _saved_rules.clear()


class record_function:
    """Labels a block (or, as a decorator, a function) in the profile; free when no profiler
    is active.

    >>> import graphgrad as torch
    >>> x = torch.ones(2)
    >>> with torch.profiler.profile() as prof:
    ...     with torch.profiler.record_function("block"):
    ...         y = x * 2
    >>> [e.name for e in prof.events()]
    ['block', 'aten::mul']
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._ev = None
        self._rec = None

    def __enter__(self):
        self._rec = active()
        if self._rec is not None:
            self._ev = self._rec.begin(self.name)
        return self

    def __exit__(self, *exc):
        if self._rec is not None:
            self._rec.end(self._ev)
            self._rec = self._ev = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper
