"""More of ``torch.autograd.graph``: ``register_multi_grad_hook``, ``GradientEdge`` /
``get_gradient_edge``, ``increment_version`` and ``allow_mutation_on_saved_tensors``.
Re-exported by ``graph.py``. The multi-grad hook asks the running backward which nodes it will
execute: the engine's ``_execute`` frame holds that (its dependency counts and pruning set).
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from typing import NamedTuple

from .graph import Node, _pair, saved_tensors_hooks
from .graph import RemovableHandle as _GraphHandle

__all__ = ["register_multi_grad_hook", "GradientEdge", "get_gradient_edge", "increment_version",
           "allow_mutation_on_saved_tensors"]


class GradientEdge(NamedTuple):
    """Where a tensor's gradient is computed: ``(node, output_nr)``. ``ownership_token`` is
    the engine's own node for that output (graphgrad gives a multi-output Function one node per
    output); ``autograd.grad`` accepts edges as inputs and as outputs."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def _engine_node(t):
    """The node the engine delivers ``t``'s gradient to (a leaf's AccumulateGrad)."""
    if isinstance(t, GradientEdge):
        return t.ownership_token if t.ownership_token is not None else t.node
    node = t._fn if t.grad_fn is not None else None
    if node is None and t.requires_grad:
        node = t._accumulator()
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge where ``tensor``'s gradient is computed; ``autograd.grad(loss, edge)`` equals
    ``autograd.grad(loss, tensor)``.

    >>> import graphgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 3
    >>> torch.autograd.grad((y * y).sum(), torch.autograd.graph.get_gradient_edge(y))
    (tensor([ 6., 12.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node = _engine_node(tensor)
    shown, nr = _pair(node)
    return GradientEdge(shown, nr, node if node is not shown else None)


def increment_version(tensor) -> None:
    """Marks tensors as modified in place (for writes graphgrad cannot see, e.g. through
    ``.numpy()``), so a saved copy is refused by backward. Inference tensors are skipped."""
    from .._tensor import Tensor, version_cell

    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not t._inf:
            version_cell(t)[0] += 1


# -- multi-grad hooks --------------------------------------------------------------------------
def _running_backward():
    """(task id, will-execute predicate) of the innermost backward running on this thread."""
    from . import engine

    code = engine._execute.__code__
    f = sys._getframe(2)
    while f is not None and f.f_code is not code:
        f = f.f_back
    if f is None:
        raise AssertionError("expected this hook to be called inside a backward call")
    loc = f.f_locals
    deps, needed, roots = loc["deps"], loc["needed"], loc["root_nodes"]

    def will_execute(node):
        return (node in deps or node in roots) and (needed is None or node in needed)
    return id(loc["run"]), will_execute


class _MultiHandle(_GraphHandle):
    """Removes every per-tensor hook of one ``register_multi_grad_hook``."""

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """``mode="all"``: ``fn(grads)`` runs once per backward, after the gradients of all the
    ``tensors`` this backward computes are ready (None for the others). ``mode="any"``:
    ``fn(grad)`` runs once per backward, on the first of their gradients to be computed.

    >>> import graphgrad as torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> b = torch.ones(2, requires_grad=True)
    >>> seen = []
    >>> h = torch.autograd.graph.register_multi_grad_hook((a, b), seen.append)
    >>> (a * 2).sum().backward()
    >>> seen
    [[tensor([2., 2.]), None]]
    """
    modes = ("all", "any")
    if mode not in modes:
        raise ValueError(f"Expects mode to be one of {modes} but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        tensors = tuple(tensors)
        nodes = [_engine_node(t) for t in tensors]
        count, buffer, expected = {}, {}, {}

        def inner(idx):
            def hook(grad):
                task, will_execute = _running_backward()
                with lock:
                    n = count.get(task, 0)
                    count[task] = n + 1
                    if n == 0:
                        buffer[task] = [None] * len(tensors)
                        expected[task] = sum(map(will_execute, nodes))
                buffer[task][idx] = grad
                if n == expected[task] - 1:
                    grads = buffer.pop(task)
                    del count[task], expected[task]
                    fn(grads)
            return hook
        handles = [t.register_hook(inner(i)) for i, t in enumerate(tensors)]
    else:
        ran = set()

        @functools.wraps(fn)
        def first(grad):
            task, _ = _running_backward()
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)
        handles = [t.register_hook(first) for t in tensors if t.requires_grad]
    return _MultiHandle(handles)


# -- allow_mutation_on_saved_tensors -------------------------------------------------------------
_mutation = threading.local()


class _AllowMutationOnSavedContext:
    """What ``allow_mutation_on_saved_tensors`` yields: the copies of saved tensors it holds."""

    def __init__(self):
        self.saved = []

    def clear(self) -> None:
        self.saved.clear()


def _backward_outside():
    raise AssertionError("Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                         "contextin which the graph was originally recorded.")


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Tensors saved for backward inside the block may be changed in place afterwards:
    backward uses their values at save time. NOTE: torch copies a saved tensor on its first
    in-place write; graphgrad copies each one when it is saved (same gradients, more memory),
    since its in-place writes have no single interception point.

    >>> import graphgrad as torch
    >>> with torch.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = torch.ones(2, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad
    tensor([2., 2.])
    """
    if getattr(_mutation, "active", False):
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    def pack(t):
        copy = t.detach().clone()
        ctx.saved.append(copy)
        return (ctx, len(ctx.saved) - 1)

    def unpack(handle):
        owner, i = handle
        if owner is not _mutation.__dict__.get("ctx"):
            _backward_outside()
        return owner.saved[i]

    with saved_tensors_hooks(pack, unpack):
        _mutation.active, _mutation.ctx = True, ctx
        try:
            yield ctx
        finally:
            ctx.clear()
            _mutation.active, _mutation.ctx = False, None

