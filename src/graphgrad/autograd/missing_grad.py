"""``graphgrad.autograd.why_no_grad``: why a tensor got no gradient (or only zeros).

The answer is the first *cut* between the loss and the tensor (see autograd/cuts.py): a
``detach()``, ``.data``, a value taken out with ``item()``/``numpy()`` and rebuilt, a
``no_grad`` block, an op with no derivative, a module that never ran (or whose output never
reached the loss), ``requires_grad=False``. For a gradient that arrived as zeros, the node
that zeroed it: dead ReLUs, saturated sigmoid/tanh, a multiplication by zero. The report's
``str()`` is the message; ``kind``, ``site`` ("file:line") and ``path`` are its fields.
"""

from __future__ import annotations

import gc

import numpy as np

from . import cuts
from .graph import AccumulateGrad, Freed

__all__ = ["why_no_grad", "NoGradReport"]

_CUT_WORDS = {
    "detach": "was detached",
    "data": "was read through .data (a tensor outside the graph)",
    "item": "left the graph through .item() (a Python number) and was rebuilt into a tensor",
    "numpy": "left the graph through .numpy() and was rebuilt into a tensor",
    "tolist": "left the graph through .tolist() and was rebuilt into a tensor",
    "non_differentiable": "went through an op with no derivative",
    "requires_grad_false": "had requires_grad switched off",
}


class NoGradReport:
    """What why_no_grad found; ``str(report)`` is the message."""

    def __init__(self, kind, message, site=None, path=()):
        self.kind = kind
        self.site = site
        self.path = list(path)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"NoGradReport(kind={self.kind!r}, site={self.site!r})"


def _site_text(site) -> str | None:
    return None if site is None else f"{site.filename}:{site.lineno}"


def _where(site) -> str:
    return "" if site is None else f" at {site.filename}:{site.lineno} ({site.source()})"


def _graph(loss):
    """The loss's nodes (id -> node), its leaves (id -> tensor) and its first sequence."""
    fn = loss.grad_fn
    nodes, leaves = {}, {}
    if fn is None:
        return nodes, leaves, None
    stack = [fn]
    nodes[id(fn)] = fn
    first = getattr(fn, "_seq", None)
    while stack:
        n = stack.pop()
        if type(n) is AccumulateGrad:
            leaves[id(n.variable)] = n.variable
            continue
        seq = getattr(n, "_seq", None)
        if isinstance(seq, int) and (first is None or seq < first):
            first = seq
        for nxt in getattr(n, "_next", ()) or ():
            nxt = nxt[0] if type(nxt) is tuple else nxt
            if nxt is not None and id(nxt) not in nodes:
                nodes[id(nxt)] = nxt
                stack.append(nxt)
    return nodes, leaves, first


def _owner(t):
    """(module, dotted name, parameter name) of the module holding ``t``, or None."""
    from ..nn.modules.module import Module

    holders = [o for o in gc.get_referrers(t) if isinstance(o, dict)]
    owners = [m for m in gc.get_objects() if isinstance(m, Module)
              and any(m.__dict__.get("_parameters") is d for d in holders)]
    if not owners:
        return None
    m = owners[0]
    pname = next((k for k, v in m._parameters.items() if v is t), "?")
    # the outermost module containing m names it
    for root in (o for o in gc.get_objects() if isinstance(o, Module)):
        for name, sub in root.named_modules():
            if sub is m and name:
                return m, name, pname
    return m, type(m).__name__, pname


def why_no_grad(tensor, loss=None) -> NoGradReport | None:
    """The first cut between ``loss`` (default: the root of this thread's last backward) and
    ``tensor``, or why its gradient is zero; None when ``tensor`` gets a non-zero gradient.

    >>> import graphgrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> h = (w * 2).detach()
    >>> loss = (h * 3).sum()
    >>> torch.autograd.why_no_grad(w, loss).kind
    'detach'
    """
    root_seq = None
    if loss is None:
        last = cuts.last_backward()
        if last is None:
            raise ValueError("why_no_grad: no backward() has run in this thread; pass the loss "
                             "(why_no_grad(tensor, loss=...))")
        loss, root_seq = last
    owner = _owner(tensor) if tensor.grad_fn is None else None
    label = f"{owner[1]}.{owner[2]}" if owner else _describe(tensor)
    if tensor.grad_fn is None and not tensor.requires_grad:
        cut = _latest(lambda c: c.kind == "requires_grad_false" and c.reaches(tensor))
        return NoGradReport(
            "requires_grad_false",
            f"{label} does not require grad (requires_grad=False"
            + (f", set{_where(cut.site)}" if cut is not None else "")
            + "), so no gradient is computed for it. Set requires_grad=True (or "
            "p.requires_grad_()) if it should train.",
            _site_text(cut.site) if cut else None)
    if loss is None:  # the last backward's loss is gone: what .grad and the cuts tell
        g = tensor.grad if tensor.grad_fn is None else None
        if g is not None:
            return None if np.any(g._data != 0) else NoGradReport(
                "zero", f"{label} gets an all-zero gradient (pass the loss, kept alive and "
                "backwarded with retain_graph=True, for the node that zeroes it)")
        return _cut_reason(tensor, label, owner, root_seq)
    nodes, leaves, _ = _graph(loss)
    root_seq = getattr(loss.grad_fn, "_seq", None)
    if loss.grad_fn is None:
        return NoGradReport(
            "detach" if loss.requires_grad is False else "unused",
            f"the loss has no graph (loss.grad_fn is None): it was computed without history, "
            f"so no gradient reaches {label} or any other tensor",
            None)
    reached = (id(tensor) in leaves) if tensor.grad_fn is None else (
        id(tensor.grad_fn) in nodes)
    if reached:
        return _zero_reason(tensor, loss, label)
    return _cut_reason(tensor, label, owner, root_seq)


def _describe(t) -> str:
    return f"the tensor of shape {list(t.shape)}"


def _latest(pred, before=None):
    for c in reversed(cuts.recent()):
        if before is not None and c.seq > before:
            continue
        if pred(c):
            return c
    return None


def _cut_reason(tensor, label, owner, root_seq):
    start = cuts.forward_start(root_seq)
    called = owner[0].__dict__.get("_gg_called") if owner else None
    if called is not None and called[0] <= start:
        called = None  # ran only in an earlier forward
    if owner is not None:
        module = owner[0]
        mname = f"{owner[1]} ({type(module).__name__})"
        if called is not None and not called[1]:
            block = cuts.block_at(called[2])
            return NoGradReport(
                "no_grad",
                f"{label} got no gradient: module {mname} ran with gradients disabled"
                + (f", inside the no_grad block{_where(block.site)}" if block else "")
                + "; tensors computed there carry no history. Run it outside no_grad.",
                _site_text(block.site) if block else None, [mname])
        if called is None:
            return NoGradReport(
                "unused",
                f"{label} got no gradient: module {mname} was not called in the forward that "
                "made the loss (it is unused; if that is intended, freeze it or pass "
                "find_unused_parameters=True to DistributedDataParallel)",
                None, [mname])
    after = called[0] if called else start
    cut = _latest(lambda c: c.kind in _CUT_WORDS and c.reaches(tensor) and c.seq > after,
                  before=root_seq)
    if cut is not None:
        what = _CUT_WORDS[cut.kind]
        if cut.kind == "non_differentiable" and cut.detail:
            what = f"went through {cut.detail}, which has no derivative"
        return NoGradReport(
            cut.kind,
            f"{label} got no gradient: a tensor computed from it {what}{_where(cut.site)}, "
            "so the loss's graph ends there" + _fix(cut.kind),
            _site_text(cut.site), [label, cut.kind])
    cut = _latest(lambda c: c.kind in ("item", "numpy", "tolist") and c.reaches(tensor) is None
                  and c.seq > after, before=root_seq)
    if cut is not None and owner is not None:  # a value taken out of a graph now gone
        return NoGradReport(
            cut.kind,
            f"{label} got no gradient: most likely a value computed from it "
            f"{_CUT_WORDS[cut.kind]}{_where(cut.site)}, so the loss's graph ends there"
            + _fix(cut.kind), _site_text(cut.site), [label, cut.kind])
    block = _latest(lambda c: c.kind == "no_grad" and c.seq > after, before=root_seq)
    if block is not None and owner is None:
        return NoGradReport(
            "no_grad",
            f"{label} got no gradient: it does not reach the loss; the no_grad block"
            f"{_where(block.site)} ran before the loss was computed, and tensors computed "
            "inside it carry no history",
            _site_text(block.site))
    if owner is not None:
        return NoGradReport(
            "unused",
            f"{label} got no gradient: module {owner[1]} ({type(owner[0]).__name__}) was "
            "called, but its output did not reach the loss", None)
    return NoGradReport(
        "unused",
        f"{label} got no gradient: it never reached the loss (no op on the loss's path used "
        "it)", None)


def _fix(kind: str) -> str:
    return {
        "detach": ". Remove the detach() if the gradient should flow.",
        "data": ". Use the tensor itself instead of .data.",
        "item": ". Keep the value as a tensor instead of calling .item().",
        "numpy": ". Keep the computation in tensors instead of NumPy.",
        "tolist": ". Keep the computation in tensors instead of Python lists.",
        "non_differentiable": ". Use a differentiable relaxation (softmax instead of argmax, "
                              "a sigmoid instead of a comparison).",
        "requires_grad_false": ".",
    }.get(kind, ".")


# -- zero gradients ---------------------------------------------------------------------------
_ZEROING = ("Relu", "Threshold", "Hardtanh", "Clamp", "Sigmoid", "Tanh", "Mul", "Max", "Min",
            "Where", "MaskedFill", "Abs")


def _zero_reason(tensor, loss, label):
    g = tensor.grad if tensor.grad_fn is None else None
    if g is None and tensor.grad_fn is None:
        return NoGradReport(
            "not_run",
            f"{label} is on the loss's path, but it has no .grad yet: backward() has not run "
            "on this loss (or it ran with inputs= that exclude it)")
    if g is not None and np.any(g._data != 0):
        return None
    path = _path_to(loss, tensor)
    names = [type(n).__name__ for n in path]
    freed = any(isinstance(getattr(n, "_saved", None), Freed) for n in path)
    for i, n in enumerate(path):
        why = _explain_zero(n, path[i + 1] if i + 1 < len(path) else tensor)
        if why:
            return NoGradReport("zero", f"{label} gets an all-zero gradient: {why}",
                                _site_text(getattr(n, "_site", None)), names)
    suspects = [x for x in names if any(x.startswith(z) for z in _ZEROING)]
    hint = (" (its saved values were freed by backward(): call why_no_grad before backward() "
            "or backward with retain_graph=True for the exact cause)" if freed else "")
    return NoGradReport(
        "zero",
        f"{label} gets an all-zero gradient; on its path from the loss: "
        + (", ".join(suspects) if suspects else " -> ".join(names)) + hint, None, names)


def _path_to(loss, tensor):
    """Nodes from the loss's node to the tensor's (shortest by edges)."""
    target = tensor.grad_fn
    start = loss.grad_fn
    prev = {id(start): None}
    queue = [start]
    found = None
    while queue:
        nxt_queue = []
        for n in queue:
            if (target is not None and n is target) or (
                    target is None and type(n) is AccumulateGrad and n.variable is tensor):
                found = n
                break
            for e in getattr(n, "_next", ()) or ():
                e = e[0] if type(e) is tuple else e
                if e is not None and id(e) not in prev:
                    prev[id(e)] = n
                    nxt_queue.append(e)
        if found is not None:
            break
        queue = nxt_queue
    path = []
    n = found
    while n is not None:
        path.append(n)
        n = prev.get(id(n))
    path.reverse()
    return [n for n in path if type(n) is not AccumulateGrad]


def _saved_arrays(node):
    saved = getattr(node, "_saved", None)
    if saved is None or isinstance(saved, Freed):
        return None
    out = []
    for v in saved:
        a = getattr(v, "_data", v)
        out.append(np.asarray(a) if a is not None else None)
    return out


def _site_suffix(node) -> str:
    site = getattr(node, "_site", None)
    return "" if site is None else f" (made at {site.filename}:{site.lineno})"


def _input_index(node, toward):
    """Which input edge of ``node`` leads to ``toward`` (the next node on the path, or the
    leaf tensor at its end)."""
    for i, e in enumerate(getattr(node, "_next", ()) or ()):
        e = e[0] if type(e) is tuple else e
        if e is toward or (type(e) is AccumulateGrad and e.variable is toward):
            return i
    return None


def _explain_zero(node, toward) -> str | None:
    name = type(node).__name__
    vals = _saved_arrays(node)
    if vals is None:
        return None
    op = getattr(node, "_op", None)
    save = getattr(op, "save", ()) or ()
    if name.startswith("Relu") or name.startswith("Threshold"):
        a = vals[0] if vals else None
        if a is not None and a.size:
            dead = float(np.mean(a <= 0))
            if dead == 1.0:
                return (f"every unit of the ReLU {name}{_site_suffix(node)} is inactive "
                        f"(dead ReLU: 100% of its {a.size} outputs are <= 0)")
    if name.startswith("Sigmoid") or name.startswith("Tanh"):
        a = vals[0] if vals else None
        if a is not None and a.size:
            sat = (np.abs(a) >= 1 - 1e-6) if name.startswith("Tanh") else (
                (a <= 1e-7) | (a >= 1 - 1e-7))
            if np.all(sat):
                return (f"{name}{_site_suffix(node)} is saturated: all {a.size} outputs sit at "
                        "its limits, where its derivative is 0 in float32")
    if name.startswith("Mul") and len(vals) == 2 and tuple(save[:2]) == (0, 1):
        i = _input_index(node, toward)
        other = None if i is None else vals[1 - i]
        if other is not None and not np.any(other):
            return (f"it is multiplied by zero in {name}{_site_suffix(node)} (the other "
                    f"operand, of shape {list(other.shape)}, is all zeros)")
    return None
