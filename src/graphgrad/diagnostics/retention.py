"""The graph-retention detector: warns once when graphs made in earlier training steps stay
alive and keep growing (``total += loss``, a list of losses, a running average of losses, a
tensor carried across steps with its history), naming the user's line and what is held.

At each step boundary (``optimizer.step()``) it reads the count of live nodes per step that the
nodes keep themselves (``graphgrad._step.live_nodes``): a correct loop has none left from
before the previous step. When the number of such steps has grown at ``PATIENCE`` boundaries
in a row, it turns on site capture for one step, so that the next boundary can name the line
that links the new graph to the old ones, then scans the live graphs once and warns.
See Note [Retention detector] in docs/design.md.
"""

from __future__ import annotations

import gc
import inspect
import sys
import warnings
import weakref

from .. import _step
from ..autograd import sites
from .graphs import _fmt, live_graphs, live_nodes

__all__ = ["GraphRetentionWarning", "RetainedGraphWarning", "set_enabled", "is_enabled",
           "reset", "PATIENCE", "RETAIN_STEPS"]

PATIENCE = 3  # boundaries in a row at which retained steps grew
RETAIN_STEPS = 3  # steps a retain_graph=True graph may sit unused


class GraphRetentionWarning(UserWarning):
    """Graphs from earlier training steps are kept alive and keep growing."""


class RetainedGraphWarning(UserWarning):
    """A graph kept with retain_graph=True has not been backwarded again for several steps."""


class _Detector:
    def __init__(self):
        self.enabled = True
        self.reset()

    def reset(self):
        self.old = set()  # steps before the previous one that still have live nodes
        self.grew = 0
        self.last_count = 0
        self.watching = None  # previous explicit site-capture setting while watching
        self.warned = False
        self.retained = {}  # id(root) -> [weakref(root), last backward step, site, warned]

    # -- step boundary -------------------------------------------------------------------
    def on_step(self, step):
        if not self.enabled:
            return
        if self.retained:
            self._check_retained(step)
        if self.warned:
            return
        live = _step.live_nodes
        newly_old = step - 2  # the previous step's graph may legitimately live one more step
        if newly_old >= 0 and live[newly_old] > 0:
            self.old.add(newly_old)
        self.old = {s for s in self.old if live[s] > 0}
        count = len(self.old)
        self.grew = self.grew + 1 if count > self.last_count else 0
        self.last_count = count
        if self.watching is not None:
            self._report(step)
        elif self.grew >= PATIENCE:
            # one more step with sites on, so the report can name the line
            self.watching = sites.state.explicit
            sites.set_capture_sites(True)

    def _report(self, step):
        sites.set_capture_sites(self.watching)
        self.watching = None
        # graphs caught in reference cycles are garbage, not retained: collect them first
        gc.collect()
        self.old = {s for s in self.old if _step.live_nodes[s] > 0}
        if len(self.old) < PATIENCE:
            self.grew = 0
            return
        self.warned = True
        old = self.old
        nodes = live_nodes()
        graphs = [g for g in live_graphs(nodes) if any(
            getattr(n, "_step", step) in old for n in _members(g.root))]
        if not graphs:
            return
        warnings.warn(_message(graphs, old, step), GraphRetentionWarning,
                      stacklevel=sites.user_stacklevel())

    # -- retain_graph=True ----------------------------------------------------------------
    def on_backward(self, roots, retain_graph, site):
        """The engine reports each backward: a retain_graph=True root is watched."""
        if not self.enabled:
            return
        step = _step.current_step()
        for root in roots:
            entry = self.retained.get(id(root))
            if entry is not None and entry[0]() is root:
                entry[1] = step
            elif retain_graph and root is not None:
                self.retained[id(root)] = [weakref.ref(root), step, site, False]

    def _check_retained(self, step):
        collected = False
        for key, entry in list(self.retained.items()):
            root = entry[0]()
            if root is not None and step - entry[1] > RETAIN_STEPS and not collected:
                # a graph in a reference cycle is garbage, not kept: collect before warning
                del root
                gc.collect()
                collected = True
                root = entry[0]()
            if root is None:
                del self.retained[key]
            elif step - entry[1] > RETAIN_STEPS and not entry[3]:
                entry[3] = True
                where = f" at {entry[2].short()}" if entry[2] is not None else ""
                g = live_graphs([n for n in _members(root)])
                held = g[0].saved_bytes if g else 0
                warnings.warn(
                    f"graphgrad: the graph kept by backward(retain_graph=True){where} (root "
                    f"{type(root).__name__}) has not been backwarded again for {step - entry[1]} "
                    f"steps and still holds {_fmt(held)} of saved tensors. If you do not need "
                    f"it any more, drop retain_graph=True from the last backward() through it "
                    f"(or delete the tensors that reference it).",
                    RetainedGraphWarning, stacklevel=sites.user_stacklevel())


def _members(root):
    seen, stack, out = set(), [root], []
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(c for c in getattr(n, "_next", ()) if c is not None)
    return out


def _holders(root):
    """Names of what keeps the root's tensor alive, found in the running user frames:
    ``'total' in train()``, ``the list 'losses' in train()``."""
    from .._tensor import Tensor

    targets = [r for r in gc.get_referrers(root) if isinstance(r, Tensor)]
    names = []
    f = sys._getframe(1)
    while f is not None:
        if not sites._is_internal(f.f_code.co_filename):
            where = "module" if f.f_code.co_name == "<module>" else f"{f.f_code.co_name}()"
            snapshot = f.f_locals
            for k, v in snapshot.items():
                kind = _holds(v, targets)
                if kind is not None:
                    names.append(f"{kind}'{k}' in {where}")
            if f.f_code.co_flags & inspect.CO_OPTIMIZED:
                # NOTE: a function frame's f_locals is a snapshot dict kept on the frame; left
                # filled it would pin every local (this step's graph, its batch) until the
                # function returns. The real locals live elsewhere and are untouched.
                snapshot.clear()
        f = f.f_back
    return names


def _holds(value, targets, limit=100_000):
    """'' if ``value`` is one of ``targets``, 'the list ' (or dict/tuple) if it contains one,
    else None."""
    if any(value is t for t in targets):
        return ""
    if isinstance(value, (list, tuple)) and len(value) <= limit:
        if any(v is t for v in value for t in targets):
            return f"the {type(value).__name__} "
    if isinstance(value, dict) and len(value) <= limit:
        if any(v is t for v in value.values() for t in targets):
            return "the dict "
    return None


def _message(graphs, old, step):
    span = max(g.steps for g in graphs)
    nodes = sum(g.nodes for g in graphs)
    saved = sum(g.saved_bytes for g in graphs)
    node_mem = sum(g.node_bytes for g in graphs)
    newest = max(graphs, key=lambda g: getattr(g.root, "_seq", 0))
    holders = sorted(set(_holders(newest.root)))
    lines = [f"graphgrad: graphs from {len(old)} earlier training steps are still alive and "
             f"their number grows every step ({len(graphs)} graph(s), {nodes} nodes spanning "
             f"up to {span} steps; {_fmt(saved)} of saved tensors and {_fmt(node_mem)} of graph "
             f"nodes held)."]
    if newest.site is not None:
        lines.append(f"  kept alive by: {newest.site.short()}")
    if holders:
        lines.append(f"  held by: {', '.join(holders)}")
    lines.append("  fix: log loss.item() (a Python number) instead of the tensor, or store "
                 "tensor.detach(); a tensor with history keeps every graph it came from.")
    return "\n".join(lines)


detector = _Detector()
_step.add_step_listener(detector.on_step)


def set_enabled(mode: bool) -> None:
    """Turns the detector on (the default) or off."""
    detector.enabled = bool(mode)


def is_enabled() -> bool:
    return detector.enabled


def reset() -> None:
    """Forgets what was seen and warned (for a new training run in the same process)."""
    detector.reset()
