"""Graph passes, run in order by ``run_all``: the core clean-ups (dead code, common
subexpressions, constant folding, algebraic identities), then fusion and the memory plan when
those modules are present (passes/fusion.py, passes/memory_plan.py)."""

from __future__ import annotations

from .algebraic import simplify
from .constant_fold import fold
from .cse import cse
from .dce import dce

__all__ = ["run_all", "CORE_PASSES"]

CORE_PASSES = (("algebraic", simplify), ("constant_fold", fold), ("cse", cse), ("dce", dce))


def run_all(graph, *, mode=None, extra=True) -> list:
    """Runs every pass on ``graph`` in place; returns [(pass name, instrs before, after)].

    This is the hook where fusion and memory planning plug in: each exposes
    ``run(graph, mode=...)`` in passes/fusion.py and passes/memory_plan.py. ``extra=False``
    (``compile(options={"core_only": True})``) runs the core passes alone."""
    report = []
    for name, fn in CORE_PASSES:
        before = len(graph.instrs)
        fn(graph)
        report.append((name, before, len(graph.instrs)))
    for name in ("fusion", "memory_plan") if extra else ():
        try:
            module = __import__(f"{__name__}.{name}", fromlist=["run"])
        except ImportError:
            continue
        run = getattr(module, "run", None)
        if run is None:
            continue
        before = len(graph.instrs)
        run(graph, mode=mode)
        report.append((name, before, len(graph.instrs)))
    return report
