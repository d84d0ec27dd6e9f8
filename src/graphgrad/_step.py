"""The global training-step counter: every ``optimizer.step()`` advances it by one.

Graph nodes record the step that made them, and the count of live nodes of each step is kept
here (``live_nodes[step]``): the graph-retention detector reads it at every step boundary to
notice graphs that outlive their step (see graphgrad/diagnostics/retention.py).
"""

from __future__ import annotations

__all__ = ["current_step", "advance_step", "add_step_listener"]

_count = 0
# live op nodes made in each step, indexed by step; Node.__del__ decrements its entry
live_nodes: list[int] = [0]
_listeners: list = []


def current_step() -> int:
    """How many optimizer steps have run in this process."""
    return _count


def advance_step() -> int:
    """Counts one optimizer step; returns the new count."""
    global _count
    _count += 1
    live_nodes.append(0)
    for fn in _listeners:
        fn(_count)
    return _count


def add_step_listener(fn) -> None:
    """``fn(new_step)`` runs after every step advance (diagnostics register here)."""
    _listeners.append(fn)
