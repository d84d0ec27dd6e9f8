"""Fusion: groups chains and DAGs of elementwise instrs of one iteration shape (inputs may
broadcast, ``expand`` is read through as a broadcast) plus trailing sum/mean reductions into
one ``fused`` instr that runs a generated kernel (codegen/). Forward and backward are fused
alike: the backward is ordinary instrs of the same IR.

A group is closed (takes no more members) once an instr outside it reads one of its values,
or an effect that may change an external it reads runs; the fused instr then sits where its
last member was, so every reader still finds its values defined. See docs/compiler.md.
"""

from __future__ import annotations

import numpy as np

from ..codegen.fused import FusedCall
from ..codegen.numba import supports_term
from ..codegen.spec import KernelSpec, Lit, Term
from ..ir import Instr, Value

__all__ = ["run", "fuse"]

_REDUCTIONS = ("sum", "sum.dim_IntList", "mean", "mean.dim")


class _Group:
    __slots__ = ("members", "shape", "closed", "naxes", "values", "reads_external", "id")

    def __init__(self, shape, gid):
        self.members: list = []
        self.shape = shape
        self.closed = False
        self.naxes = 0
        self.values: set = set()  # full-shape values made by members
        self.reads_external = False
        self.id = gid


def run(graph, mode=None):
    """The pipeline hook: fuses ``graph`` in place (sets ``graph.fusion_groups``)."""
    fuse(graph)
    return graph


def _uniform_consts(graph) -> dict:
    """Const arrays holding one value everywhere (a folded ``expand`` of a scalar, such as
    backward's ones) are read as a one-element const that the kernel broadcasts."""
    subst = {}
    for v in list(graph.consts):
        a = v.data
        if isinstance(a, np.ndarray) and a.size > 1 and a.dtype.kind in "fiub":
            first = a.reshape(-1)[0]
            if (a == first).all() or (first != first and np.isnan(a).all()):
                small = graph.new_value((), a.dtype, "const", np.array(first, dtype=a.dtype))
                subst[v] = small
    return subst


def _trailing_axes(instr):
    """How many trailing axes a sum/mean instr reduces (None when not trailing)."""
    src = instr.ins[0]
    nd = len(src.shape)
    axes = instr.params.get("axes")
    if axes is None:
        return nd
    axes = sorted(a % nd for a in axes) if nd else []
    if axes != list(range(nd - len(axes), nd)):
        return None
    return len(axes)


def _source(v, expands):
    """Reads through ``expand`` (a broadcast view): the kernel broadcasts by itself."""
    while v in expands:
        v = expands[v]
    return v


def _term_for(instr, group, slot_of, expands):
    args = []
    for x in instr.ins:
        if isinstance(x, Value):
            x = _source(x, expands)
            args.append(slot_of(x))
        else:
            args.append(Lit(x))
    out = instr.outs[0]
    op = instr.op if not instr.special else instr.op
    return Term(op, args, instr.params, out.dtype, out.shape)


def _fusible(instr, expands):
    """The kind of instr fusion may take: 'ew', 'red' or None."""
    if instr.special:
        if instr.op == "cast" and len(instr.outs) == 1 and instr.outs[0] is not None:
            src = instr.ins[0]
            if isinstance(src, Value) and src.shape == instr.outs[0].shape:
                return "ew"
        return None
    if len(instr.outs) != 1 or instr.outs[0] is None:
        return None
    if instr.op.kind == "elementwise":
        return "ew"
    if instr.op.name in _REDUCTIONS and isinstance(instr.ins[0], Value):
        return "red"
    return None


def _check_term(instr, expands):
    """Whether the code generator has a template for this instr with these dtypes."""
    vals = []
    for x in instr.ins:
        if isinstance(x, Value):
            vals.append(_source(x, expands))
    uniq = list(dict.fromkeys(vals))
    spec = KernelSpec(instr.outs[0].shape if instr.outs[0].shape else (), [(v.shape, v.dtype)
                      for v in uniq], [], [])
    index = {v: i for i, v in enumerate(uniq)}
    term = _term_for(instr, None, lambda v: index[v], expands)
    return supports_term(spec, term)


def fuse(graph) -> list:
    """Rewrites ``graph``: returns (and stores as ``graph.fusion_groups``) one line per group."""
    from .memory_plan import peak_bytes

    # what eager would hold: every instr output materialized (explain's baseline)
    graph.eager_peak_bytes = peak_bytes(graph)
    expands = _uniform_consts(graph)
    for instr in graph.instrs:
        if (not instr.special and instr.op.name == "expand" and isinstance(instr.ins[0], Value)
                and instr.outs and instr.outs[0] is not None):
            expands[instr.outs[0]] = instr.ins[0]
    owner: dict = {}  # value -> group that makes it
    groups: list = []
    open_groups: list = []
    for pos, instr in enumerate(graph.instrs):
        kind = _fusible(instr, expands)
        reads = [_source(v, expands) if v in expands else v for v in instr.values()]
        if kind is not None and not _check_term(instr, expands):
            kind = None
        target = None
        if kind is not None:
            target = _place(instr, kind, reads, owner, open_groups, groups, expands)
        if target is None:
            # an outside reader closes every group whose value it reads
            for v in instr.values():
                for src in (v, _source(v, expands)):
                    g = owner.get(src)
                    if g is not None and not g.closed:
                        g.closed = True
            if instr.effect or instr.special and instr.op in ("opaque", "load"):
                for g in open_groups:
                    if g.reads_external:
                        g.closed = True
            open_groups[:] = [g for g in open_groups if not g.closed]
            continue
        target.members.append(pos)
        out = instr.outs[0]
        owner[out] = target
        if kind == "ew":
            target.values.add(out)
        for v in reads:
            if v.kind in ("external", "input") or v not in owner:
                if v.kind == "external":
                    target.reads_external = True
        if target not in open_groups:
            open_groups.append(target)
    return _rewrite(graph, [g for g in groups if len(g.members) >= 2], expands)


def _place(instr, kind, reads, owner, open_groups, groups, expands):
    """The group ``instr`` joins (a new one when it joins none), or None for no fusion."""
    out = instr.outs[0]
    cands = []
    for v in reads:
        g = owner.get(v)
        if g is not None and not g.closed and g not in cands:
            cands.append(g)
    if kind == "red":
        src = reads[0]
        n = _trailing_axes(instr)
        g = owner.get(src)
        if (n is None or g is None or g.closed or src not in g.values or src.shape != g.shape
                or (g.naxes and g.naxes != n) or n == 0):
            return None
        # its other inputs must not come from other open groups
        g.naxes = n
        return g
    shape = out.shape
    joinable = [g for g in cands if g.shape == shape and not _reads_reduction(reads, g, owner)]
    if len(joinable) != len(cands):
        # reading an open group it cannot join: that group's value is read from outside
        for g in cands:
            if g not in joinable:
                g.closed = True
        open_groups[:] = [g for g in open_groups if not g.closed]
    if not joinable:
        g = _Group(shape, len(groups))
        groups.append(g)
        return g
    g = joinable[0]
    for other in joinable[1:]:  # the instr joins two open groups: merge them
        g.members.extend(other.members)
        g.members.sort()
        g.values |= other.values
        g.reads_external |= other.reads_external
        g.naxes = g.naxes or other.naxes
        for v, owner_g in list(owner.items()):
            if owner_g is other:
                owner[v] = g
        other.members = []
        other.closed = True
        if other in open_groups:
            open_groups.remove(other)
    return g


def _reads_reduction(reads, g, owner):
    for v in reads:
        if owner.get(v) is g and v not in g.values:
            return True
    return False


def _rewrite(graph, groups, expands) -> list:
    instrs = graph.instrs
    readers: dict = {}
    for i, instr in enumerate(instrs):
        for v in instr.values():
            readers.setdefault(v, set()).add(i)
    outputs = set(graph.outputs)
    replace: dict = {}
    drop = set()
    lines = []
    for g in groups:
        members = sorted(g.members)
        mset = set(members)
        made = {}
        for i in members:
            made[instrs[i].outs[0]] = i
        ins: list = []
        slot: dict = {}
        for i in members:
            for x in instrs[i].ins:
                if isinstance(x, Value):
                    x = _source(x, expands)
                    x = expands.get(x, x)
                    if x not in made and x not in slot:
                        slot[x] = len(ins)
                        ins.append(x)
        for k, i in enumerate(members):
            slot[instrs[i].outs[0]] = len(ins) + k
        pending = [(instrs[i].outs[0], _term_for(instrs[i], g, slot.__getitem__, expands))
                   for i in members]
        terms = [t for _, t in pending]
        outs = [v for v, _ in pending if v in outputs or (readers.get(v, set()) - mset)]
        # an external read by expand only still counts: expand's readers are outside
        spec = KernelSpec(g.shape, [(v.shape, v.dtype) for v in ins], terms,
                          [slot[v] for v in outs])
        names = ",".join(t.name for t in terms)
        fused = Instr("fused", ins, outs, fn=FusedCall(spec), label=f"k{len(lines)}")
        replace[members[-1]] = fused
        drop.update(members[:-1])
        lines.append(f"k{len(lines)}: {len(terms)} ops on {_shape(g.shape)}"
                     f"{f' + sum over {g.naxes} trailing axes' if g.naxes else ''}: "
                     f"{names} -> {len(outs)} output(s)")
    graph.instrs = [replace.get(i, instr) for i, instr in enumerate(instrs) if i not in drop]
    # expands whose readers all went into kernels are dead now
    from .dce import dce

    dce(graph)
    graph.fusion_groups = lines
    return lines


def _shape(shape):
    return "[" + ",".join(str(s) for s in shape) + "]"

