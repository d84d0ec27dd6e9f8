"""``graphgrad.compiler.explain(fn, *args)``: what compile does with a call, in words.

Captures ``fn(*args)`` (the call runs once, eagerly) and prints the captured IR, each pass's
effect, the fusion groups and memory plan when those passes ran, the compiled backward of a
region (the graph ``CompiledFunctionBackward`` replays), the guards (with the line that read
each Python value) and graph breaks (with the line). A compiled function passed in keeps its
own variants: explain captures on the side.
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

    from . import stance as _stance
    from .api import CompiledFunction, compile

    cf = getattr(fn, "_compiled", fn)  # an OptimizedModule's CompiledFunction
    if not isinstance(cf, CompiledFunction):
        made = compile(fn)
        cf = getattr(made, "_compiled", made)
    names = ("variants", "breaks", "recaptures", "limit_warned", "template", "not_dynamic",
             "fullgraph")
    kept = {n: getattr(cf, n) for n in names}
    before = list(kept["recaptures"])
    cf.variants, cf.breaks, cf.recaptures, cf.template = [], [], [], None
    cf.limit_warned, cf.not_dynamic, cf.fullgraph = False, None, False
    prev_stance = _stance.state.name
    _stance.state.name = "default"  # explain always captures
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cf(*args, **kwargs)
        variants, breaks = cf.variants, cf.breaks
    finally:
        _stance.state.name = prev_stance
        for n, val in kept.items():
            setattr(cf, n, val)
    lines = [f"explain: {getattr(cf.fn, '__qualname__', cf.fn)}"]
    if before:
        lines.append(f"recaptures of this compiled function so far: {len(before)} (last: "
                     f"{before[-1]})")
    if not variants:
        lines.append("no capture: another thread was capturing; this call ran eagerly")
        return ExplainOutput("\n".join(lines), None, breaks, None)
    v = variants[-1]
    if v.reason:
        lines.append(f"graph breaks: 1 ({v.reason})")
        return ExplainOutput("\n".join(lines), None, breaks, v.guards)
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
    region = getattr(v, "region", None)
    bwd = getattr(region, "bwd_graph", None)
    if bwd is not None:
        lines.append("compiled backward (CompiledFunctionBackward replays it):")
        lines.extend("  " + ln for ln in bwd.format().splitlines())
    lines.append("guards:")
    lines.extend(f"  {g}" for g in v.guards.lines())
    return ExplainOutput("\n".join(lines), v.graph, breaks, v.guards)
