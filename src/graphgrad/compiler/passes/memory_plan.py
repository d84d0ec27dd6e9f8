"""The memory plan: liveness (first and last use of every value over the final schedule) and an
assignment of fused kernels' outputs to buffers that are allocated once and reused across calls.

A value can share a buffer with another only when their live ranges do not overlap; values that
escape the call (graph outputs, gradients handed to ``.grad``, opaque callables' inputs, and
anything viewing them) are never planned. ``check`` re-derives liveness and asserts the plan
is sound; ``peak_bytes`` gives the eager-vs-planned peak that explain prints.
"""

from __future__ import annotations

import numpy as np

from ..ir import Value

__all__ = ["run", "plan", "check", "peak_bytes", "MemoryPlan", "liveness"]

# instr ops whose outputs may be (views of) their inputs
_ALIASING_SPECIALS = ("vjp", "opaque", "load")
# instr ops that may keep a reference to an input beyond the call
_ESCAPING_SPECIALS = ("accumulate_grad", "opaque")


class MemoryPlan:
    """``assign``: Value -> buffer index; ``sizes``: bytes per buffer; ``live``: Value ->
    (first, last) instr positions; peaks in bytes (None when not measured)."""

    def __init__(self, assign, sizes, live, eager_peak, planned_peak):
        self.assign = assign
        self.sizes = sizes
        self.live = live
        self.eager_peak = eager_peak
        self.planned_peak = planned_peak
        self.arrays = None

    def allocate(self):
        """Allocates the buffers (once); returns them."""
        if self.arrays is None:
            self.arrays = [np.empty(max(n, 1), np.uint8) for n in self.sizes]
        return self.arrays

    def array_for(self, v):
        """The preallocated array that holds ``v`` (a view of its buffer), or None."""
        b = self.assign.get(v)
        if b is None:
            return None
        raw = self.allocate()[b]
        return raw[:v.nbytes].view(v.dtype).reshape(v.shape)

    def __str__(self):
        planned = len(self.assign)
        reuse = planned - len(self.sizes)
        text = (f"{planned} kernel outputs in {len(self.sizes)} reused buffers "
                f"({sum(self.sizes)} bytes, {reuse} reuses)")
        if self.eager_peak is not None:
            saved = 1 - self.planned_peak / self.eager_peak if self.eager_peak else 0.0
            text += (f"; peak bytes eager {self.eager_peak}, planned {self.planned_peak} "
                     f"({saved:.0%} less)")
        return text

    __repr__ = __str__


def run(graph, mode=None):
    """The pipeline hook: plans ``graph`` (stored as ``graph.memory_plan``) and checks it."""
    p = plan(graph)
    check(p, graph)
    graph.memory_plan = p
    return graph


def _aliasing(instr) -> bool:
    if instr.special:
        return instr.op in _ALIASING_SPECIALS
    return instr.may_alias


def liveness(graph):
    """(live, root): ``live[v] = (first, last)`` instr positions for each temp (aliases
    extend their root's range; graph outputs live to the end), ``root[v]`` the value whose
    memory ``v`` may share (itself unless made by a view-like instr)."""
    root: dict = {}

    def find(v):
        while root.get(v, v) is not v:
            v = root[v]
        return v

    live: dict = {}
    end = len(graph.instrs)
    for i, instr in enumerate(graph.instrs):
        for v in instr.values():
            r = find(v)
            if r in live:
                live[r] = (live[r][0], i)
        alias_of = [find(v) for v in instr.values()] if _aliasing(instr) else []
        for o in instr.outs:
            if o is None:
                continue
            live[o] = (i, i)
            for r in alias_of:
                # an output that may view an input: one memory, one (merged) live range
                if r in live and r is not o:
                    root[o] = r
                    live[r] = (live[r][0], i)
                    break
    for v in graph.outputs:
        r = find(v)
        if r in live:
            live[r] = (live[r][0], end)
    return live, find


def _escaping(graph, find) -> set:
    out = {find(v) for v in graph.outputs}
    for instr in graph.instrs:
        if instr.special and instr.op in _ESCAPING_SPECIALS:
            out.update(find(v) for v in instr.values())
    return out


def plan(graph) -> MemoryPlan:
    """Assigns non-escaping outputs of fused instrs to reusable buffers (best fit)."""
    live, find = liveness(graph)
    escaping = _escaping(graph, find)
    candidates = []
    for instr in graph.instrs:
        if instr.op != "fused":
            continue
        for o in instr.outs:
            if o is not None and find(o) is o and o not in escaping and o.nbytes > 0:
                candidates.append(o)
    candidates.sort(key=lambda v: live[v][0])
    sizes: list = []
    busy: list = []  # (last position, buffer)
    free: list = []
    assign: dict = {}
    for v in candidates:
        first, last = live[v]
        still = []
        for end, b in busy:
            (free if end < first else still).append((end, b) if end >= first else b)
        busy = still
        need = v.nbytes
        fits = [b for b in free if sizes[b] >= need]
        if fits:
            b = min(fits, key=lambda b: sizes[b])
        elif free:
            b = max(free, key=lambda b: sizes[b])
            sizes[b] = need
        else:
            b = len(sizes)
            sizes.append(need)
        if b in free:
            free.remove(b)
        assign[v] = b
        busy.append((last, b))
    planned_peak = peak_bytes(graph, planned=assign, buffer_bytes=sum(sizes))
    eager = getattr(graph, "eager_peak_bytes", None)
    return MemoryPlan(assign, sizes, live, eager, planned_peak)


def check(p: MemoryPlan, graph) -> None:
    """Asserts that no two values live at the same time share a buffer, that every buffer is
    big enough, and that no escaping value is planned (liveness re-derived from ``graph``)."""
    live, find = liveness(graph)
    escaping = _escaping(graph, find)
    by_buffer: dict = {}
    for v, b in p.assign.items():
        assert isinstance(v, Value) and v in live, f"planned value {v!r} is not in the graph"
        assert v not in escaping, f"planned value {v!r} escapes the call"
        assert p.sizes[b] >= v.nbytes, f"buffer {b} is too small for {v!r}"
        by_buffer.setdefault(b, []).append(live[v])
    for b, ranges in by_buffer.items():
        ranges.sort()
        for (f1, l1), (f2, l2) in zip(ranges, ranges[1:]):
            assert l1 < f2, (f"buffer {b} holds two live values at once (live ranges "
                             f"{f1}-{l1} and {f2}-{l2})")


def peak_bytes(graph, planned=None, buffer_bytes=0) -> int:
    """The most bytes temps hold at once when every instr output is a fresh array freed after
    its last use (views count nothing); ``planned`` values live in ``buffer_bytes`` of
    preallocated buffers instead."""
    live, find = liveness(graph)
    planned = planned or {}
    ends: dict = {}
    for v, (_, last) in live.items():
        ends.setdefault(last, []).append(v)
    cur = peak = 0
    for i, instr in enumerate(graph.instrs):
        for o in instr.outs:
            if o is not None and find(o) is o and o not in planned:
                cur += o.nbytes
        peak = max(peak, cur)
        for v in ends.get(i, ()):
            if v not in planned and find(v) is v:
                cur -= v.nbytes
    return peak + buffer_bytes
