"""``graphgrad.autograd.detect_nonfinite``: stop at the first op that made a NaN or Inf out of
finite inputs, forward or backward, and say why.

Anomaly mode checks gradients only and blames the node where a NaN is *seen*, which can be
far from where it began. Here every op's output is checked as it is made: the first one whose
output holds NaN/Inf while all its inputs were finite raises :class:`NonFiniteError` with the
op, the user's line, the input condition ("log: 3 inputs were 0.0, min 0.0"; "exp: max input
812.4") and the chain of ancestors whose magnitudes grew step by step before it. An output
that is non-finite because an input already was is not the origin and passes (the origin
raised earlier, or the non-finite value came from outside any op).

Off by default; while on it costs one finiteness scan per op output and per gradient (see
bench/bench_diagnostics.py). It installs itself like the profiler (Note [Profiler hook]):
through the dispatcher's hook slot for forward ops and by wrapping the derivative rules for
backward, so the eager path pays nothing when it is off.
"""

from __future__ import annotations

import sys
import threading
import weakref

import numpy as np

from . import sites
from .grad_mode import _DecoratorContextManager

__all__ = ["detect_nonfinite", "NonFiniteError"]


class NonFiniteError(RuntimeError):
    """The first op whose output was NaN/Inf while its inputs were finite."""

    def __init__(self, message, op=None, site=None, condition=None, chain=(), phase="forward"):
        super().__init__(message)
        self.op = op
        self.site = site
        self.condition = condition
        self.chain = list(chain)
        self.phase = phase


_lock = threading.Lock()
_active: list = []  # the open detect_nonfinite contexts (nesting shares one hook)
_saved_rules: dict = {}


def _float_arrays(values):
    from .._tensor import Tensor

    out = []
    for v in values:
        a = v._data if isinstance(v, Tensor) else v
        if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
            out.append(a)
        elif isinstance(a, float):
            out.append(np.asarray(a))
    return out


def _finite(a) -> bool:
    return bool(np.isfinite(a).all())


def _fmt(v: float) -> str:
    s = f"{float(v):.4g}"
    return s if any(c in s for c in ".einIN") else s + ".0"


def _condition(name: str, inputs: list) -> str:
    """What about the inputs explains a non-finite output of op ``name``."""
    base = name.split(".")[0].lstrip("_")
    if not inputs:
        return f"{base}: no floating-point inputs"
    x = inputs[0]
    if base in ("log", "log2", "log10", "xlogy", "lgamma", "digamma", "polygamma", "log_softmax"):
        zeros, neg = int(np.sum(x == 0)), int(np.sum(x < 0))
        parts = []
        if zeros:
            parts.append(f"{zeros} input{'s' if zeros > 1 else ''} were 0.0"
                         if zeros > 1 else "1 input was 0.0")
        if neg:
            parts.append(f"{neg} negative")
        return f"{base}: " + (", ".join(parts) or "inputs in range") + f", min {_fmt(x.min())}"
    if base == "log1p":
        return f"{base}: {int(np.sum(x <= -1))} inputs <= -1, min {_fmt(x.min())}"
    if base in ("exp", "exp2", "expm1", "cosh", "sinh", "pow", "float_power", "softplus"):
        return f"{base}: max input {_fmt(x.max())}"
    if base in ("div", "true_divide", "floor_divide", "remainder", "fmod") and len(inputs) > 1:
        d = inputs[1]
        z = int(np.sum(d == 0))
        both = int(np.sum((d == 0) & (np.broadcast_to(x, np.broadcast(x, d).shape) == 0)))
        return (f"{base}: {z} divisor{'s' if z != 1 else ''} were 0.0"
                + (f" ({both} of them 0/0)" if both else "")
                + f", numerator max |x| {_fmt(np.abs(x).max())}")
    if base in ("reciprocal", "rsqrt"):
        return f"{base}: {int(np.sum(x == 0))} inputs were 0.0, min |x| {_fmt(np.abs(x).min())}"
    if base == "sqrt":
        return f"{base}: {int(np.sum(x < 0))} inputs < 0, min {_fmt(x.min())}"
    if base in ("acos", "asin", "atanh"):
        return f"{base}: {int(np.sum(np.abs(x) > 1))} inputs outside [-1, 1]"
    mags = [np.abs(a).max() for a in inputs if a.size]
    return f"{base}: inputs finite, max |x| {_fmt(max(mags) if mags else 0.0)}"


class _IdRecords:
    """Records keyed by tensor identity (a Tensor's ``==`` is elementwise), dropped with the
    tensor."""

    def __init__(self):
        self._d = {}

    def __setitem__(self, t, rec):
        key = id(t)
        self._d[key] = (weakref.ref(t, lambda _, k=key, d=self._d: d.pop(k, None)), rec)

    def get(self, t, default=None):
        e = self._d.get(id(t))
        return e[1] if e is not None and e[0]() is t else default

    def __contains__(self, t) -> bool:
        return self.get(t) is not None

    def __getitem__(self, t):
        rec = self.get(t)
        if rec is None:
            raise KeyError(t)
        return rec


class _Checker:
    """The dispatcher hook (``_dispatch._profiler``): runs the op, then checks its output."""

    def __init__(self, prev):
        self.prev = prev  # a profiler that was active (it still records)
        self.busy = False
        self.records = _IdRecords()  # output tensor -> (op, max|x|, site, parents)

    def run(self, fn, op, args):
        self.busy = True
        try:
            out = self.prev.run(fn, op, args) if self.prev is not None else fn(op, *args)
        finally:
            self.busy = False
        self.check(op, args, out)
        return out

    def check(self, op, args, out):
        from .._tensor import Tensor

        t = out[0] if isinstance(out, tuple) else out
        if not isinstance(t, Tensor) or t._data.dtype.kind not in "fc":
            return
        if isinstance(args[0], (list, tuple)):  # apply(op, inputs, params)
            tensors = [x for x in args[0] if isinstance(x, Tensor)]
            raw = list(args[0])
        else:  # unary(op, x, params) / binary(op, a, b, params)
            tensors = [x for x in args[:-1] if isinstance(x, Tensor)]
            raw = list(args[:-1])
        a = t._data
        mag = float(np.abs(a).max()) if a.size and np.isfinite(a).all() else float("inf")
        self.records[t] = (op.name, mag, sites.capture(3), tuple(weakref.ref(x)
                                                                    for x in tensors))
        if np.isfinite(a).all():
            return
        arrays = _float_arrays(raw)
        if not all(_finite(x) for x in arrays):
            return  # not the origin: an input already held NaN/Inf
        site = sites.capture(3)
        cond = _condition(op.name, arrays)
        chain = self.chain(tensors)
        raise NonFiniteError(_message("forward", op.name, a, site, cond, chain), op.name, site,
                             cond, chain, "forward")

    def chain(self, tensors, limit: int = 6):
        """Ancestors whose largest magnitude grew step by step up to the failing op."""
        out = []
        cur = max(tensors, key=lambda x: self.records.get(x, ("", 0.0))[1], default=None)
        last = float("inf")
        while cur is not None and len(out) < limit:
            rec = self.records.get(cur)
            if rec is None or rec[1] > last:
                break
            out.append((rec[0], rec[1], rec[2]))
            last = rec[1]
            parents = [p for p in (r() for r in rec[3]) if p is not None and p in self.records]
            cur = max(parents, key=lambda x: self.records[x][1], default=None)
        return out


def _message(phase, name, a, site, cond, chain) -> str:
    nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    where = f" at {site.filename}:{site.lineno} ({site.source()})" if site is not None else ""
    lines = [f"{name} ({phase}) produced {nan} NaN and {inf} Inf values out of {a.size} from "
             f"finite inputs{where}", f"  input condition: {cond}"]
    if chain:
        lines.append("  magnitudes grew through (latest first):")
        for op, mag, s in chain:
            at = f" at {s.filename}:{s.lineno}" if s is not None else ""
            lines.append(f"    {op}: max |x| {_fmt(mag)}{at}")
    return "\n".join(lines)


def _backward_condition(name: str, saved: list) -> str:
    """Why a rule made a non-finite gradient from finite values: its saved values at the
    points where the derivative is not finite (zeros, for sqrt/log/div/pow)."""
    if not saved:
        return f"{name} backward: the rule's result was not finite"
    zeros = sum(int(np.sum(a == 0)) for a in saved)
    mags = [float(np.abs(a).max()) for a in saved if a.size]
    what = (f"{zeros} saved value{'s were' if zeros != 1 else ' was'} 0.0" if zeros
            else f"saved values finite, max |x| {_fmt(max(mags) if mags else 0.0)}")
    return f"{name} backward: {what} (the derivative of {name} is not finite there)"


def _wrap_rule(op, rule):
    name = op.name

    def checked(ns, g, *saved, **params):
        grads = rule(ns, g, *saved, **params)
        if not _active:
            return grads
        outs = grads if type(grads) is tuple else (grads,)
        bad = [x for x in _float_arrays(outs) if not _finite(x)]
        if bad and all(_finite(x) for x in _float_arrays((g, *saved))):
            node = sys._getframe(1).f_locals.get("node")  # the engine's loop variable
            site = getattr(node, "_site", None)
            cond = _backward_condition(name, _float_arrays(saved))
            raise NonFiniteError(_message("backward", name, bad[0], site, cond, ()), name, site,
                                 cond, (), "backward")
        return grads
    return checked


def _install(ctx):
    from ..ops import OPS, _dispatch

    with _lock:
        _active.append(ctx)
        if len(_active) > 1:
            return
        ctx.checker = _Checker(_dispatch._profiler)
        _dispatch._profiler = ctx.checker
        for op in OPS.values():
            if op.vjp is not None and op.node_cls is not None:
                _saved_rules[op] = op.vjp
                op.vjp = _wrap_rule(op, op.vjp)
        ctx.prev_sites = sites.state.explicit
        sites.set_capture_sites(True)  # backward errors name the forward line


def _uninstall(ctx):
    from ..ops import _dispatch

    with _lock:
        if ctx in _active:
            _active.remove(ctx)
        if _active:
            return
        first = ctx
        _dispatch._profiler = getattr(first, "checker", None).prev if getattr(
            first, "checker", None) is not None else None
        for op, rule in _saved_rules.items():
            op.vjp = rule
        _saved_rules.clear()
        sites.set_capture_sites(getattr(first, "prev_sites", False))


class detect_nonfinite(_DecoratorContextManager):
    """Context manager and decorator: raise :class:`NonFiniteError` at the first op, forward
    or backward, whose output holds NaN/Inf while its inputs were finite.

    >>> import graphgrad as torch
    >>> x = torch.tensor([1.0, 0.0], requires_grad=True)
    >>> try:
    ...     with torch.autograd.detect_nonfinite():
    ...         y = torch.log(x)
    ... except torch.autograd.NonFiniteError as e:
    ...     print(e.condition)
    log: 1 input was 0.0, min 0.0
    """

    def __enter__(self):
        _install(self)
        return self

    def __exit__(self, *exc):
        _uninstall(self)

    def clone(self):
        return type(self)()
