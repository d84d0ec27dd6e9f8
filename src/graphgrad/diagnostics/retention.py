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
        if getattr(self, "watching", None) is not None:
            sites.set_capture_sites(self.watching)  # a report was pending: sites back as they were
        self.old = set()  # steps before the previous one that still have live nodes
        self.reported = set()  # old steps already covered by a report (not counted again)
        self.grew = 0
        self.last_count = 0
        self.patience = PATIENCE
        self.watching = None  # previous explicit site-capture setting while watching
        self.warned = set()  # the leaks reported: one warning per leaking line
        self.retained = {}  # id(root) -> [weakref(root), last backward step, site, warned]
        # Implicit step boundaries (Note [Implicit steps]): the step count at the last
        # backward() and at the last DataLoader batch, whether a backward ran since that batch,
        # and the steps that batches marked in a loop that never called backward().
        self.at_backward = None
        self.at_batch = None
        self.backward_since_batch = False
        self.batch_steps = set()

    # -- implicit step boundaries --------------------------------------------------------
    # Note [Implicit steps]: optimizer.step() marks the training step. A loop without an
    # optimizer (a hand-written SGD update) or without backward (an evaluation loop) never
    # does, so every graph it makes has the same step and none looks old. A backward() with
    # no step since the previous backward(), or a DataLoader batch with neither a step nor a
    # backward() since the previous batch, marks one. Loops with an optimizer are unchanged.
    def on_backward_call(self):
        if not self.enabled:
            return
        count = _step._count
        if count == self.at_backward:
            _step.advance_step()
            count = _step._count
        self.at_backward = count
        self.backward_since_batch = True

    def on_batch(self):
        if not self.enabled:
            return
        count = _step._count
        if count == self.at_batch and not self.backward_since_batch:
            _step.advance_step()
            count = _step._count
            self.batch_steps.add(count)
        self.at_batch = count
        self.backward_since_batch = False

    # -- step boundary -------------------------------------------------------------------
    def on_step(self, step):
        if not self.enabled or _capturing():
            return  # a compile capture replays this step: a report inside it would be its effect
        if self.retained:
            self._check_retained(step)
        live = _step.live_nodes
        newly_old = step - 2  # the previous step's graph may legitimately live one more step
        if newly_old >= 0 and live[newly_old] > 0 and newly_old not in self.reported:
            self.old.add(newly_old)
        self.old = {s for s in self.old if live[s] > 0}
        count = len(self.old)
        self.grew = self.grew + 1 if count > self.last_count else 0
        self.last_count = count
        if self.watching is not None:
            self._report(step)
        elif self.grew >= self.patience:
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
        old = self.old
        # the steps reported now are not counted again: a later leak must grow on its own
        self.reported |= old
        self.old = set()
        self.grew = self.last_count = 0
        nodes = live_nodes()
        every = live_graphs(nodes)
        graphs = [g for g in every if any(
            getattr(n, "_step", step) in old for n in _members(g.root))]
        if not graphs:
            return
        # the newest graph made while sites were on: the line a container's tensors come from
        # when the container's own newest entry was added before sites were turned on
        with_site = [g for g in every if g.site is not None]
        latest = max(with_site, key=lambda g: g.root._seq).site if with_site else None
        message, key = _message(graphs, old, step, eval_loop=bool(old & self.batch_steps),
                                latest=latest)
        if key in self.warned:
            # the same leak again: wait longer before the next look (it costs a step of sites)
            self.patience = min(self.patience * 2, 64)
            return
        self.warned.add(key)
        warnings.warn(message, GraphRetentionWarning, stacklevel=sites.user_stacklevel())

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


def _holders(root, containers=None):
    """Names of what keeps the root's tensor alive, found in the running user frames:
    ``'total' in train()``, ``the list 'losses' in train()``; the containers found are
    appended to ``containers``."""
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
                    if kind and containers is not None:
                        containers.append(v)
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


def _newest_site(container):
    """The line that made the newest tensor with history in ``container`` (its graph was made
    while sites were on, the step before the report)."""
    from .._tensor import Tensor

    values = container.values() if isinstance(container, dict) else container
    best = None
    for v in values:
        fn = v.grad_fn if isinstance(v, Tensor) else None
        site = getattr(fn, "_site", None)
        if site is not None and (best is None or fn._seq > best[0]):
            best = (fn._seq, site)
    return None if best is None else best[1]


def _message(graphs, old, step, eval_loop=False, latest=None):
    """The warning text, and the key of the leak it reports (its line, else its holders)."""
    span = max(g.steps for g in graphs)
    nodes = sum(g.nodes for g in graphs)
    saved = sum(g.saved_bytes for g in graphs)
    node_mem = sum(g.node_bytes for g in graphs)
    newest = max(graphs, key=lambda g: getattr(g.root, "_seq", 0))
    containers = []
    holders = sorted(set(_holders(newest.root, containers)))
    site = newest.site
    made = None
    if containers:
        made = next((s for s in map(_newest_site, containers) if s is not None), latest)
    lines = [f"graphgrad: graphs from {len(old)} earlier training steps are still alive and "
             f"their number grows every step ({len(graphs)} graph(s), {nodes} nodes spanning "
             f"up to {span} steps; {_fmt(saved)} of saved tensors and {_fmt(node_mem)} of graph "
             f"nodes held)."]
    if site is not None:
        lines.append(f"  kept alive by: {site.short()}")
    if holders:
        lines.append(f"  held by: {', '.join(holders)}")
    if made is not None and (site is None or (made.filename, made.lineno) !=
                             (site.filename, site.lineno)):
        lines.append(f"  the tensors it holds were made at: {made.short()}")
    if eval_loop:
        lines.append("  this loop runs no backward(): if it is an evaluation loop, wrap it in "
                     "`with torch.no_grad():` so it records no graph at all.")
    lines.append("  fix: log loss.item() (a Python number) instead of the tensor, or store "
                 "tensor.detach(); a tensor with history keeps every graph it came from.")
    # one warning per leak: keyed by what holds it (stable from one report to the next),
    # else by its line
    where = site or made
    key = tuple(holders) if holders else (
        (where.filename, where.lineno) if where is not None else None)
    return "\n".join(lines), key


def _capturing() -> bool:
    from ..ops import _dispatch

    return _dispatch._tracer is not None


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
