"""Typed autograd errors: each subclasses the exception PyTorch raises (so ``except
RuntimeError`` still works) and carries fields a program or a person can act on: the op, the
shapes, where the node was made, and a suggested fix. The message prints the summary first.
"""

from __future__ import annotations

__all__ = ["AutogradError", "SavedTensorModifiedError", "GraphFreedError", "AnomalyError"]


_UNKNOWN_SITE = ("unknown (run with graphgrad.autograd.graph.set_capture_sites(True), or in "
                 "anomaly mode, to record it)")


class AutogradError(RuntimeError):
    """An autograd failure. ``summary`` is the first line (PyTorch's wording where it has
    one); ``op``, ``shapes``, ``site`` (a :class:`graphgrad.autograd.sites.Site` or None),
    ``fix`` and ``details`` (extra lines) follow it in the message."""

    def __init__(self, summary, *, op=None, shapes=None, site=None, fix=None, details=()):
        self.summary = summary
        self.op = op
        self.shapes = shapes
        self.site = site
        self.fix = fix
        self.details = tuple(details)
        super().__init__(self._format())

    def _format(self) -> str:
        lines = [self.summary]
        if self.op is not None:
            shapes = "" if self.shapes is None else f" (shapes {self.shapes})"
            lines.append(f"  op: {self.op}{shapes}")
            lines.append(f"  made at: {self.site.short() if self.site else _UNKNOWN_SITE}")
        lines.extend(f"  {d}" for d in self.details)
        if self.fix:
            lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


class SavedTensorModifiedError(AutogradError):
    """A value saved for backward was changed in place before backward used it."""


class GraphFreedError(AutogradError):
    """Backward reached a node whose saved values an earlier backward released."""


class AnomalyError(AutogradError):
    """Anomaly mode found a NaN in a gradient."""
