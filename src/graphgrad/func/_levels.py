"""How deep the running code is nested in torch.func's differentiating transforms.

An inner transform builds a graph (``create_graph``) so an outer one can differentiate its
result; the outermost transform returns results detached, as torch.func does.
"""

from __future__ import annotations

from contextlib import contextmanager

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad

_depth = [0]


@contextmanager
def transform():
    """Marks one level of transform and turns grad mode on inside it."""
    _depth[0] += 1
    try:
        with enable_grad():
            yield
    finally:
        _depth[0] -= 1


def nested() -> bool:
    """Whether a differentiating transform is running around the current code."""
    return _depth[0] > 0


def lift(x):
    """A tensor to differentiate with respect to: a fresh leaf, or (when ``x`` already carries
    an outer graph) an alias of ``x`` that keeps the outer graph connected."""
    if not isinstance(x, Tensor):
        return x
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


def finish(x, keep: bool):
    """``x`` (a tensor, or anything else unchanged) detached unless ``keep``."""
    if keep or not isinstance(x, Tensor):
        return x
    return x.detach()


def finish_aux(x, keep: bool):
    """An ``aux`` leaf returned by a transform: tensors only, as torch requires."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return finish(x, keep)
