"""Common-subexpression elimination: two pure instrs with the same op, inputs and params are
computed once. Effects, random draws, loads and opaque calls are never merged."""

from __future__ import annotations

import numpy as np

from ..ir import Value

__all__ = ["cse"]


def _key_of(x):
    if isinstance(x, Value):
        return ("v", id(x))
    if isinstance(x, np.ndarray):
        return ("a", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, (list, tuple)):
        return (type(x).__name__,) + tuple(_key_of(e) for e in x)
    if isinstance(x, dict):
        return ("d",) + tuple((k, _key_of(v)) for k, v in x.items())
    if isinstance(x, slice):
        return ("s", x.start, x.stop, x.step)
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return (type(x).__name__, x)


def cse(graph) -> int:
    """Merges duplicate pure instrs; returns how many were removed."""
    seen, kept, removed = {}, [], 0
    rename = {}
    for instr in graph.instrs:
        if rename:
            instr.ins = [rename.get(x, x) if isinstance(x, Value) else x for x in instr.ins]
        if instr.special and instr.op != "cast":
            kept.append(instr)
            continue
        op_key = instr.op if not instr.special else ("cast", str(instr.outs[0].dtype))
        key = (op_key, tuple(_key_of(x) for x in instr.ins), _key_of(instr.params))
        prev = seen.get(key)
        if prev is None:
            seen[key] = instr
            kept.append(instr)
            continue
        for a, b in zip(instr.outs, prev.outs):
            if a is not None:
                rename[a] = b
        removed += 1
    graph.instrs = kept
    if rename:
        graph.outputs = [rename.get(v, v) for v in graph.outputs]
    return removed
