"""Compiled regions with autograd history: the PyTorch idiom (``model = compile(model)``,
``loss.backward()`` outside), as torch.compile's AOTAutograd does it.

At capture, once the function returned, the backward of the captured forward is recorded into
the same graph by walking the eager graph the capture call built, every rule traced through
the DIFF namespace (``Capture._node_vjp``, the machinery of a whole-step capture), with one
gradient input per differentiable output. The walk stops at the region's boundary: the
leaves (parameters, leaf inputs) and the nodes of non-leaf inputs and externals. That joint
graph is split (``partition``) into a forward graph, which also returns the values the
backward needs, and a backward graph, which takes the output gradients and those values;
cheap elementwise and movement values are recomputed in the backward instead of saved when
that does not save more bytes than it drops (``_plan_saves``). Both graphs go through the
passes (fusion, memory plan) like any graph.

Each replay makes one ``CompiledFunctionBackward`` node (torch's name) whose edges are the
region's inputs and captured tensors that require grad; the eager engine runs it like any
node, so hooks, ``.grad`` accumulation, ``retain_graph`` and ``autograd.grad`` behave as
eager. See docs/compiler.md ("Compiled regions").
"""

from __future__ import annotations

import threading
import warnings
from weakref import ref as _weakref

import numpy as np

from .. import _step as _steps
from .._tensor import Tensor, version_cell, wrap
from ..autograd.engine import hand_over
from ..autograd.grad_mode import state as _mode
from ..autograd.graph import FREED, AccumulateGrad, Freed, OutputEdge, Slots, next_sequence
from ..autograd.graph import node_class as _node_class
from ..ops._namespace import RAW
from ..ops._opdef import OpDef
from .ir import Graph, Instr, Value
from .trace import GraphBreak

__all__ = ["Region", "NoRegion", "derive", "partition", "REGION_OP", "region_outputs",
           "stepped_outputs"]


class NoRegion(Exception):
    """The backward of this capture cannot be compiled (the reason is the message): the
    variant runs eagerly."""


# -- the node ----------------------------------------------------------------------------
class _Saved:
    """What one region node keeps for its backward: the arrays the backward graph takes after
    the output gradients, and the call (for the create_graph fallback). ``node`` (a weak
    reference: no cycle) and ``box`` (the node's ``_saved`` tuple) tell the backward whether
    the engine still keeps them (retain_graph)."""

    __slots__ = ("region", "arrays", "call", "node", "box")

    def __init__(self, region, arrays, call):
        self.region = region
        self.arrays = arrays
        self.call = call


class _In:
    """An array in the place of a tensor for ``Executor.run`` (it reads ``._data``)."""

    __slots__ = ("_data",)

    def __init__(self, a):
        self._data = a


def _region_vjp(ns, g, saved):
    region = saved.region
    if ns is not RAW:  # backward(create_graph=True): see _eager_backward
        return _eager_backward(saved, g)
    if type(g) is Slots:
        gs = [x if x is not None else np.zeros(m[0], m[1])
              for x, m in zip(g.grads, region.seed_meta)]
    else:
        gs = [g]
    ins = gs + saved.arrays
    node = saved.node()
    if node is None or node._saved is not saved.box:
        # The engine already released this node's saved values (no retain_graph): the
        # backward consumes them, freeing each after its last use.
        saved.arrays = ()
    held = None
    if region.private or region.check_ins:
        held = {id(a) for a in ins}
        held.update(id(a.base) for a in ins if a.base is not None)
    with region.lock:
        res = region.bwd.run_arrays(ins)
    del ins
    if region.private:
        _hand_over_views(region.private, res, held)
    if region.any_copy:
        res = list(res)
        for i, c in enumerate(region.copy):
            r = res[i]
            if c == 1 or (c == 2 and (id(r) in region.const_ids or id(r) in held)):
                res[i] = np.array(r, copy=True)
    return tuple(res)


REGION_OP = OpDef("compiled_region", None, _region_vjp, kind="opaque", save=("saved",),
                  dtype_rule="same", node=None, needs_mask=False, onnx=None)
_NODE = _node_class("CompiledFunctionBackward")


def _new_node(edges, metas, saved, versions):
    node = _NODE()
    node._op = REGION_OP
    node._next = edges
    node._meta = metas
    node._params = None
    node._seq = next_sequence()
    node._step = step = _steps._count  # counted per training step, as the dispatcher's nodes
    _steps.live_nodes[step] += 1
    node._extra = None
    node._site = None
    node._saved = saved
    node._versions = versions
    return node


def _edge(t):
    fn = t._fn
    if fn is not None:
        return fn
    return t._accumulator() if t._rg else None


def _output_edge(node, i, n):
    from ..autograd.function import _output_edge as make

    return make(node, i, n)


def _eager_backward(saved, g):
    """create_graph=True through a region: the compiled backward has no graph of its own, so
    the function is run again eagerly on the same inputs and differentiated with
    create_graph (correct higher-order gradients, at the cost of a second forward)."""
    from ..autograd import engine

    region = saved.region
    if region.random:
        raise RuntimeError("graphgrad.compile: backward(create_graph=True) through a compiled "
                           "region that draws random numbers (dropout, rand) is not supported: "
                           "a re-run would draw different numbers; call the function "
                           "uncompiled for higher-order gradients")
    warnings.warn("graphgrad.compile: backward(create_graph=True) through a compiled region: "
                  "its compiled backward is first-order only, so the function is re-run "
                  "eagerly to build a differentiable backward", UserWarning, stacklevel=4)
    args, kwargs, leaves = saved.call
    from .capture import flatten

    with _GradOn():
        result = region.fn(*args, **kwargs)
    outs: list = []
    flatten(result, outs)
    diff = [outs[k] for k in region.diff]
    grads = list(g.grads) if type(g) is Slots else [g]
    grads = [x if x is not None else wrap(np.zeros(m[0], m[1]), False, None)
             for x, m in zip(grads, region.seed_meta)]
    targets = [leaves[ref] if kind == "in" else ref for kind, ref in region.targets]
    res = engine.grad(diff, targets, grads, retain_graph=True, create_graph=True,
                      allow_unused=True)
    return tuple(res)


class _GradOn:
    def __enter__(self):
        self.prev = _mode.grad_enabled
        _mode.grad_enabled = True

    def __exit__(self, *exc):
        _mode.grad_enabled = self.prev


# -- the compiled region --------------------------------------------------------------------
class Region:
    """The compiled backward of one variant and how a replay wires its outputs to it.

    ``diff``: positions (in the flattened outputs) of the outputs that carry the region node;
    ``n_out``: forward outputs before the saved temps; ``free``: saved tensors read at call
    time (("in", k): the k-th flattened input, ("ext", tensor)); ``targets``: the node's
    edges in the same notation; ``checked``: saved tensors whose version the backward checks,
    and ``out_checked``: outputs whose memory a saved value shares."""

    def __init__(self, fn, bwd, diff, n_out, free, targets, metas, seed_meta, copy,
                 checked, out_checked, random, bwd_graph, saved_count):
        self.fn = fn
        self.bwd = bwd
        self.diff = diff
        self.n_out = n_out
        self.free = free
        self.targets = targets
        self.metas = metas
        self.seed_meta = seed_meta
        self.copy = copy
        self.any_copy = any(copy)
        self.check_ins = 2 in copy  # some output may be an input array: checked per call
        # outputs that are views of this call's own arrays (a transposed weight gradient):
        # handed to the engine as private, so that it keeps them as .grad without a copy
        self.private = tuple(i for i, c in enumerate(copy) if c == 0
                             and _viewed(bwd_graph, bwd_graph.outputs[i]))
        self.const_ids = frozenset(id(v.data) for v in bwd_graph.consts)
        self.checked = checked
        self.out_checked = out_checked
        self.random = random
        self.bwd_graph = bwd_graph
        self.saved_count = saved_count
        self.lock = threading.Lock()  # the backward's planned buffers serve one call at a time

    def outputs(self, arrays, leaves, args, kwargs, out_objects):
        """The call's output tensors from the forward's arrays (outputs, then saved temps)."""
        n = self.n_out
        saved = list(arrays[n:])
        for kind, ref in self.free:
            saved.append(leaves[ref]._data if kind == "in" else ref._data)
        edges = tuple([_edge(leaves[ref]) if kind == "in" else _edge(ref)
                       for kind, ref in self.targets])
        versions = []
        for kind, ref in self.checked:
            cell = version_cell(leaves[ref] if kind == "in" else ref)
            versions.append((cell, cell[0]))
        outs = list(out_objects[:n])
        for k, i in self.passthrough.items():
            outs[k] = leaves[i]
        diff = self.diff
        node = _new_node(edges, self.metas, None, None)
        holder = _Saved(self, saved, (args, kwargs, leaves))
        holder.box = node._saved = (holder,)
        holder.node = _weakref(node)
        nd = len(diff)
        for j, k in enumerate(diff):
            t = wrap(arrays[k], True, node if nd == 1 else _output_edge(node, j, nd))
            if k in self.out_checked:
                cell = t._vc = [0]
                versions.append((cell, 0))
            outs[k] = t
        for i in range(n):
            if outs[i] is None:
                outs[i] = wrap(arrays[i], False, None)
        node._versions = tuple(versions) if versions else None
        return outs


def region_outputs(region, arrays, leaves, args, kwargs, out_objects):
    return region.outputs(arrays, leaves, args, kwargs, out_objects)


# A whole step's outputs (backward ran inside): their graph was consumed by that backward, so
# a second backward through them raises eager's "backward through the graph a second time".
_STEP_OP = OpDef("compiled_step", None, None, kind="opaque", save=("saved",),
                 dtype_rule="same", node=None, needs_mask=False, onnx=None)


def stepped_outputs(rg, outs):
    """Replaces the outputs at positions ``rg`` by tensors carrying one consumed region node."""
    if not rg:
        return outs
    node = _new_node((), (), FREED, None)
    node._op = _STEP_OP
    outs = list(outs)
    for k in rg:
        outs[k] = wrap(outs[k]._data, True, node)
    return outs


# -- capture: the joint graph -------------------------------------------------------------------
class Joint:
    """The backward recorded after the forward in ``cap.graph``: instrs from ``n_fwd`` on."""

    def __init__(self, n_fwd, n_in, seeds, diff, targets, grad_vals, seed_meta):
        self.n_fwd = n_fwd
        self.n_in = n_in
        self.seeds = seeds
        self.diff = diff
        self.targets = targets
        self.grad_vals = grad_vals
        self.seed_meta = seed_meta


def derive(cap, outs, leaves):
    """Records the backward of what ``cap`` captured into its graph (see the module
    docstring); returns a Joint, or None when no output needs a gradient. Raises NoRegion."""
    from .capture import _n_outputs

    graph = cap.graph
    out_vals = graph.outputs
    diff = []
    for k, (t, v) in enumerate(zip(outs, out_vals)):
        if not t._rg:
            continue
        if v.kind == "const":
            raise NoRegion("an output that requires grad is a leaf tensor created inside the "
                           "function")
        if v.kind != "temp" or t._fn is None:
            continue  # an input or captured tensor returned as is keeps its own history
        if t._data.dtype.kind != "f":
            raise NoRegion("a complex output that requires grad")
        diff.append(k)
    if not diff:
        return None
    n_fwd, n_in = len(graph.instrs), len(graph.inputs)
    bound = {}
    for t in list(leaves) + [v.data for v in graph.externals]:
        if isinstance(t, Tensor) and t._rg and t._fn is not None:
            bound[t._fn] = t
    seeds, roots, seed_meta = [], [], []
    for k in diff:
        t = outs[k]
        s = wrap(np.ones(t._data.shape, t._data.dtype), False, None)
        seeds.append(cap.input(s, f"grad{k}"))
        seed_meta.append((t._data.shape, t._data.dtype))
        roots.append((t._fn, s))
    order = _topo_bounded([n for n, _ in roots], bound)
    buffers: dict = {}
    for node, g in roots:
        buffers[node] = buffers[node] + g if node in buffers else g
    got: dict = {}
    prev = _mode.grad_enabled
    _mode.grad_enabled = False
    try:
        for node in order:
            g = buffers.pop(node, None)
            if g is None:
                continue
            if type(node) is AccumulateGrad or node in bound:
                t = node.variable if type(node) is AccumulateGrad else bound[node]
                got[id(t)] = (t, g)
                continue
            if node._extra is not None or getattr(node, "_op", None) is None \
                    or node._op is REGION_OP or node._op is _STEP_OP:
                raise NoRegion("its backward runs through a hook, retain_grad or another "
                               "compiled region")
            if type(node._saved) is Freed:
                raise NoRegion("its graph was already freed by a backward inside it")
            if type(node) is OutputEdge:
                slots = [None] * _n_outputs(node)
                slots[node._nr] = g
                child = node._node
                gs = Slots(slots)
                buffers[child] = buffers[child] + gs if child in buffers else gs
                continue
            grads = cap._node_vjp(node, g)
            for child, gi in zip(node._next, grads):
                if child is None or gi is None:
                    continue
                buffers[child] = buffers[child] + gi if child in buffers else gi
    except GraphBreak as err:
        raise NoRegion(f"its backward cannot be recorded: {err}") from None
    finally:
        _mode.grad_enabled = prev
    if cap.breaks:
        raise NoRegion(f"its backward cannot be recorded: {cap.breaks[0]}")
    targets, grad_vals = [], []
    for t, g in got.values():
        tv = cap.amap.get(id(t._data))
        if tv is None or tv.kind not in ("input", "external"):
            raise NoRegion("a gradient for a leaf tensor created inside the function")
        if tv.kind == "input":
            targets.append(("in", graph.inputs.index(tv)))
        else:
            targets.append(("ext", t))
        grad_vals.append(cap.value(g._data, g))
    for instr in graph.instrs[n_fwd:]:
        if instr.effect:
            raise NoRegion(f"its backward has an effect ({instr.name})")
    return Joint(n_fwd, n_in, seeds, diff, targets, grad_vals, seed_meta)


def _topo_bounded(roots, stop):
    """Nodes reachable from ``roots`` without passing through a leaf or a node of ``stop``,
    each after every node that sends it gradients."""
    deps, seen, stack = {}, set(), list(dict.fromkeys(roots))
    seen.update(stack)
    i = 0
    while i < len(stack):
        n = stack[i]
        i += 1
        if n in stop or type(n) is AccumulateGrad:
            continue
        for c in getattr(n, "_next", ()) or ():
            if c is None:
                continue
            deps[c] = deps.get(c, 0) + 1
            if c not in seen:
                seen.add(c)
                stack.append(c)
    ready = [n for n in dict.fromkeys(roots) if n not in deps]
    order = []
    while ready:
        n = ready.pop()
        order.append(n)
        if n in stop or type(n) is AccumulateGrad:
            continue
        for c in getattr(n, "_next", ()) or ():
            if c is None:
                continue
            deps[c] -= 1
            if not deps[c]:
                ready.append(c)
    return order


# -- the split ----------------------------------------------------------------------------------
_MAX_RECOMPUTE = 256  # instrs recomputed for one saved value at most


def _recomputable(instr) -> bool:
    """Pure, cheap, shape-preserving work the backward may redo instead of keeping its result:
    elementwise ops, casts and movement ops (views)."""
    if instr.dyn is not None or instr.aux is not None:
        return False
    if instr.special:
        return instr.op == "cast"
    return instr.op.kind in ("elementwise", "movement")


def _plan_saves(needed, producer):
    """(saved temps, recomputed instrs). A needed temp made by recomputable instrs is
    recomputed when the values its recomputation must keep instead (temps not already kept;
    inputs, captured tensors and consts are free) take no more bytes than it does."""
    saved: dict = {}
    recompute: set = set()
    for v in needed:
        if v.kind != "temp" or v in saved:
            continue
        instr = producer[v]
        if instr in recompute:
            continue
        if not _recomputable(instr):
            saved[v] = None
            continue
        todo, seen, front = [v], set(), {}
        while todo and len(seen) <= _MAX_RECOMPUTE:
            w = todo.pop()
            if w.kind != "temp" or w in saved:
                continue
            p = producer[w]
            if p in recompute or p in seen:
                continue
            if _recomputable(p):
                seen.add(p)
                todo.extend(p.values())
            else:
                front[w] = None
        cost = sum(w.nbytes for w in front)
        if len(seen) <= _MAX_RECOMPUTE and cost <= v.nbytes:
            recompute |= seen
            saved.update(front)
        else:
            saved[v] = None
    return list(saved), recompute


def partition(graph, joint):
    """Splits the joint graph in place: ``graph`` keeps the forward (returning its outputs,
    then the saved temps); returns (backward Graph, saved temps, free values) where the
    backward takes the output gradients, the saved temps, then the free values (inputs and
    captured tensors, read at call time) and returns one gradient per target."""
    fwd, bwd = graph.instrs[:joint.n_fwd], graph.instrs[joint.n_fwd:]
    producer = {o: instr for instr in fwd for o in instr.outs if o is not None}
    seeds = set(joint.seeds)
    bdef = {o for instr in bwd for o in instr.outs if o is not None}
    needed: dict = {}

    def need(v):
        if v not in bdef and v not in seeds and v.kind != "const":
            needed[v] = None
    for instr in bwd:
        for v in instr.values():
            need(v)
    for v in joint.grad_vals:
        need(v)
    saved, recompute = _plan_saves(list(needed), producer)
    redo = [instr for instr in fwd if instr in recompute]
    order = _just_in_time(redo, bwd, joint.grad_vals)
    free: dict = {}
    for instr in redo + bwd:
        for v in instr.values():
            if v.kind in ("input", "external") and v not in seeds:
                free[v] = None
    for v in joint.grad_vals:
        if v.kind in ("input", "external") and v not in seeds:
            free[v] = None
    bg = Graph()
    m: dict = {}
    for s in joint.seeds:
        m[s] = bg.new_value(s.shape, s.dtype, "input", None, s.name)
    for v in saved + list(free):
        m[v] = bg.new_value(v.shape, v.dtype, "input", None, v.name)

    def mapv(x):
        if not isinstance(x, Value):
            return x
        y = m.get(x)
        if y is None:
            if x.kind != "const":
                raise NoRegion(f"internal: value {x!r} missing from the backward")
            y = m[x] = bg.new_value(x.shape, x.dtype, "const", x.data, x.name)
        return y
    for instr in order:
        outs = []
        for o in instr.outs:
            if o is None:
                outs.append(None)
            else:
                outs.append(bg.new_value(o.shape, o.dtype, "temp"))
                m[o] = outs[-1]
        bg.instrs.append(Instr(instr.op, [mapv(x) for x in instr.ins], outs, instr.params,
                               fn=instr.fn, target=instr.target, site=instr.site,
                               label=instr.label, dyn=instr.dyn, aux=instr.aux))
    bg.outputs = [mapv(v) for v in joint.grad_vals]
    graph.instrs = fwd
    graph.inputs = graph.inputs[:joint.n_in]
    graph.outputs = list(graph.outputs) + saved
    return bg, saved, list(free)


def _viewed(graph, v):
    """True when ``v`` is made by a movement op (a view, possibly of this call's own array)."""
    for instr in graph.instrs:
        if v in instr.outs:
            return not instr.special and instr.op.kind == "movement"
    return False


def _hand_over_views(private, res, held):
    """Hands the engine the outputs that are C-ordered views covering a whole array that
    neither an input (ids in ``held``) nor another output holds (see Note [Private gradients]
    in engine.py)."""
    held = set(held)
    for k, r in enumerate(res):
        if k not in private:
            held.add(id(r))
            b = getattr(r, "base", None)
            if b is not None:
                held.add(id(b))
    seen = set()
    for i in private:
        r = res[i]
        b = r.base
        if (b is None or b.base is not None or b.size != r.size or id(b) in held
                or id(b) in seen or not r.flags.c_contiguous):
            continue
        seen.add(id(b))
        hand_over(r)


def _just_in_time(redo, bwd, grad_vals):
    """The backward's schedule: each recomputed instr right before the first instr that reads
    it (so its value is not held through the whole backward), in forward order."""
    first: dict = {}
    for i, instr in enumerate(bwd):
        for v in instr.values():
            first.setdefault(v, i)
    for v in grad_vals:
        first.setdefault(v, len(bwd))
    pos: dict = {}
    for instr in reversed(redo):
        p = min((first.get(o, len(bwd)) for o in instr.outs if o is not None),
                default=len(bwd))
        pos[instr] = p
        for v in instr.values():
            if first.get(v, len(bwd) + 1) > p:
                first[v] = p
    slots: list = [[] for _ in range(len(bwd) + 1)]
    for instr in redo:
        slots[pos[instr]].append(instr)
    order = []
    for i in range(len(bwd) + 1):
        order.extend(slots[i])
        if i < len(bwd):
            order.append(bwd[i])
    return order


def alias_root(graph, v):
    """The value whose memory ``v`` may share, following view-like producers."""
    producer = {o: instr for instr in graph.instrs for o in instr.outs if o is not None}
    seen = set()
    while v in producer and v not in seen:
        seen.add(v)
        instr = producer[v]
        aliasing = instr.op in ("vjp", "load", "opaque") if instr.special else instr.may_alias
        vals = instr.values()
        if not aliasing or not vals:
            break
        v = vals[0]
    return v


def copies_needed(bg):
    """For each backward output: 1 when its array is memory the backward does not own (an
    input or a const), 2 when it may be one (a view-like producer: checked per call), else 0.
    The engine may keep a gradient as ``.grad`` and add into it in place."""
    out = []
    for v in bg.outputs:
        if v.kind != "temp":
            out.append(1)
        else:
            out.append(2 if alias_root(bg, v).kind != "temp" else 0)
    return out


def compile_region(cap, fn, compile_graph, leaves):
    """Splits ``cap``'s joint graph and compiles both halves. Returns (forward runner, pass
    report, Region, the capture call's saved arrays); raises NoRegion."""
    joint, graph = cap.joint, cap.graph
    n_out = len(graph.outputs)
    out_vals = list(graph.outputs)
    bg, saved, free = partition(graph, joint)
    rev: dict = {}
    for a in cap.keep:
        if type(a) is np.ndarray:
            v = cap.amap.get(id(a))
            if v is not None and v not in rev:
                rev[v] = a
    try:
        saved_now = [rev[v] for v in saved]
    except KeyError:
        raise NoRegion("a value its backward needs has no array at capture") from None

    def ref(v):
        return ("in", graph.inputs.index(v)) if v.kind == "input" else ("ext", v.data)
    free_refs = [ref(v) for v in free]
    checked = {}
    for v in free:
        checked[id(v)] = ref(v)
    roots = {}
    for v in saved:
        r = alias_root(graph, v)
        roots[r] = None
        if r.kind in ("input", "external"):
            checked[id(r)] = ref(r)
    out_checked = frozenset(k for k in joint.diff if alias_root(graph, out_vals[k]) in roots)
    random = any(i.op == "random" for i in graph.instrs)
    metas = []
    for kind, r in joint.targets:
        t = leaves[r] if kind == "in" else r
        metas.append((t._data.shape, t._data.dtype))
    bwd_text = bg.format()
    fwd_runner, report = compile_graph(graph)
    bwd_runner, breport = compile_graph(bg)
    region = Region(fn, bwd_runner, joint.diff, n_out, free_refs, joint.targets, tuple(metas),
                    joint.seed_meta, copies_needed(bg), list(checked.values()), out_checked,
                    random, bg, len(saved))
    region.passthrough = {k: graph.inputs.index(v) for k, v in enumerate(out_vals)
                          if v.kind == "input"}
    region.bwd_text = bwd_text
    region.bwd_report = breport
    return fwd_runner, report, region, saved_now
