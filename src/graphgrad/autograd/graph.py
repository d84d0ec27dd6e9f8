"""Graph nodes: the ``grad_fn`` of a tensor, and ``AccumulateGrad`` for leaves.

Every op application that needs a gradient makes one Node holding its op record, the edges to
the nodes of its inputs (``next_functions``), the values its derivative rule needs, and the
input shapes and dtypes the engine uses to sum broadcast gradients and cast them back.
"""

from __future__ import annotations

import itertools

__all__ = ["Node", "AccumulateGrad"]

# Creation order; the engine runs ready nodes latest-first, as PyTorch does.
_sequence = itertools.count()
next_sequence = _sequence.__next__

# Marks a node whose saved values were released by a backward without retain_graph.
FREED = ("<freed>",)


class Node:
    """A recorded op application; subclassed once per op so ``type(n).__name__`` is torch's."""

    __slots__ = ("_op", "_next", "_saved", "_params", "_meta", "_seq", "_extra", "_versions",
                 "__weakref__")

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        hidden = self._op.hidden_inputs if self._op is not None else ()
        if not hidden:
            return tuple((n, 0) for n in self._next)
        return tuple((n, 0) for i, (n, m) in enumerate(zip(self._next, self._meta))
                     if not (i in hidden or (m is None and "scalars" in hidden)))

    @property
    def metadata(self) -> dict:
        extra = self._extra_dict()
        return extra.setdefault("metadata", {})

    def _extra_dict(self) -> dict:
        if self._extra is None:
            self._extra = {}
        return self._extra

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def __call__(self, *grads):
        from .engine import call_node

        return call_node(self, grads)


# Leaves sort after every op node (PyTorch gives AccumulateGrad UINT64_MAX).
_LEAF_SEQUENCE = float("inf")

_node_classes: dict[str, type] = {}


def node_class(name: str) -> type:
    """The Node subclass named ``name`` (one per name, shared by ops that print alike)."""
    cls = _node_classes.get(name)
    if cls is None:
        cls = _node_classes[name] = type(name, (Node,), {"__slots__": ()})
    return cls


class AccumulateGrad(Node):
    """The sink that adds an incoming gradient into a leaf's ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable
        self._op = None
        self._next = ()
        self._saved = ()
        self._versions = None
        self._params = None
        self._meta = ((variable._data.shape, variable._data.dtype),)
        self._seq = _LEAF_SEQUENCE
        self._extra = None
