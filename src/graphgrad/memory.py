"""Memory you can see: bytes held by live tensors and graphs, their peak, and the live graphs.

``allocated()`` counts the storage of live tensors (each buffer once, however many views share
it; arrays under ``min_tracked_bytes()`` are not counted) plus the graph nodes alive now, at
``NODE_BYTES`` each: a graph kept alive after backward still holds its nodes even though their
saved tensors were released, and that is how ``total += loss`` grows. ``snapshot()`` and
``live_graphs()`` scan the live graphs for the details (milliseconds: call them now and then).

>>> import graphgrad as torch
>>> before = torch.memory.allocated()
>>> x = torch.zeros(1024, 1024)
>>> torch.memory.allocated() - before
4194304
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import _step
from .diagnostics import ledger
from .diagnostics.graphs import GraphInfo, _fmt
from .diagnostics.graphs import live_graphs as _live_graphs
from .diagnostics.ledger import min_tracked_bytes, set_min_tracked_bytes
from .diagnostics.retention import (
    GraphRetentionWarning,
    RetainedGraphWarning,
)
from .diagnostics.retention import (
    is_enabled as is_retention_check_enabled,
)
from .diagnostics.retention import (
    reset as reset_retention_check,
)
from .diagnostics.retention import (
    set_enabled as set_retention_check,
)
from .diagnostics.why_alive import AliveReport, why_alive

__all__ = ["allocated", "max_allocated", "reset_peak", "storage_allocated", "graph_nodes",
           "snapshot", "live_graphs", "Snapshot", "GraphInfo", "NODE_BYTES",
           "min_tracked_bytes", "set_min_tracked_bytes", "GraphRetentionWarning",
           "RetainedGraphWarning", "set_retention_check", "is_retention_check_enabled",
           "reset_retention_check", "why_alive", "AliveReport"]

# The average size of a node's bookkeeping (object, edges, shapes, params), measured on a
# small CNN's graph with graphgrad.diagnostics.graphs.node_bytes: 216-576 bytes.
NODE_BYTES = 400

_peak = [0]


def graph_nodes() -> int:
    """How many graph nodes are alive now."""
    return sum(_step.live_nodes)


def storage_allocated() -> int:
    """Bytes of live tensor storage alone."""
    return ledger.allocated()


def allocated() -> int:
    """Bytes of live tensor storage plus live graph nodes (see the module docstring)."""
    n = ledger.allocated() + graph_nodes() * NODE_BYTES
    if n > _peak[0]:
        _peak[0] = n
    return n


def max_allocated() -> int:
    """The peak of tensor storage since start or ``reset_peak()`` (tracked as arrays are made),
    or of ``allocated()`` where a call saw more (graph nodes are counted when asked)."""
    return max(ledger.max_allocated(), _peak[0])


def reset_peak() -> None:
    ledger.reset_peak()
    _peak[0] = 0


def live_graphs() -> list[GraphInfo]:
    """Each live graph: root, node count, saved bytes, the ops holding most, the steps it spans
    and (with site capture on) the line that made its root; largest first."""
    return _live_graphs()


@dataclass
class Snapshot:
    step: int
    storage_bytes: int
    graph_nodes: int
    peak_bytes: int
    graphs: list = field(default_factory=list)

    @property
    def allocated(self) -> int:
        return self.storage_bytes + self.graph_nodes * NODE_BYTES

    def __str__(self) -> str:
        lines = [f"step {self.step}: {_fmt(self.allocated)} allocated ({_fmt(self.storage_bytes)}"
                 f" tensor storage, {self.graph_nodes} graph nodes), peak "
                 f"{_fmt(self.peak_bytes)}, {len(self.graphs)} live graph(s)"]
        lines += [f"  {g}" for g in self.graphs[:10]]
        return "\n".join(lines)


def snapshot() -> Snapshot:
    """The ledger and the live graphs now."""
    return Snapshot(step=_step.current_step(), storage_bytes=ledger.allocated(),
                    graph_nodes=graph_nodes(), peak_bytes=max_allocated(),
                    graphs=_live_graphs())
