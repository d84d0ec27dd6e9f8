"""``torch.accelerator.graphs``: capture and replay of device work (``Graph``).

There is no accelerator here: making a ``Graph`` raises torch's CPU-build RuntimeError.
"""

from __future__ import annotations

from ._none import no_accelerator

__all__ = ["Graph"]


class Graph:
    """``torch.accelerator.Graph``: needs an accelerator, so construction raises."""

    def __init__(self, keep_graph=False, *, pool=None, capture_error_mode="default"):
        no_accelerator()
