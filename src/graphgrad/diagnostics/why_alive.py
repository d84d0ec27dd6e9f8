"""``graphgrad.memory.why_alive``: who keeps these bytes alive.

For a tensor or array (or, with none given, the largest live buffers the memory ledger
counts), the shortest chain of references from a *root* to the bytes: a module-level name, a
local variable of a running frame (with its function and line), or one of graphgrad's hook
registries, through containers, objects, closures, graph nodes and saved tensors::

    trainer.history[-1] -> Tensor(loss) -> AddBackward0 -> MulBackward0 saved[0] -> 64.0 MiB

The chain is found backwards from the bytes with ``gc.get_referrers`` (a breadth-first
search, so the first chain found is a shortest one): a diagnostic to call now and then
(milliseconds to a second), never on a hot path. Bytes that no root reaches are held by a
reference cycle, which ``gc.collect()`` frees: the report says "unreachable cycle,
collectable".
"""

from __future__ import annotations

import gc
import inspect
import sys
import types

import numpy as np

from ..autograd.graph import Node
from .graphs import _fmt

__all__ = ["why_alive", "AliveReport"]

MAX_OBJECTS = 50_000  # referrers examined per search
MAX_DEPTH = 24


class AliveReport:
    """One buffer and the chain that keeps it alive; ``str()`` is the chain."""

    def __init__(self, nbytes, chain, root, collectable=False, where=None):
        self.nbytes = nbytes
        self.where = where  # the root: "a local of train() at file:line", "a module-level name"
        self.chain = list(chain)  # the steps from the root to the bytes, as text
        self.root = root  # "module", "local", "registry" or None
        self.collectable = collectable

    def __str__(self) -> str:
        if self.root is None:
            what = ("unreachable cycle, collectable (gc.collect() frees it)" if self.collectable
                    else "no root found (held outside Python objects, or beyond the search)")
            return " -> ".join([*self.chain, _fmt(self.nbytes)]) + f"  [{what}]"
        root = self.chain[0].split(" ")[0].split(".")[0].split("[")[0]
        return " -> ".join([*self.chain, _fmt(self.nbytes)]) + f"  ({root}: {self.where})"

    __repr__ = __str__


class Reports(list):
    """Several reports, printed one per line."""

    def __str__(self) -> str:
        return "\n".join(str(r) for r in self)


def _registries():
    """graphgrad's global hook registries: roots a user may not think of."""
    out = {}
    try:
        from ..nn.modules import global_hooks as gh

        for name in dir(gh):
            v = getattr(gh, name)
            if name.startswith("_global") and isinstance(v, dict):
                out[id(v)] = (v, f"nn.modules.{name}", "a global module hook registry")
    except ImportError:  # pragma: no cover - nn always imports
        pass
    return out


def _frame_roots(skip):
    """(id(value) -> (value, description)) for the locals of every running user frame."""
    roots = {}
    frames = list(sys._current_frames().values())
    for top in frames:
        f = top
        while f is not None:
            if f.f_code not in skip:
                where = ("module" if f.f_code.co_name == "<module>"
                         else f"{f.f_code.co_name}()")
                snapshot = f.f_locals
                for name, v in list(snapshot.items()):
                    roots.setdefault(id(v), (v, name, f"a local of {where} at "
                                                      f"{f.f_code.co_filename}:{f.f_lineno}"))
                if f.f_code.co_flags & inspect.CO_OPTIMIZED:
                    snapshot.clear()  # the snapshot would pin the locals (see retention.py)
            f = f.f_back
    return roots


def _module_roots():
    roots = {}
    for mname, mod in list(sys.modules.items()):
        d = getattr(mod, "__dict__", None)
        if not isinstance(d, dict) or mname.startswith(("graphgrad.diagnostics",)):
            continue
        for k, v in list(d.items()):
            if isinstance(v, (types.ModuleType, type, types.FunctionType, int, str, float)):
                continue
            roots.setdefault(id(v), (v, f"{mname}.{k}", "a module-level name"))
    return roots


def _edge(holder, obj) -> str:
    """How ``holder`` refers to ``obj``, as text."""
    from .._tensor import Tensor

    if isinstance(holder, Tensor):
        for slot in ("_data", "_fn", "_grad", "_base"):
            if getattr(holder, slot, None) is obj:
                return {"_data": "", "_fn": "grad_fn", "_grad": ".grad"}.get(slot, slot)
        return ""
    if isinstance(holder, Node):
        saved = getattr(holder, "_saved", None)
        if isinstance(saved, tuple):
            for i, v in enumerate(saved):
                if v is obj:
                    return f"saved[{i}]"
        return ""
    if isinstance(holder, dict):
        for k, v in holder.items():
            if v is obj:
                return f"[{k!r}]"
        return ""
    if isinstance(holder, (list, tuple)):
        n = len(holder)
        for i, v in enumerate(holder):
            if v is obj:
                return f"[{i - n}]" if isinstance(holder, list) and i == n - 1 else f"[{i}]"
        return ""
    if isinstance(holder, types.CellType):
        return ""
    d = getattr(holder, "__dict__", None)
    if isinstance(d, dict):
        for k, v in d.items():
            if v is obj:
                return f".{k}"
    for k in getattr(type(holder), "__slots__", ()):
        if getattr(holder, k, None) is obj:
            return f".{k}"
    return ""


def _label(obj) -> str:
    from .._tensor import Tensor

    if isinstance(obj, Tensor):
        return f"Tensor{list(obj.shape)}"
    if isinstance(obj, Node):
        return type(obj).__name__
    if isinstance(obj, types.CellType):
        return "closure cell"
    if isinstance(obj, types.FunctionType):
        return f"{obj.__qualname__}()"
    if isinstance(obj, (dict, list, tuple, set)):
        return type(obj).__name__
    return type(obj).__name__


def _array_holders():
    """id(array) -> the Tensors and graph nodes holding it directly. NumPy arrays are not
    tracked by the garbage collector, and CPython stops tracking a tuple that holds only
    untracked objects (a node's saved tuple of arrays), so ``gc.get_referrers`` cannot see
    these links: they are read off every live Tensor and Node instead."""
    from .._tensor import Tensor

    out = {}
    for o in gc.get_objects():
        if isinstance(o, Tensor):
            for a in (o._data, getattr(o, "_grad", None)):
                if isinstance(a, np.ndarray):
                    out.setdefault(id(a), []).append(o)
                    if isinstance(a.base, np.ndarray):
                        out.setdefault(id(a.base), []).append(o)
        elif isinstance(o, Node):
            saved = getattr(o, "_saved", None)
            if isinstance(saved, tuple):
                for v in saved:
                    if isinstance(v, np.ndarray):
                        out.setdefault(id(v), []).append(o)
                        if isinstance(v.base, np.ndarray):
                            out.setdefault(id(v.base), []).append(o)
    return out


def _search(target, roots, exclude, holders):
    """Breadth-first search backwards from ``target`` to a root: the path as a list of
    objects (root first) and the root's description, or (None, None)."""
    prev = {id(target): None}
    objs = {id(target): target}
    frontier = [target]
    seen = 0
    depth = 0
    while frontier and depth < MAX_DEPTH and seen < MAX_OBJECTS:
        nxt = []
        for o in frontier:
            hit = roots.get(id(o))
            if hit is not None and hit[0] is o:
                path = []
                k = id(o)
                while k is not None:
                    path.append(objs[k])
                    k = prev[k]
                return path, hit
            refs = gc.get_referrers(o)
            if isinstance(o, np.ndarray):
                refs = refs + holders.get(id(o), [])
            for r in refs:
                if id(r) in prev or id(r) in exclude or isinstance(r, types.FrameType):
                    continue
                if r is frontier or r is nxt:
                    continue
                prev[id(r)] = id(o)
                objs[id(r)] = r
                nxt.append(r)
                seen += 1
        frontier = nxt
        depth += 1
    return None, None


def _describe(path, root_name):
    """The chain as text tokens, root first: attribute and item steps are appended to the
    token they start from (``trainer.history[-1]``), graph objects (tensors, nodes,
    functions, cells) start a new token, a node's saved slot is named ``saved[i]``."""
    from .._tensor import Tensor

    tokens = [root_name]
    pending = None  # how a folded container (an object's __dict__, a saved tuple) is entered
    for holder, obj in zip(path, path[1:]):
        if pending == "dict":
            e = next((f".{k}" for k, v in holder.items() if v is obj), "")
        elif isinstance(pending, tuple) and pending[0] == "closure":
            i = next((i for i, c in enumerate(holder) if c is obj), None)
            names = pending[1].__code__.co_freevars
            e = f" closure '{names[i]}'" if i is not None and i < len(names) else " closure"
        elif pending == "saved":
            e = next((f" saved[{i}]" for i, v in enumerate(holder) if v is obj), "")
        elif pending == "next":
            e = ""
        else:
            e = _edge(holder, obj)
            if e.startswith("saved"):
                e = " " + e
        pending = None
        if isinstance(obj, dict) and getattr(holder, "__dict__", None) is obj:
            pending = "dict"
            continue
        if isinstance(obj, tuple) and isinstance(holder, types.FunctionType) \
                and holder.__closure__ is obj:
            pending = ("closure", holder)
            continue
        if isinstance(obj, tuple) and isinstance(holder, Node):
            pending = "saved" if getattr(holder, "_saved", None) is obj else "next"
            continue
        if isinstance(obj, types.CellType):
            tokens[-1] += e
            continue
        if isinstance(obj, np.ndarray):
            tokens[-1] += e if e not in ("", "grad_fn") else ""
            break
        if isinstance(obj, (Tensor, Node, types.FunctionType)) or not isinstance(
                obj, (dict, list, tuple, set)):
            if e not in ("", "grad_fn"):
                tokens[-1] += e
            tokens.append(_label(obj))
        else:
            tokens[-1] += e
    return tokens


def _arrays(x):
    from .._tensor import Tensor

    if x is None:
        from .ledger import ledger

        live = [r() for r in list(ledger.live.values())]
        return [a for a in live if a is not None]
    if isinstance(x, Tensor):
        a = x._data
        return [a.base if isinstance(a.base, np.ndarray) else a]
    if isinstance(x, np.ndarray):
        return [x if x.base is None or not isinstance(x.base, np.ndarray) else x.base]
    raise TypeError(f"why_alive: expected a Tensor or a NumPy array, got {type(x).__name__}")


def why_alive(x=None, top: int = 5):
    """The shortest reference chain from a root to ``x``'s bytes (a Tensor or array); with no
    ``x``, one chain for each of the ``top`` largest live buffers the ledger counts (arrays of
    at least ``memory.min_tracked_bytes()``). Returns an :class:`AliveReport` (a list of them
    for ``x=None``).

    >>> import graphgrad as torch
    >>> kept = [torch.ones(1000, requires_grad=True) * 2]
    >>> "kept" in str(torch.memory.why_alive(kept[0]))
    True
    """
    was_enabled = gc.isenabled()
    gc.disable()  # a collection during the search would free cyclic garbage half-way through
    try:
        return _why_alive(x, top)
    finally:
        if was_enabled:
            gc.enable()


def _why_alive(x, top):
    targets = _arrays(x)
    if x is None:
        targets = sorted(targets, key=lambda a: a.nbytes, reverse=True)[:top]
    me = sys._getframe()
    skip = {me.f_code, _search.__code__, _frame_roots.__code__, why_alive.__code__}
    me = me.f_back
    roots = {**_module_roots(), **_registries(), **_frame_roots(skip)}
    caller_locals = me.f_back.f_locals if me.f_back is not None else {}
    exclude = {id(roots), id(targets), id(caller_locals), id(skip)}
    holders = _array_holders()
    exclude.add(id(holders))
    exclude.update(id(v) for v in holders.values())
    reports = Reports()
    for a in targets:
        path, hit = _search(a, roots, exclude | {id(targets)}, holders)
        if path is None:
            gc_collectable = _in_cycle(a, holders, exclude | {id(targets)})
            reports.append(AliveReport(a.nbytes, [_label(a)], None, gc_collectable))
        else:
            kind = ("local" if hit[2].startswith("a local") else
                    "registry" if "registry" in hit[2] else "module")
            reports.append(AliveReport(a.nbytes, _describe(path, hit[1]), kind, where=hit[2]))
    del roots
    return reports if x is None else reports[0]


def _in_cycle(obj, holders, exclude, limit: int = 20_000) -> bool:
    """Whether the objects holding ``obj`` include a reference cycle (a depth-first walk of
    referrers that comes back to an object on its own path)."""
    on_path, done = set(), set()
    stack = [(obj, iter(gc.get_referrers(obj) + holders.get(id(obj), [])))]
    on_path.add(id(obj))
    count = 0
    while stack and count < limit:
        o, it = stack[-1]
        r = next(it, None)
        if r is None:
            stack.pop()
            on_path.discard(id(o))
            done.add(id(o))
            continue
        if (isinstance(r, types.FrameType) or r is stack or id(r) in done
                or id(r) in exclude):
            continue
        if id(r) in on_path:
            return True
        count += 1
        on_path.add(id(r))
        stack.append((r, iter(gc.get_referrers(r))))
    return False
