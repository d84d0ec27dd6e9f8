"""Live graphs, found on demand: every op node still alive, grouped under its roots (nodes no
other live node points to), with what each graph holds. A scan of the garbage collector's
objects, so a diagnostic to call now and then (milliseconds), never on a hot path.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from .. import _step
from ..autograd.graph import AccumulateGrad, Freed, Node

__all__ = ["GraphInfo", "live_nodes", "live_graphs", "saved_arrays", "node_bytes"]


@dataclass
class GraphInfo:
    """One live graph: its root node and what the graph holds."""

    root: Node
    nodes: int
    saved_bytes: int  # storage of saved values still held, each buffer counted once
    node_bytes: int  # the nodes' own bookkeeping (objects, edges, shapes, params)
    first_step: int
    last_step: int
    by_op: list = field(default_factory=list)  # [(node name, saved bytes)], largest first

    @property
    def steps(self) -> int:
        """How many training steps the graph spans."""
        return self.last_step - self.first_step + 1

    @property
    def site(self):
        """The user's line that made the root (when site capture was on), else None."""
        return getattr(self.root, "_site", None)

    def __str__(self) -> str:
        where = f" made at {self.site.short()}" if self.site is not None else ""
        ops = ", ".join(f"{name} {_fmt(b)}" for name, b in self.by_op[:3])
        return (f"{type(self.root).__name__}{where}: {self.nodes} nodes, saved "
                f"{_fmt(self.saved_bytes)} + nodes {_fmt(self.node_bytes)}, steps "
                f"{self.first_step}-{self.last_step}"
                + (f" (most: {ops})" if ops else ""))


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def live_nodes() -> list:
    """Every live graph node except leaves' AccumulateGrad."""
    # type() rather than isinstance(): isinstance may read o.__class__, which some modules'
    # objects turn into deprecation warnings
    return [o for o in gc.get_objects()
            if issubclass(type(o), Node) and type(o) is not AccumulateGrad]


def saved_arrays(node):
    """The arrays a node's saved values hold (none once a backward released them)."""
    saved = getattr(node, "_saved", ())
    if type(saved) is Freed or not isinstance(saved, tuple):
        return
    for v in saved:
        a = getattr(v, "_data", v)
        if isinstance(a, np.ndarray):
            yield a


def _storage(a):
    """The array owning ``a``'s memory: a saved view holds its whole base."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def node_bytes(node) -> int:
    """The memory of a node's own bookkeeping: the object, its edge and shape tuples, params."""
    n = sys.getsizeof(node)
    for attr in ("_next", "_meta", "_params", "_versions"):
        v = getattr(node, attr, None)
        if v is not None:
            n += sys.getsizeof(v)
    return n


def _walk(root, seen):
    stack, out = [root], []
    while stack:
        n = stack.pop()
        if id(n) in seen or type(n) is AccumulateGrad:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(c for c in getattr(n, "_next", ()) if c is not None)
    return out


def _summarise(root, members) -> GraphInfo:
    buffers, by_op = {}, Counter()
    steps = [getattr(n, "_step", _step.current_step()) for n in members]
    for n in members:
        for a in saved_arrays(n):
            s = _storage(a)
            if id(s) not in buffers:
                buffers[id(s)] = s.nbytes
                by_op[type(n).__name__] += s.nbytes
    return GraphInfo(root=root, nodes=len(members), saved_bytes=sum(buffers.values()),
                     node_bytes=sum(node_bytes(n) for n in members), first_step=min(steps),
                     last_step=max(steps), by_op=by_op.most_common())


def live_graphs(nodes=None) -> list[GraphInfo]:
    """The live graphs, largest (saved bytes, then nodes) first. A node shared by two graphs
    counts in the first one found."""
    nodes = live_nodes() if nodes is None else nodes
    referenced = {id(c) for n in nodes for c in getattr(n, "_next", ()) if c is not None}
    roots = sorted((n for n in nodes if id(n) not in referenced),
                   key=lambda n: getattr(n, "_seq", 0), reverse=True)
    seen: set = set()
    graphs = [_summarise(r, _walk(r, seen)) for r in roots]
    return sorted(graphs, key=lambda g: (g.saved_bytes, g.nodes), reverse=True)
