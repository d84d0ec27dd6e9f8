"""``is_compiling()``: whether code runs inside a ``graphgrad.compile`` capture, as
torch.compiler.is_compiling() tells a function it is being traced by torch.compile."""

from __future__ import annotations

from ..ops import _dispatch

__all__ = ["is_compiling", "is_dynamo_compiling", "is_exporting"]


def is_compiling() -> bool:
    """True while graphgrad.compile records the running function (ops go to its tracer).

    >>> import graphgrad as torch
    >>> torch.compiler.is_compiling()
    False
    """
    t = _dispatch._tracer
    return t is not None and t.mine()  # another thread's capture does not trace this one


def is_dynamo_compiling() -> bool:
    return is_compiling()


def is_exporting() -> bool:
    """False: not tracked apart (graphgrad.onnx.export captures with the compiler, so a model
    being exported sees ``is_compiling()`` True)."""
    return False
