"""Algebraic identities that hold bit for bit, NaN and signed zeros included: x*1, x/1,
x+0 (only -0.0 is an identity for addition under IEEE signed zeros; x+0.0 turns -0.0 into
+0.0, so it is kept), x-0.0, neg(neg(x)), pow(x, 1). x*0 is never rewritten: NaN*0 and
inf*0 are NaN. A rewrite applies only when the result has x's shape and dtype."""

from __future__ import annotations

from ..ir import Value

__all__ = ["simplify"]


def _is(x, number):
    return (type(x) is float or type(x) is int) and x == number


def _identity(instr):
    """The Value ``instr``'s output equals, or None."""
    name = instr.name
    ins = instr.ins
    if name == "mul" and len(ins) == 2:
        a, b = ins
        if isinstance(a, Value) and _is(b, 1):
            return a
        if isinstance(b, Value) and _is(a, 1):
            return b
    if name in ("div", "sub") and len(ins) == 2 and isinstance(ins[0], Value):
        if name == "div" and _is(ins[1], 1):
            return ins[0]
        if name == "sub" and _is(ins[1], 0) and not instr.params.get("alpha", 1) != 1:
            return ins[0]
    if name == "pow.Tensor_Scalar" and isinstance(ins[0], Value) and _is(ins[1], 1):
        return ins[0]
    return None


def simplify(graph) -> int:
    """Applies the identities (and neg(neg(x)) -> x); returns how many instrs became dead
    (dce removes them)."""
    rename, producer, n = {}, {}, 0
    for instr in graph.instrs:
        if rename:
            instr.ins = [rename.get(x, x) if isinstance(x, Value) else x for x in instr.ins]
        if instr.special or len(instr.outs) != 1:
            continue
        out = instr.outs[0]
        src = _identity(instr)
        if src is None and instr.name == "neg" and isinstance(instr.ins[0], Value):
            inner = producer.get(instr.ins[0])
            if inner is not None and inner.name == "neg" and isinstance(inner.ins[0], Value):
                src = inner.ins[0]
        if src is not None and src.shape == out.shape and src.dtype == out.dtype:
            rename[out] = src
            n += 1
        else:
            producer[out] = instr
    if rename:
        graph.outputs = [rename.get(v, v) for v in graph.outputs]
        from .dce import dce

        dce(graph)
    return n
