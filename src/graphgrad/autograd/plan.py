"""``graphgrad.autograd.plan(loss)``: what ``loss.backward()`` will cost, read off the live graph
before it runs.

The engine's order is simulated node by node (autograd/engine.py: dependency counts, a stack
that walks depth-first): each node's incoming gradient buffer, the buffers its rule makes for
its inputs (sums of several contributions make a new one), the ``.grad`` arrays the leaves get,
and, without ``retain_graph``, the saved values each node releases. A saved array is counted as
freed only where nothing outside the graph holds it (reference counts), at the last node that
holds it. The peak of that running total, plus the bytes alive now, is ``peak_bytes``;
``peak_tracked_bytes`` leaves out the engine's gradient buffers (plain arrays that
``memory.max_allocated()`` does not see). Rules' own temporaries (a convolution's unfolded
input) are not counted. FLOPs are estimates per op kind (matmul, convolution, recurrent
layers, elementwise). For each module called in the forward (``Module.__call__`` stamps the
sequence numbers at its call and return), what ``utils.checkpoint`` on it would save (the
storage its nodes saved, less its inputs and parameters) and cost (its forward FLOPs again).
"""

from __future__ import annotations

import os
import sys

import numpy as np

from .._tensor import Tensor
from .graph import AccumulateGrad, Freed, OutputEdge

__all__ = ["plan", "BackwardPlan"]

# Rules that hand their incoming gradient on unchanged or as a view: no new buffer.
_ALIASING = {"AddBackward0", "ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0",
             "TBackward0", "TransposeBackward0", "PermuteBackward0", "SqueezeBackward0",
             "SqueezeBackward1", "UnsqueezeBackward0", "AliasBackward0", "CloneBackward0",
             "ExpandBackward0", "SumBackward0", "MeanBackward0", "SelectBackward0",
             "SplitBackward0", "ChunkBackward0", "UnbindBackward0"}
_MATMUL = {"MmBackward0", "AddmmBackward0", "BmmBackward0", "MatmulBackward0",
           "BaddbmmBackward0", "MvBackward0"}
# Rules that return views of a zero-size or broadcast gradient (sum, mean): their buffers cost
# nothing until a later rule makes a full array from them.
_BROADCASTING = {"SumBackward0", "MeanBackward0", "ExpandBackward0"}


def _nbytes(meta) -> int:
    shape, dtype = meta
    try:
        return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    except (TypeError, ValueError):  # a custom Function's per-output slots
        return 0


def _numel(shape) -> int:
    try:
        return int(np.prod(shape, dtype=np.int64))
    except (TypeError, ValueError):  # a custom Function's per-output slots
        return 0


def _workspace(node, out_shape) -> int:
    """Bytes a rule makes for itself while it runs: a convolution's unfolded input."""
    name = type(node).__name__
    if name in _ALIASING or out_shape is None:
        return 0
    if not name.startswith("Convolution"):
        if name in _MATMUL or name.startswith(("Lstm", "Gru", "Rnn")):
            return 0
        # elementwise rules make about one temporary the size of their output
        return _numel(out_shape) * np.dtype(node._meta[0][1]).itemsize if node._meta and \
            node._meta[0] is not None else 0
    try:
        dtype, w = node._meta[0][1], node._meta[1][0]
        cols = _numel(out_shape) // w[0] * _numel(w[1:])
        return cols * np.dtype(dtype).itemsize
    except (TypeError, IndexError, ZeroDivisionError):
        return 0


def _forward_flops(node, out_shape) -> int:
    """Forward FLOPs of ``node``'s op, from its inputs' metadata and its output's shape."""
    name = type(node).__name__
    shapes = [m[0] if m is not None else () for m in node._meta]
    try:
        if name in _MATMUL:
            a, b = shapes[-2], shapes[-1]
            k = a[-1] if len(a) else 1
            return 2 * k * _numel(out_shape) if out_shape is not None else 2 * _numel(a) * (
                b[-1] if len(b) > 1 else 1)
        if name.startswith("Convolution") or name.startswith("Conv"):
            w = shapes[1]
            per_out = 2 * _numel(w[1:])  # input channels per group x kernel
            if out_shape is not None:
                return per_out * _numel(out_shape)
            return per_out * _numel(shapes[0]) * w[0] // max(w[1], 1)
        if name.startswith("Lstm") or name.startswith("Gru") or name.startswith("Rnn"):
            x = shapes[0]
            gates = sum(_numel(s) for s in shapes[1:3] if s)  # W_ih and W_hh
            steps_batch = _numel(x[:-1]) if len(x) > 1 else 1
            return 2 * steps_batch * gates + 10 * steps_batch * (shapes[1][0] if shapes[1]
                                                                  else 0)
    except (IndexError, TypeError):
        pass
    # Elementwise and the rest: one operation per element of the output (or of the largest
    # input, for reductions).
    sizes = [_numel(s) for s in shapes if s is not None]
    return max([_numel(out_shape) if out_shape is not None else 0] + sizes)


def _backward_flops(node, fwd) -> int:
    """A product's backward costs one forward per operand that needs a gradient."""
    name = type(node).__name__
    nxt = node._next
    if name in _MATMUL:
        return fwd * sum(c is not None for c in nxt[-2:])
    if name.startswith("Convolution"):
        return fwd * sum(c is not None for c in nxt[:2])
    if name.startswith(("Lstm", "Gru", "Rnn")):
        return 2 * fwd
    return fwd


class _Storage:
    __slots__ = ("nbytes", "holders", "free", "external", "line")

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.holders = []  # nodes whose saved values reach it
        self.free = True  # released by this backward
        self.external = False  # held outside the graph too
        self.line = None


class ModuleCost:
    """What ``utils.checkpoint`` on one module would change in this backward."""

    def __init__(self, name, kind, saved_bytes, recompute_flops, nodes):
        self.name = name
        self.kind = kind
        self.saved_bytes = saved_bytes
        self.recompute_flops = recompute_flops
        self.nodes = nodes

    def __repr__(self):
        return (f"ModuleCost({self.name!r}, saved_bytes={self.saved_bytes}, "
                f"recompute_flops={self.recompute_flops})")


class BackwardPlan:
    """What plan() found; ``str()`` is a readable table."""

    def __init__(self):
        self.nodes = 0
        self.baseline_bytes = 0
        self.peak_bytes = 0
        self.peak_tracked_bytes = 0
        self.peak_at = None  # the op running at the peak
        self.saved_bytes = 0
        self.freed_bytes = 0
        self.grad_bytes = 0
        self.flops = 0
        self.forward_flops = 0
        self.saved_by_line: list = []  # [(line or "line unknown", bytes, count)]
        self.modules: list = []  # [ModuleCost]
        self.retain_graph = False
        self.sites_known = False

    def __str__(self):
        f = _fmt
        lines = [f"backward plan: {self.nodes} nodes, {self.flops / 1e6:.2f} MFLOP "
                 f"(forward {self.forward_flops / 1e6:.2f} MFLOP)",
                 f"  peak {f(self.peak_bytes)} ({f(self.baseline_bytes)} alive now + "
                 f"{f(self.peak_bytes - self.baseline_bytes)} at {self.peak_at or '-'}); "
                 f"without gradient buffers {f(self.peak_tracked_bytes)}",
                 f"  saved tensors {f(self.saved_bytes)}, of which backward frees "
                 f"{f(self.freed_bytes)}" + (" (retain_graph: none)" if self.retain_graph
                                             else "") + f"; new .grad {f(self.grad_bytes)}",
                 "  saved by line:"]
        for line, n, count in self.saved_by_line[:10]:
            lines.append(f"    {f(n):>10}  {count:4d} tensors  {line}")
        if not self.sites_known:
            lines.append("    (lines unknown: call "
                         "graphgrad.autograd.graph.set_capture_sites(True) "
                         "before the forward)")
        if self.modules:
            lines.append("  checkpoint candidates (utils.checkpoint on the module):")
            lines.append(f"    {'module':30s} {'saves':>10} {'recompute':>14}")
            for m in self.modules[:10]:
                lines.append(f"    {(m.name + ' (' + m.kind + ')')[:30]:30s} "
                             f"{f(m.saved_bytes):>10} {m.recompute_flops / 1e6:>9.2f} MFLOP")
        return "\n".join(lines)

    __repr__ = __str__


def _fmt(n) -> str:
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _site_text(site) -> str:
    return f"{os.path.basename(site.filename)}:{site.lineno}: {site.source()}"


def _root_storage(a):
    base = a.base
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return base if isinstance(base, np.ndarray) else a


def _graph(root):
    nodes, seen, stack = [], {id(root)}, [root]
    while stack:
        n = stack.pop()
        nodes.append(n)
        for c in n._next:
            if type(c) is OutputEdge:
                c = c._node
            if c is not None and id(c) not in seen:
                seen.add(id(c))
                stack.append(c)
    return nodes


def _order(root):
    """The nodes in the order the engine runs them (its _execute without hooks' effects), with
    the incoming gradient's metadata of each."""
    deps, stack, seen = {}, [root], {root}
    while stack:
        node = stack.pop()
        for child in node._next:
            if child is None:
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        if type(node) is AccumulateGrad:
            continue
        for child in node._next:
            if child is None:
                continue
            d = deps[child] - 1
            deps[child] = d
            if not d:
                ready.append(child)
    return order


def _saved_storages(nodes, retain):
    """{id(root array): _Storage} of what the nodes saved, each marked free or kept."""
    storages, roots = {}, {}
    leaf_roots = {id(_root_storage(n.variable._data)) for n in nodes
                  if type(n) is AccumulateGrad}
    occ = {}  # id(obj) -> [obj, occurrences in saved slots]
    for n in nodes:
        saved = n._saved
        if type(n) is AccumulateGrad or not saved or type(saved) is Freed:
            continue
        for v in saved:
            if isinstance(v, Tensor):
                arr = v._data
            elif type(v) is np.ndarray:
                arr = v
            else:
                continue
            if not arr.nbytes:
                continue
            e = occ.get(id(v))
            if e is None:
                occ[id(v)] = [v, 1]
            else:
                e[1] += 1
            r = _root_storage(arr)
            s = storages.get(id(r))
            if s is None:
                s = storages[id(r)] = _Storage(r.nbytes)
                roots[id(r)] = r
                # the line that made it: its producer's (a saved output's is the holder's)
                made_by = v._fn if isinstance(v, Tensor) else n
                if type(made_by) is OutputEdge:
                    made_by = made_by._node
                if made_by is None or id(r) in leaf_roots:
                    s.line = "leaves (parameters and inputs)"
                elif made_by._site is not None:
                    s.line = _site_text(made_by._site)
            s.holders.append(n)
            if retain or not n._op.frees:
                s.free = False
    v = arr = r = s = e = None
    # A saved object dies at release when its only references are the graph's slots. Held
    # here: its occ entry, the loop variable and getrefcount's argument.
    dying_arrays = {}  # id(array) -> [array, references to it that vanish with the graph]
    for key, (obj, count) in occ.items():
        if isinstance(obj, Tensor):
            if sys.getrefcount(obj) - 3 > count:
                continue  # held outside the graph
            arr = obj._data
            dying_arrays.setdefault(id(arr), [arr, 0])[1] += 1
        else:
            dying_arrays.setdefault(key, [obj, 0])[1] += count
    obj = arr = None

    def held_here(key):
        # this call's references: getrefcount's argument, the local, dying_arrays and occ
        return 2 + (key in dying_arrays) + (key in occ)

    # Views die with their holders and then release their root.
    extra = {}
    for key, (arr, refs) in dying_arrays.items():
        r = _root_storage(arr)
        if r is not arr and sys.getrefcount(arr) - held_here(key) <= refs:
            extra[id(r)] = extra.get(id(r), 0) + 1
    arr = r = None
    for key, st in storages.items():
        r = roots[key]
        dying = dying_arrays.get(key, (None, 0))[1] + extra.get(key, 0)
        # roots holds one more reference
        if sys.getrefcount(r) - held_here(key) - 1 > dying:
            st.free, st.external = False, True
        r = None
    return storages


def plan(loss, retain_graph=None, module=None) -> BackwardPlan:
    """What ``loss.backward(retain_graph=...)`` will cost, before it runs; ``module`` (default:
    the outermost modules whose parameters the graph uses) names the checkpoint candidates.

    >>> import graphgrad as torch
    >>> w = torch.ones(256, 256, requires_grad=True)
    >>> p = torch.autograd.plan((torch.ones(8, 256) @ w).tanh().sum())
    >>> p.flops > 2 * 8 * 256 * 256, p.grad_bytes
    (True, 262144)
    """
    from ..diagnostics import ledger

    rep = BackwardPlan()
    root = loss.grad_fn
    rep.baseline_bytes = ledger.allocated()
    rep.retain_graph = bool(retain_graph)
    if root is None:
        rep.peak_bytes = rep.peak_tracked_bytes = rep.baseline_bytes
        return rep
    nodes = _graph(root)
    rep.nodes = len(nodes)
    storages = _saved_storages(nodes, rep.retain_graph)
    rep.sites_known = any(n._site is not None for n in nodes if type(n) is not AccumulateGrad)
    rep.saved_bytes = sum(s.nbytes for s in storages.values())
    # Each node's output shape, from the metadata of the edges that consume it.
    out_meta = {root: (tuple(loss.shape), loss._data.dtype)}
    for n in nodes:
        for c, m in zip(n._next, n._meta):
            if c is not None and m is not None:
                out_meta.setdefault(c._node if type(c) is OutputEdge else c, m)
    order = _order(root)
    position = {n: i for i, n in enumerate(order)}
    release_at = {}  # position -> bytes freed after that node
    for s in storages.values():
        if s.free:
            at = max(position.get(h, -1) for h in s.holders)
            if at >= 0:
                release_at[at] = release_at.get(at, 0) + s.nbytes
                rep.freed_bytes += s.nbytes
    # Simulate: buffers[node] = bytes of the gradient waiting for it.
    buffers = {root: 0}  # the root's gradient (ones) is tiny or a scalar
    bufs = tracked = peak = peak_tracked = 0
    for i, node in enumerate(order):
        g = buffers.pop(node, 0)
        name = type(node).__name__
        if type(node) is AccumulateGrad:
            v = node.variable
            if v._grad is None:
                n = v._data.nbytes
                rep.grad_bytes += n
                tracked += n  # own() copies a view or a shared buffer: g is still alive
                if bufs + tracked > peak:
                    peak, rep.peak_at = bufs + tracked, name
            bufs -= g
        else:
            out_shape = out_meta.get(node, (None,))[0]
            fwd = _forward_flops(node, out_shape)
            rep.forward_flops += fwd
            rep.flops += _backward_flops(node, fwd)
            made, carried = 0, g if name in _ALIASING else 0
            for c, m in zip(node._next, node._meta):
                if c is None or m is None:
                    continue
                full = _nbytes(m)
                if name in _BROADCASTING:
                    gi = 0  # a broadcast view of a small gradient
                elif name in _ALIASING and g >= full:
                    gi, carried = carried, 0  # the same array handed on (to one child)
                else:
                    gi = full
                    made += gi
                if c in buffers:
                    # buffers[c] + gi: a new array of the full size replaces both
                    made += full - buffers[c] - gi
                    buffers[c] = full
                else:
                    buffers[c] = gi
            work = _workspace(node, out_shape)
            if bufs + max(made, 0) + work + tracked > peak:
                peak, rep.peak_at = bufs + max(made, 0) + work + tracked, name
            # g is released unless it was handed on
            bufs += made - (carried if name in _ALIASING else g)
            if name in _ALIASING:
                bufs -= 0
        if bufs + tracked > peak:
            peak, rep.peak_at = bufs + tracked, name
        tracked -= release_at.get(i, 0)
        peak_tracked = max(peak_tracked, tracked)
    rep.peak_bytes = rep.baseline_bytes + max(peak, 0)
    rep.peak_tracked_bytes = rep.baseline_bytes + max(peak_tracked, 0)
    by_line = {}
    for s in storages.values():
        key = s.line or "line unknown"
        n, count = by_line.get(key, (0, 0))
        by_line[key] = (n + s.nbytes, count + 1)
    rep.saved_by_line = sorted(((k, n, c) for k, (n, c) in by_line.items()),
                               key=lambda e: -e[1])
    rep.modules = _module_costs(nodes, storages, out_meta, module)
    return rep


def _module_costs(nodes, storages, out_meta, module):
    """For each module that ran (found through the parameters' owners), what checkpointing it
    would save: the storage only its nodes saved, less its parameters and its inputs."""
    from ..nn.modules.module import Module

    if module is not None:
        outer = [module]
    else:
        # The outermost modules that hold a parameter of the graph and ran in its forward.
        import gc

        leaves = {id(n.variable) for n in nodes if type(n) is AccumulateGrad}
        # type(), not isinstance: a lazy module's __class__ lookup can warn
        candidates = [m for m in gc.get_objects() if issubclass(type(m), Module)
                      and "_gg_returned" in m.__dict__
                      and any(id(p) in leaves for p in m.parameters())]
        inner = {id(sub) for m in candidates for sub in m.modules() if sub is not m}
        outer = [m for m in candidates if id(m) not in inner]
    modules, seen = [], set()
    in_graph = {id(n) for n in nodes}
    by_seq = sorted((n for n in nodes if type(n) is not AccumulateGrad), key=lambda n: n._seq)
    seqs = np.array([n._seq for n in by_seq], dtype=np.float64)
    node_storages = {}
    for key, s in storages.items():
        for h in s.holders:
            node_storages.setdefault(id(h), set()).add(key)
    for top in outer:
        for path, m in top.named_modules():
            if id(m) in seen:
                continue
            seen.add(id(m))
            called = m.__dict__.get("_gg_called")
            returned = m.__dict__.get("_gg_returned")
            if called is None or returned is None or returned < called[0] or not called[1]:
                continue
            lo, hi = np.searchsorted(seqs, [called[0], returned])
            inside = [n for n in by_seq[lo:hi] if id(n) in in_graph]
            if not inside:
                continue
            ids = {id(n) for n in inside}
            params = {id(_root_storage(p._data)) for p in m.parameters()}
            saved = set()
            for n in inside:
                saved |= node_storages.get(id(n), set())
            # Its inputs stay saved under checkpoint: storage also held by nodes outside it,
            # or made before it was called, is not saved by checkpointing.
            keep = set()
            for key in saved:
                s = storages[key]
                if key in params or s.external or any(id(h) not in ids for h in s.holders):
                    keep.add(key)
            for n in inside:
                for v in n._saved if type(n._saved) is tuple else ():
                    if isinstance(v, Tensor) and (v._fn is None or id(v._fn) not in ids):
                        keep.add(id(_root_storage(v._data)))  # an input: checkpoint keeps it
            nbytes = sum(storages[k].nbytes for k in saved - keep)
            flops = sum(_forward_flops(n, out_meta.get(n, (None,))[0]) for n in inside)
            modules.append(ModuleCost(path or type(m).__name__, type(m).__name__, nbytes,
                                      flops, len(inside)))
    modules.sort(key=lambda c: -c.saved_bytes)
    return modules
