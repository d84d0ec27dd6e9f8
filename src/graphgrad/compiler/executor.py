"""The executor: replays a Graph on raw arrays, with no Tensor objects, Nodes or dispatch.

The graph is lowered once to a schedule of (callable, input slots, output slots, slots to free)
over a list of slots; a call fills the input and external slots, runs the schedule in order and
frees each value after its last use. Effects (stores, gradient accumulation, optimizer steps)
run where they were recorded: the schedule never reorders instrs.
"""

from __future__ import annotations

import numpy as np

from .._tensor import bump_version

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

    def run(self, tensors, keep_all=False):
        """Runs one call; ``keep_all`` returns every slot too (verify's divergence search)."""
        s = list(self.template)
        box = self._inputs_box
        box[:] = tensors
        for idx, t in zip(self.input_slots, tensors):
            s[idx] = t._data
        for idx, t in self.ext:
            s[idx] = t._data
        for fn, ins, out, free in self.steps:
            r = fn(*[s[i] for i in ins])
            if type(out) is int:
                if type(r) is not _ndarray:
                    r = _asarray(r[0] if type(r) is tuple else r)
                s[out] = r
            elif out is not None:
                for o, x in zip(out, r):
                    if o >= 0:
                        s[o] = x if x is None or type(x) is _ndarray else _asarray(x)
            if not keep_all:
                for f in free:
                    s[f] = None
        outs = [s[i] for i in self.out_slots]
        box[:] = ()
        return (outs, s) if keep_all else outs
