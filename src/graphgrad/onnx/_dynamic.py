"""Dynamic axes: which literals of the captured graph follow an input's size.

Note [Symbolic sizes]: the model is captured once at the given shapes and once more per
dynamic axis with that axis grown (the data repeated along it). The graphs must have the same
instrs; an int literal that changed is fitted to ``a * size + c`` (one axis) or
``k * size_0 * size_1`` (several) and replaced by a SymInt, which the converters turn into a
shape computed at run time. Anything else that changed (a float computed from a shape, an
index array, a constant's values, a different sequence of ops) is baked: it is returned as a
finding, never silently kept.
"""

from __future__ import annotations

import numpy as np

from ..compiler.ir import Value
from .builder import SymInt

__all__ = ["grow", "symbolize", "Finding"]


class Finding:
    """One audit finding: ``kind`` (unsupported-op, graph-break, baked-value, baked-shape,
    not-dynamic, training-mode, capture-failed, mismatch), ``severity`` (error, warning,
    note), a message, and where known the op and the user's line."""

    __slots__ = ("kind", "severity", "message", "op", "site", "min_opset")

    def __init__(self, kind, severity, message, op=None, site=None, min_opset=None):
        self.kind = kind
        self.severity = severity
        self.message = message
        self.op = op
        self.site = site
        self.min_opset = min_opset

    def __str__(self):
        where = f" [{self.op}]" if self.op else ""
        at = f" at {self.site}" if self.site else ""
        return f"{self.severity}: {self.kind}{where}: {self.message}{at}"

    __repr__ = __str__


def grow(leaves, index, axis, step=1):
    """A copy of ``leaves`` with leaf ``index`` grown by ``step`` along ``axis`` (its data
    repeated cyclically, so values stay valid indices, masks, ...)."""
    import graphgrad

    out = list(leaves)
    t = leaves[index]
    a = t._data
    n = a.shape[axis]
    new = np.take(a, np.arange(n + step) % max(n, 1), axis=axis) if n else np.zeros(
        a.shape[:axis] + (step,) + a.shape[axis + 1:], a.dtype)
    out[index] = graphgrad.tensor(np.array(new, order="C"), requires_grad=False)
    return out


def symbolize(graph, variants, findings, declared=True):
    """Replaces the literals of ``graph`` that follow the varied axes by SymInts.

    ``variants``: list of (graph_k, input_index, axis, size0, size1), one per grown axis.
    Findings for what cannot be expressed go to ``findings`` (errors when ``declared``).
    Returns the Values whose shape follows an axis: {value: {axis: [(input, axis), ...]}}.
    """
    sev = "error" if declared else "note"
    for g, i, axis, s0, s1 in variants:
        if len(g.instrs) != len(graph.instrs) or any(
                a.name != c.name for a, c in zip(graph.instrs, g.instrs)):
            j = next((k for k, (a, c) in enumerate(zip(graph.instrs, g.instrs))
                      if a.name != c.name), min(len(graph.instrs), len(g.instrs)))
            instr = graph.instrs[j] if j < len(graph.instrs) else None
            findings.append(Finding(
                "baked-shape", sev,
                f"the sequence of ops changes when input {i} axis {axis} goes from {s0} to {s1} "
                f"(a Python branch on a shape): the graph holds one branch",
                instr.name if instr else None, getattr(instr, "site", None)))
            return {}
    fitter = _Fitter(graph, variants, findings, sev)
    for j, instr in enumerate(graph.instrs):
        others = [g.instrs[j] for g, *_ in variants]
        fitter.where = instr
        instr.ins = [fitter.merge(x, [o.ins[k] for o in others], f"input {k}")
                     for k, x in enumerate(instr.ins)]
        instr.params = {k: fitter.merge(p, [o.params.get(k) for o in others], k)
                        for k, p in instr.params.items()}
    for k, v in enumerate(graph.consts):
        others = [g.consts[k] if k < len(g.consts) else None for g, *_ in variants]
        fitter.const(v, others)
    return fitter


class _Fitter:
    def __init__(self, graph, variants, findings, sev):
        self.graph = graph
        self.variants = variants
        self.findings = findings
        self.sev = sev
        self.where = None
        self.const_shapes: dict = {}  # const Value -> symbolic shape (uniform consts)
        self.reported = set()

    def _report(self, kind, msg):
        key = (id(self.where), msg)
        if key in self.reported:
            return
        self.reported.add(key)
        w = self.where
        self.findings.append(Finding(kind, self.sev, msg, getattr(w, "name", None),
                                     getattr(w, "site", None)))

    def fit(self, v0, vs):
        """A SymInt for int ``v0`` that became ``vs[k]`` in variant k, or None."""
        changed = [k for k, v in enumerate(vs) if v != v0]
        srcs = [(self.graph.inputs[self.variants[k][1]], self.variants[k][2]) for k in changed]
        if len(changed) == 1:
            k = changed[0]
            s0, s1 = self.variants[k][3], self.variants[k][4]
            a, rem = divmod(vs[k] - v0, s1 - s0)
            if rem:
                return None
            return SymInt(v0, ("lin", srcs[0], a, v0 - a * s0))
        prod0 = 1
        for k in changed:
            prod0 *= self.variants[k][3]
        if prod0 == 0 or v0 % prod0:
            return None
        coef = v0 // prod0
        for k in changed:
            if vs[k] != coef * prod0 // self.variants[k][3] * self.variants[k][4]:
                return None
        return SymInt(v0, ("prod", srcs, coef))

    def merge(self, x, others, label):
        if isinstance(x, Value) or x is None or isinstance(x, (str, bool, np.dtype, type)):
            return x
        if isinstance(x, (int, np.integer)):
            if any(not isinstance(o, (int, np.integer)) or isinstance(o, bool) for o in others):
                return x
            if all(o == x for o in others):
                return x
            s = self.fit(int(x), [int(o) for o in others])
            if s is None:
                self._report("baked-value", f"the int {label}={x} changes with the input's "
                             f"size ({[int(o) for o in others]}) in a way export cannot "
                             "express")
                return x
            return s
        if isinstance(x, float):
            if any(o != x for o in others if isinstance(o, float)):
                self._report("baked-value", f"the Python number {label}={x!r} is computed from "
                             f"a shape (it becomes {[o for o in others]} at the other size): "
                             "the file would keep the traced value")
            return x
        if isinstance(x, slice):
            parts = [self.merge(getattr(x, f), [getattr(o, f, None) for o in others], label)
                     for f in ("start", "stop", "step")]
            return slice(*parts)
        if isinstance(x, (tuple, list)):
            if any(not isinstance(o, (tuple, list)) or len(o) != len(x) for o in others):
                self._report("baked-value", f"{label} has a different length at the other size")
                return x
            return type(x)(self.merge(e, [o[k] for o in others], label)
                           for k, e in enumerate(x))
        if isinstance(x, np.ndarray):
            if any(not isinstance(o, np.ndarray) or o.shape != x.shape
                   or not np.array_equal(o, x) for o in others):
                self._report("baked-value", f"the array {label} (computed in Python, e.g. an "
                             "index) changes with the input's size: the file would keep the "
                             "traced one")
            return x
        return x

    def const(self, v, others):
        a = np.asarray(v.data)
        if all(o is not None and o.shape == v.shape and np.array_equal(np.asarray(o.data), a)
               for o in others):
            return
        uniform = a.size > 0 and bool((a == a.flat[0]).all()) and all(
            o is not None and np.asarray(o.data).size and
            bool((np.asarray(o.data) == a.flat[0]).all()) for o in others)
        if uniform and all(len(o.shape) == len(v.shape) for o in others):
            shape = []
            for d, s in enumerate(v.shape):
                vs = [o.shape[d] for o in others]
                sym = s if all(x == s for x in vs) else self.fit(s, vs)
                if sym is None:
                    break
                shape.append(sym)
            else:
                self.const_shapes[v] = tuple(shape)
                return
        self.where = None
        self._report("baked-value", f"a constant tensor of shape {list(v.shape)} made inside "
                     "forward (torch.zeros(x.shape[0], ...) or torch.tensor(...)) changes with "
                     "the input's size and is not a single repeated value: the file would keep "
                     "the traced one")
