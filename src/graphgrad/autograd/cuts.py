"""Where tensors leave the graph: the record ``why_no_grad`` reads.

A gradient goes missing at a *cut* between the loss and a leaf: ``detach()``, ``.data``, a
value taken out with ``item()``/``numpy()``/``tolist()`` and rebuilt into a tensor, a
``no_grad`` block, an op with no derivative (argmax, a comparison, an integer cast). Each cut
is noted where it happens, never per op: the methods above and grad-mode boundaries call
``note`` (only for tensors that have history, and only when the caller is user code), and a
module call stamps the module with its sequence number and grad mode (``Module.__call__``,
about 0.1 us). A note keeps no tensor alive: it holds the leaves the cut's source reached
(ids, walked once with a budget) and a weak reference to the source's node.

Note [Cut record]: ``_log`` is a bounded ring (the latest ``CAPACITY`` cuts), so the cost and
the memory stay flat in long runs; ``why_no_grad`` only needs the cuts of the last forward.
"""

from __future__ import annotations

import collections
import sys
import threading
import weakref

from . import sites
from .graph import AccumulateGrad, Freed, next_sequence

__all__ = ["Cut", "note", "note_op", "note_no_grad", "block_at", "current_block_seq", "recent",
           "last_backward", "note_backward", "current_block", "set_block"]

CAPACITY = 256
WALK_BUDGET = 4096  # graph nodes walked to find the leaves a cut's source reached

_log: collections.deque = collections.deque(maxlen=CAPACITY)
_getframe = sys._getframe
_is_internal = sites._is_internal
_local = threading.local()
_backward_seqs: collections.deque = collections.deque(maxlen=64)


class Cut:
    """One place where a tensor's history ended: ``kind`` ("detach", "data", "item",
    "numpy", "tolist", "no_grad", "non_differentiable"), the user's ``site``, the sequence
    number at the cut (``seq``), the ids of the leaves the source reached (``leaves``; None
    when unknown), the op for a non-differentiable one (``detail``)."""

    __slots__ = ("kind", "site", "seq", "leaves", "detail", "source", "pending")

    def __init__(self, kind, site, seq, leaves, detail=None, source=None, pending=None):
        self.kind = kind
        self.site = site
        self.seq = seq
        self.leaves = leaves
        self.detail = detail
        self.source = source  # weakref to the source's node (or None)
        self.pending = pending  # the source node, until its leaves are read (Note [Deferred])

    def reaches(self, leaf) -> bool | None:
        """Whether the source of this cut had ``leaf`` in its history (None: unknown)."""
        if self.pending is not None:
            resolve(self)
        if self.leaves is None:
            return None
        return id(leaf) in self.leaves


# Note [Deferred]: item()/numpy()/tolist() are mostly logging (``loss.item()`` every step), so
# their walk is deferred to the next backward(), with a weak reference to the source node (a
# note never keeps a graph alive). If that backward starts at the same node, the value was the
# loss being logged, not a cut: dropped without a walk; otherwise its leaves are read then. A
# source gone by then (a temporary) leaves the reach unknown, and why_no_grad takes such a
# note as a likely cut only when no definite one explains the missing gradient. A value taken
# from a graph a backward already went through (saved values freed) is logging too: no note.
_pending: list = []


def resolve(cut) -> None:
    node = cut.pending() if cut.pending is not None else None
    cut.pending = None
    cut.leaves = leaves_of_node(node) if node is not None else None  # gone: unknown


def _settle(roots) -> None:
    root_nodes = {id(getattr(t, "_fn", None)) for t in roots}
    for cut in _pending:
        node = cut.pending() if cut.pending is not None else None
        if node is None:
            cut.pending = None
            continue
        if id(node) in root_nodes:
            cut.pending = None
            cut.leaves = frozenset()  # the loss itself, logged: reaches nothing as a cut
        else:
            resolve(cut)
    _pending.clear()


def _user_caller(depth: int) -> bool:
    try:
        return not _is_internal(_getframe(depth + 1).f_code.co_filename)
    except ValueError:
        return False


def leaves_of(t, budget: int = WALK_BUDGET):
    """Ids of the leaf tensors requiring grad that ``t``'s history reaches (within budget;
    None when the walk ran out)."""
    fn = t._fn
    if fn is None:
        return frozenset((id(t),)) if t._rg else frozenset()
    return leaves_of_node(fn, budget)


def leaves_of_node(fn, budget: int = WALK_BUDGET):
    seen = {id(fn)}
    stack = [fn]
    out = set()
    while stack:
        n = stack.pop()
        if type(n) is AccumulateGrad:
            out.add(id(n.variable))
            continue
        for nxt in getattr(n, "_next", ()) or ():
            if nxt is None:
                continue
            nxt = nxt[0] if type(nxt) is tuple else nxt
            if nxt is None or id(nxt) in seen:
                continue
            seen.add(id(nxt))
            if len(seen) > budget:
                return None
            stack.append(nxt)
    return frozenset(out)


def note(kind: str, t, depth: int = 1, detail=None) -> None:
    """Records that ``t`` (which has history) was cut by ``kind``, if the caller, ``depth``
    frames up from the function calling ``note``, is user code."""
    if not _user_caller(depth + 1):
        return
    fn = t._fn
    source = weakref.ref(fn) if fn is not None else None
    if kind in _DEFERRED and fn is not None:
        if isinstance(getattr(fn, "_saved", None), Freed) or _is_last_root(fn):
            return  # read after a backward went through it: logging, not a cut
        cut = Cut(kind, sites.capture(depth + 2), next_sequence(), None, detail, source)
        cut.pending = source  # weakly: the note never keeps a graph alive
        _pending[:] = [c for c in _pending if c.pending is not None and c.pending() is not None]
        _pending.append(cut)
        _log.append(cut)
        return
    _log.append(Cut(kind, sites.capture(depth + 2), next_sequence(), leaves_of(t), detail,
                    source))


_DEFERRED = frozenset(("item", "numpy", "tolist"))


def _is_last_root(fn) -> bool:
    for ref, _ in getattr(_local, "roots", None) or ():
        t = ref()
        if t is not None and t._fn is fn:
            return True
    return False


OP_BUDGET = 512  # a smaller walk for ops (a mask per layer must stay cheap)


def note_op(op, inputs) -> None:
    """An op with no derivative (or an integer/bool result) ran on a tensor with history
    under grad mode: the dispatcher's non-recording path calls this, so it costs nothing on
    the recording path."""
    from .._tensor import Tensor

    for x in inputs:
        if isinstance(x, Tensor) and (x._rg or x._fn is not None):
            break
    else:
        return
    fn = x._fn
    _log.append(Cut("non_differentiable", sites.capture(3), next_sequence(),
                    leaves_of(x, OP_BUDGET), f"{op.name}()",
                    weakref.ref(fn) if fn is not None else None))


def note_no_grad(depth: int = 1) -> None:
    """Records a ``no_grad`` block entered from user code (its site becomes the current block,
    which module calls made inside it remember)."""
    if not _user_caller(depth + 1):
        return
    cut = Cut("no_grad", sites.capture(depth + 2), next_sequence(), None)
    _log.append(cut)
    _local.block = cut


def current_block():
    return getattr(_local, "block", None)


def set_block(block) -> None:
    _local.block = block


def current_block_seq():
    """The sequence number of the innermost user no_grad block (a plain int: modules keep
    it, and a module must stay picklable)."""
    block = getattr(_local, "block", None)
    return None if block is None else block.seq


def block_at(seq):
    """The recorded no_grad block with sequence number ``seq`` (None once it left the ring)."""
    if seq is None:
        return None
    for c in _log:
        if c.seq == seq and c.kind == "no_grad":
            return c
    return None


def recent():
    """The recorded cuts, oldest first."""
    return list(_log)


def note_backward(tensors) -> None:
    """This thread's latest backward: its roots (weakly; why_no_grad's default loss), their
    nodes' sequence numbers, and the call's own sequence number, which marks where the next
    forward begins."""
    _local.roots = [(weakref.ref(t), getattr(t._fn, "_seq", None)) for t in tensors
                    if t is not None]
    _backward_seqs.append(next_sequence())
    if _pending:
        _settle(tensors)


def last_backward():
    """(root tensor or None once it is gone, its node's sequence number), or None when no
    backward ran in this thread."""
    roots = getattr(_local, "roots", None)
    if not roots:
        return None
    for ref, seq in roots:
        t = ref()
        if t is not None:
            return t, seq
    return None, roots[0][1]


def forward_start(root_seq) -> int:
    """The sequence number after which the forward that made a root (``root_seq``) ran: the
    latest backward() call before it (-1 when none)."""
    before = [b for b in _backward_seqs if root_seq is None or b < root_seq]
    return max(before) if before else -1
