"""Dead-code elimination: drops instrs with no effect whose outputs nobody reads."""

from __future__ import annotations

__all__ = ["dce"]


def dce(graph) -> int:
    """Removes dead instrs (walking backwards, so chains die at once); returns how many."""
    live = set(graph.outputs)
    kept = []
    for instr in reversed(graph.instrs):
        if instr.effect or any(o is not None and o in live for o in instr.outs):
            kept.append(instr)
            live.update(instr.values())
    removed = len(graph.instrs) - len(kept)
    kept.reverse()
    graph.instrs = kept
    used = live
    graph.externals = [v for v in graph.externals if v in used]
    graph.consts = [v for v in graph.consts if v in used]
    return removed
