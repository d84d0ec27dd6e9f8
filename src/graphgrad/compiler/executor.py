"""The executor: replays a Graph on raw arrays, with no Tensor objects, Nodes or dispatch.

The graph is lowered once to a schedule of (callable, input slots, output slots, slots to free)
over a list of slots; a call fills the input and external slots, runs the schedule in order and
frees each value after its last use. Effects (stores, gradient accumulation, optimizer steps)
run where they were recorded: the schedule never reorders instrs.
"""

from __future__ import annotations

import numpy as np

from .._tensor import bump_version, wrap

__all__ = ["Executor", "instr_callable"]

_ndarray = np.ndarray
_asarray = np.asarray


def instr_callable(instr, inputs=None):
    """The array callable that runs ``instr`` (``inputs`` resolves an input-position target)."""
    op = instr.op
    if op == "accumulate_grad":
        from .capture import accumulate_grad

        target = instr.target

        if isinstance(target, int):
            def acc(arr):
                return accumulate_grad(inputs[target], arr)
            return acc

        def acc_ext(arr):
            return accumulate_grad(target, arr)
        return acc_ext
    if op == "store":
        target = instr.target

        def store(arr):
            np.copyto(target._data, arr, casting="unsafe")
            bump_version(target)
        return store
    if op == "fused" and getattr(instr.fn, "kernel", None) is not None:
        return instr.fn.fast()
    return instr.kernel()


class Executor:
    """Runs ``graph`` (already through the passes). ``run(tensors)`` takes the flattened tensor
    inputs and returns the flattened outputs as arrays (or the external/input Tensor itself
    when an output is one)."""

    def __init__(self, graph):
        self.graph = graph
        slot = {}
        for v in graph.inputs + graph.externals + graph.consts:
            slot.setdefault(v, len(slot))
        for instr in graph.instrs:
            for o in instr.outs:
                if o is not None:
                    slot.setdefault(o, len(slot))
        self.nslots = len(slot)
        self.slot = slot
        self.input_slots = [slot[v] for v in graph.inputs]
        self.ext = [(slot[v], v.data) for v in graph.externals]
        self.template = [None] * len(slot)
        for v in graph.consts:
            self.template[slot[v]] = v.data
        # Liveness: the last instr reading each value (outputs live to the end).
        last = {}
        for i, instr in enumerate(graph.instrs):
            for v in instr.values():
                last[v] = i
        keep = set(graph.outputs) | set(graph.inputs) | set(graph.externals) | set(graph.consts)
        frees = [[] for _ in graph.instrs]
        for v, i in last.items():
            if v not in keep:
                frees[i].append(slot[v])
        for i, instr in enumerate(graph.instrs):
            for o in instr.outs:  # a value nobody reads is dropped at once
                if o is not None and o not in last and o not in keep:
                    frees[i].append(slot[o])
        self._inputs_box = []
        steps = []
        for i, instr in enumerate(graph.instrs):
            fn = instr_callable(instr, self._inputs_box)
            ins = tuple(slot[v] for v in instr.values())
            outs = [slot[o] if o is not None else -1 for o in instr.outs]
            out = outs[0] if len(outs) == 1 else (tuple(outs) if outs else None)
            steps.append((fn, ins, out, tuple(frees[i])))
        self.steps = steps
        self.out_slots = [slot[v] for v in graph.outputs]
        self.out_objects = [v.data if v.kind == "external" else None for v in graph.outputs]

        self._fast = _generate(self)
        self._raw = None

    def run_arrays(self, arrays):
        """``run`` on a list of arrays (not tensors) that the call consumes: the list is
        emptied once its arrays are in the replay's variables, so each is released after its
        last use (a region's backward frees saved activations as it goes)."""
        if self._raw is None:
            self._raw = _generate(self, raw=True)
        return self._raw(arrays)

    def run(self, tensors, keep_all=False):
        """Runs one call; ``keep_all`` returns every slot too (verify's divergence search)."""
        if not keep_all:
            return self._fast(tensors)
        s = list(self.template)
        box = self._inputs_box
        box[:] = tensors
        for idx, t in zip(self.input_slots, tensors):
            s[idx] = t._data
        for idx, t in self.ext:
            s[idx] = t._data
        for fn, ins, out, _free in self.steps:
            r = fn(*[s[i] for i in ins])
            if type(out) is int:
                if type(r) is not _ndarray:
                    r = _asarray(r[0] if type(r) is tuple else r)
                s[out] = r
            elif out is not None:
                for o, x in zip(out, r):
                    if o >= 0:
                        s[o] = x if x is None or type(x) is _ndarray else _asarray(x)
        outs = [s[i] for i in self.out_slots]
        box[:] = ()
        return outs, s


def _norm(x):
    return x if x is None or type(x) is _ndarray else _asarray(x)


def _norm1(r):
    return _asarray(r[0] if type(r) is tuple else r)


# Specials whose callable always returns ndarrays (or a tuple of them): no normalisation.
_ARRAY_OPS = ("fused", "load", "accumulate_grad")


_HELD_OPS = ("load", "accumulate_grad")


def _adoptable(ex):
    """accumulate_grad instrs whose gradient is read by nothing else: instr index -> the slots
    still live after it (their arrays must not share the gradient's memory; see _adopt)."""
    graph = ex.graph
    uses: dict = {}
    last: dict = {}
    for i, instr in enumerate(graph.instrs):
        for v in instr.values():
            uses[v] = uses.get(v, 0) + 1
            last[v] = i
    outputs = set(graph.outputs)
    always = list(graph.inputs) + list(graph.externals)
    out = {}
    defined = []
    producer = {o: instr for instr in graph.instrs for o in instr.outs if o is not None}
    for i, instr in enumerate(graph.instrs):
        if instr.op == "accumulate_grad":
            v = instr.values()[0]
            if uses.get(v) == 1 and v not in outputs and v.kind == "temp":
                if _fresh(v, producer.get(v)):
                    out[i] = None  # nothing else can hold it: no run-time check
                    continue
                live = {w for w in defined if last.get(w, -1) > i or w in outputs}
                live |= set(always)
                live.discard(v)
                out[i] = sorted(ex.slot[w] for w in live)
        outs = [o for o in instr.outs if o is not None]
        defined.extend(outs)
        if instr.op in _HELD_OPS:
            always.extend(outs)
    return out


def _fresh(v, instr):
    """True when ``v`` is a fused kernel's output that the kernel allocates on every call (no
    planned buffer): its only reference is the replay's variable."""
    if instr is None or instr.op != "fused":
        return False
    bufs = getattr(instr.fn, "buffers", None)
    return bufs is None or bufs[instr.outs.index(v)] is None


def _adopt_fresh(t, arr, fallback):
    """_adopt for a gradient known to be this call's own array (see _fresh)."""
    if t._grad is None and arr.flags.c_contiguous:
        t._grad = wrap(arr, False, None)
        return arr
    return fallback(arr)


def _root(a):
    b = a.base
    return a if b is None else b


def _pinned_roots(graph):
    """ids of arrays that outlive a call: consts and the memory plan's buffers."""
    ids = {id(_root(v.data)) for v in graph.consts if type(v.data) is _ndarray}
    plan = getattr(graph, "memory_plan", None)
    if plan is not None and plan.arrays is not None:
        ids.update(id(a) for a in plan.arrays)
    return frozenset(ids)


def _adopt(t, arr, live, pinned, fallback):
    """accumulate_grad without the copy when ``t.grad`` is None and ``arr``'s memory belongs
    to this call alone (Note [Adopted gradients]); otherwise the usual accumulate."""
    # Note [Adopted gradients]: eager copies a gradient into .grad because the engine cannot
    # know who else holds it. Here the schedule knows: no later instr reads the value, and at
    # run time its memory (its base array) is none of the live values', consts' or planned
    # buffers'. Then .grad takes the array itself (C-ordered, like eager's copy), which saves
    # a copy and keeps one gradient-sized temporary fewer alive (the peak-memory target).
    if t._grad is None and type(arr) is _ndarray and arr.flags.c_contiguous \
            and arr.flags.writeable:
        root = _root(arr)
        if (type(root) is _ndarray and root.size == arr.size and id(root) not in pinned
                and all(x is None or _root(x) is not root for x in live)):
            t._grad = wrap(arr, False, None)
            return arr
    return fallback(arr)


def _generate(ex, raw=False):
    """The schedule as one straight-line Python function (Note [Generated replay]): each value
    is a local variable, each instr one call of a callable bound in the function's globals, a
    value is dropped (set to None) after its last use. This removes the interpreter loop, the
    slot list and the per-instr argument lists, which were most of a small graph's cost."""
    # Note [Generated replay]: the source is built from slot numbers and names only (no user
    # data), so exec of it is safe; callables and consts are passed in the globals dict.
    g = {"_ndarray": _ndarray, "_norm": _norm, "_norm1": _norm1}
    lines = ["def run(tensors):"]
    box = ex._inputs_box
    uses_box = any(i.op == "accumulate_grad" and isinstance(i.target, int)
                   for i in ex.graph.instrs)
    if uses_box:
        g["_box"] = box
        lines.append("    _box[:] = tensors")
    for k, idx in enumerate(ex.input_slots):
        lines.append(f"    s{idx} = tensors[{k}]" if raw else f"    s{idx} = tensors[{k}]._data")
    in_dead: dict = {}
    if raw:
        # the inputs are the call's to release: each is dropped after its last reader
        lines.append("    tensors.clear()")
        outs = set(ex.graph.outputs)
        last_in: dict = {}
        for n, instr in enumerate(ex.graph.instrs):
            for v in instr.values():
                if v.kind == "input":
                    last_in[v] = n
        for v, n in last_in.items():
            if v not in outs:
                in_dead.setdefault(n, []).append(f"s{ex.slot[v]}")
    for idx, t in ex.ext:
        g[f"X{idx}"] = t
        lines.append(f"    s{idx} = X{idx}._data")
    for v in ex.graph.consts:
        idx = ex.slot[v]
        g[f"s{idx}"] = v.data  # read as a global: never freed, never rebound
    const_slots = {ex.slot[v] for v in ex.graph.consts}
    adopt = _adoptable(ex)
    # arrays that tensors hold anyway (loaded externals, .grad): never dropped, so _adopt
    # can see them
    held = {ex.slot[o] for i in ex.graph.instrs if i.op in _HELD_OPS for o in i.outs
            if o is not None} if adopt else set()
    if adopt:
        g["_adopt"] = _adopt
        g["_adopt_fresh"] = _adopt_fresh
        g["_pinned"] = _pinned_roots(ex.graph)
    for n, ((fn, ins, out, free), instr) in enumerate(zip(ex.steps, ex.graph.instrs)):
        g[f"F{n}"] = fn
        call = f"F{n}({', '.join(f's{i}' for i in ins)})"
        if n in adopt:
            target = instr.target
            tgt = f"tensors[{target}]" if isinstance(target, int) else f"T{n}"
            if not isinstance(target, int):
                g[f"T{n}"] = target
            if adopt[n] is None:
                call = f"_adopt_fresh({tgt}, s{ins[0]}, F{n})"
            else:
                live = "".join(f"s{i}, " for i in adopt[n] if i not in const_slots)
                call = f"_adopt({tgt}, s{ins[0]}, ({live}), _pinned, F{n})"
        trusted = instr.op in _ARRAY_OPS
        if type(out) is int:
            if trusted:
                lines.append(f"    s{out} = {call}")
            else:
                lines.append(f"    r = {call}")
                lines.append(f"    s{out} = r if type(r) is _ndarray else _norm1(r)")
        elif out is None:
            lines.append(f"    {call}")
        else:
            lines.append(f"    r = {call}")
            for j, o in enumerate(out):
                if o >= 0:
                    lines.append(f"    s{o} = r[{j}]" if trusted else f"    s{o} = _norm(r[{j}])")
        dead = [f"s{f}" for f in free if f not in const_slots and f not in held]
        dead += in_dead.get(n, [])
        if dead:
            lines.append(f"    {' = '.join(dead)} = None")
    if uses_box:
        lines.append("    _box[:] = ()")
    lines.append(f"    return [{', '.join(f's{i}' for i in ex.out_slots)}]")
    source = "\n".join(lines)
    if not raw:
        ex.source = source
    exec(compile(source, "<graphgrad replay>", "exec"), g)  # noqa: S102
    return g["run"]
