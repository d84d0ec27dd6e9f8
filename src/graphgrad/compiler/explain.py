"""``graphgrad.compiler.explain(fn, *args)``: what compile does with a call, in words.

Captures ``fn(*args)`` (the call runs once, eagerly) and prints the captured IR, each pass's
effect, the fusion groups and memory plan when those passes ran, the guards and graph breaks.
"""

from __future__ import annotations

__all__ = ["explain", "ExplainOutput"]


class ExplainOutput:
    """explain's result: ``text`` (also its str), ``graph``, ``breaks``, ``guards``."""

    def __init__(self, text, graph, breaks, guards):
        self.text = text
        self.graph = graph
        self.breaks = breaks
        self.guards = guards

    def __str__(self):
        return self.text

    __repr__ = __str__


def explain(fn, *args, **kwargs):
    """Captures ``fn(*args, **kwargs)`` and returns an ExplainOutput (print it)."""
    import warnings

    from .api import CompiledFunction, compile

    cf = fn if isinstance(fn, CompiledFunction) else compile(fn)
    cf = getattr(cf, "_compiled", cf)
    cf.variants = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(*args, **kwargs)
    v = cf.variants[-1]
    lines = [f"explain: {getattr(cf.fn, '__qualname__', cf.fn)}"]
    if v.reason:
        lines.append(f"graph breaks: 1 ({v.reason})")
        return ExplainOutput("\n".join(lines), None, cf.breaks, v.guards)
    lines.append("graph breaks: 0")
    lines.append("captured IR:")
    lines.extend("  " + ln for ln in v.raw_text.splitlines())
    lines.append("passes:")
    for name, before, after in v.report:
        lines.append(f"  {name}: {before} -> {after} instrs")
    lines.append("optimized IR:")
    lines.extend("  " + ln for ln in v.graph.format().splitlines())
    groups = getattr(v.graph, "fusion_groups", None)
    if groups is not None:
        lines.append(f"fusion groups: {len(groups)}")
        lines.extend(f"  {g}" for g in groups)
    else:
        lines.append("fusion groups: none (fusion pass not run)")
    plan = getattr(v.graph, "memory_plan", None)
    if plan is not None:
        lines.append(f"memory plan: {plan}")
    else:
        lines.append("memory plan: none (memory planning pass not run)")
    lines.append("guards:")
    lines.extend(f"  {g}" for g in v.guards.lines())
    return ExplainOutput("\n".join(lines), v.graph, cf.breaks, v.guards)
