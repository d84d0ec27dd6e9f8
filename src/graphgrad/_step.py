"""The global training-step counter: every ``optimizer.step()`` advances it by one.

Nodes and diagnostics (the graph-retention detector, the memory ledger) read ``current_step()``
to tell which training step made a graph or a saved value.
"""

from __future__ import annotations

__all__ = ["current_step", "advance_step"]

_count = 0


def current_step() -> int:
    """How many optimizer steps have run in this process."""
    return _count


def advance_step() -> int:
    """Counts one optimizer step; returns the new count."""
    global _count
    _count += 1
    return _count
