"""Constant folding: a pure op whose inputs are all constants is evaluated once at compile
time and its outputs become constants."""

from __future__ import annotations

import numpy as np

from ..ir import Value

__all__ = ["fold"]


def fold(graph) -> int:
    """Folds constant instrs; returns how many."""
    kept, folded = [], 0
    rename = {}
    for instr in graph.instrs:
        if rename:
            instr.ins = [rename.get(x, x) if isinstance(x, Value) else x for x in instr.ins]
        vals = instr.values()
        foldable = (not instr.effect and instr.op not in ("load", "opaque", "random", "fused")
                    and all(v.kind == "const" for v in vals))
        if not foldable:
            kept.append(instr)
            continue
        try:
            res = instr.kernel()(*[v.data for v in vals])
        except Exception:  # noqa: BLE001 - leave it to fail (or not) at run time as eager does
            kept.append(instr)
            continue
        res = res if isinstance(res, tuple) else (res,)
        for o, r in zip(instr.outs, res):
            if o is None or r is None:
                continue
            c = graph.new_value(o.shape, o.dtype, "const", np.array(r, copy=True))
            rename[o] = c
        folded += 1
    graph.instrs = kept
    if rename:
        graph.outputs = [rename.get(v, v) for v in graph.outputs]
    return folded
