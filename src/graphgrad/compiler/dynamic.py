"""``dynamic=True``: one capture structure for every batch size.

Two captures at batch sizes B1 != B2 are diffed: the graphs must match instr by instr; every
shape, int, float or array that differs becomes an expression of B (``a*B + b`` for ints,
``a/B`` for floats such as a mean's scale, ``full(shape(B), v)`` for uniform constants) and
everything else must be equal (it is guarded). A call at a new batch size then instantiates a
graph from the template and compiles it, without running the Python function again.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from .dynparams import DynParams, _is_arange, _Object, _Slot
from .ir import Graph, Value

__all__ = ["DynamicTemplate", "generalize_graphs", "batch_size", "NotDynamic"]


class NotDynamic(Exception):
    """The two captures differ in a way that is no function of the batch size."""


class _Lin:
    """An int ``a*B + b``."""

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __call__(self, n):
        return self.a * n + self.b

    def __repr__(self):
        return f"{self.a}*B{self.b:+d}"


class _Recip:
    """A float ``a / B`` (a mean's scale)."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    def __call__(self, n):
        return self.a / n


class _Full:
    """A constant array whose every element is ``value``, of a batch-dependent shape."""

    __slots__ = ("shape", "value", "dtype")

    def __init__(self, shape, value, dtype):
        self.shape, self.value, self.dtype = shape, value, dtype

    def __call__(self, n):
        return np.full(inst(self.shape, n), self.value, self.dtype)


class _Arange:
    """A broadcast ``arange`` (an along-dim index key) of a batch-dependent shape."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    def __call__(self, n):
        shape = inst(self.shape, n)
        return np.arange(math.prod(shape), dtype=self.dtype).reshape(shape)


class _Struct:
    """A container whose parts are templates: tuple, list, dict, slotted object."""

    __slots__ = ("kind", "parts", "proto")

    def __init__(self, kind, parts, proto=None):
        self.kind, self.parts, self.proto = kind, parts, proto

    def __call__(self, n):
        if self.kind is dict:
            return {k: inst(v, n) for k, v in self.parts}
        if self.kind is _Slot:
            k, shape, bound = (inst(p, n) for p in self.parts)
            return _Slot(k, shape, bound)
        if self.kind is _Object:
            obj = _Object.__new__(_Object)
            obj.obj = inst(self.parts[0], n)
            obj.fields = [(name, inst(v, n)) for name, v in self.parts[1]]
            return obj
        if self.kind == "obj":
            obj = copy.copy(self.proto)
            for name, v in self.parts:
                setattr(obj, name, inst(v, n))
            return obj
        return self.kind(inst(p, n) for p in self.parts)


_TEMPLATES = (_Lin, _Recip, _Full, _Arange, _Struct)


def inst(t, n):
    """The value of template ``t`` at batch size ``n``."""
    return t(n) if type(t) in _TEMPLATES else t


def generalize(x, y, b1, b2):
    """A template equal to ``x`` at ``b1`` and to ``y`` at ``b2``; raises NotDynamic."""
    if x is y:
        return x
    tx = type(x)
    if tx is not type(y):
        raise NotDynamic(f"{x!r} against {y!r}")
    if tx is bool or x is None:
        if x != y:
            raise NotDynamic(f"{x!r} against {y!r}")
        return x
    if tx is int or isinstance(x, np.integer):
        if x == y:
            return x
        a, r = divmod(int(y) - int(x), b2 - b1)
        if r:
            raise NotDynamic(f"{x} against {y} is no multiple of the batch size")
        return _Lin(a, int(x) - a * b1)
    if tx is float or isinstance(x, np.floating):
        if x == y or (math.isnan(x) and math.isnan(y)):
            return x
        if math.isclose(x * b1, y * b2, rel_tol=1e-12):
            a = x * b1
            return _Recip(float(round(a)) if abs(a - round(a)) < 1e-9 else a)
        raise NotDynamic(f"{x} against {y}")
    if tx in (tuple, list):
        if len(x) != len(y):
            raise NotDynamic("containers of different lengths")
        parts = [generalize(a, b, b1, b2) for a, b in zip(x, y)]
        return _struct(tx, parts, x)
    if tx is dict:
        if x.keys() != y.keys():
            raise NotDynamic("dicts with different keys")
        parts = [(k, generalize(x[k], y[k], b1, b2)) for k in x]
        return _struct(dict, parts, x)
    if tx is np.ndarray:
        if x.dtype != y.dtype:
            raise NotDynamic("arrays of different dtypes")
        if x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return x
        if x.size and y.size and _uniform(x) and _uniform(y) and x.flat[0] == y.flat[0]:
            return _Full(generalize(x.shape, y.shape, b1, b2), x.flat[0], x.dtype)
        if x.ndim == y.ndim and _is_arange(x) and _is_arange(y):
            return _Arange(generalize(x.shape, y.shape, b1, b2), x.dtype)
        raise NotDynamic(f"an array whose values differ between batch sizes ({x.shape} "
                         f"{x.dtype}: {x.ravel()[:6]})")
    if tx is _Slot:
        parts = [generalize(getattr(x, f), getattr(y, f), b1, b2) for f in ("k", "shape",
                                                                             "bound")]
        return _Struct(_Slot, parts)
    if tx is _Object:
        # The prototype's fields named in ``fields`` are replaced at every build: skip them.
        skip = {n for n, _ in x.fields}
        obj = x.obj
        parts = [(s, generalize(getattr(x.obj, s, None), getattr(y.obj, s, None), b1, b2))
                 for s in _all_slots(type(x.obj)) if s not in skip]
        if any(type(v) in _TEMPLATES for _, v in parts):
            obj = _Struct("obj", parts, x.obj)
        fields = [(n, generalize(a, b, b1, b2)) for (n, a), (_, b) in zip(x.fields, y.fields)]
        return _Struct(_Object, (obj, fields))
    if tx is DynParams:
        return _Struct("obj", [("template", generalize(x.template, y.template, b1, b2))], x)
    slots = _all_slots(tx)
    if slots and not isinstance(x, (str, bytes, type, np.dtype, Value)):
        parts = [(s, generalize(getattr(x, s, None), getattr(y, s, None), b1, b2))
                 for s in slots]
        if all(type(v) not in _TEMPLATES for _, v in parts):
            return x
        return _Struct("obj", parts, x)
    try:
        if x == y:
            return x
    except Exception:  # noqa: BLE001 - uncomparable objects are simply not equal
        pass
    raise NotDynamic(f"{tx.__name__} values differ between batch sizes")


def _all_slots(tp):
    out = []
    for k in tp.__mro__:
        s = k.__dict__.get("__slots__", ())
        out.extend([s] if isinstance(s, str) else s)
    return [s for s in out if s not in ("__weakref__", "__dict__")]


def _struct(kind, parts, proto):
    if any(type(p if kind is not dict else p[1]) in _TEMPLATES for p in parts):
        return _Struct(kind, parts)
    return proto


def _uniform(a):
    f = a.reshape(-1)
    return bool(np.all(f == f[0]))


def batch_size(leaves):
    """The batch size of a call: dim 0 of its first tensor argument with dims (None: none)."""
    for t in leaves:
        shape = t._data.shape
        if shape:
            return shape[0]
    return None


class DynamicTemplate:
    """A graph template over the batch size B, built from two captures."""

    def __init__(self, key, values, instrs, outputs, inputs, externals, consts):
        self.key = key
        self.values = values  # list of (Value of g1, shape template) in definition order
        self.instrs = instrs
        self.outputs = outputs
        self.inputs, self.externals, self.consts = inputs, externals, consts

    def matches(self, key, n):
        try:
            return inst(self.key, n) == key
        except Exception:  # noqa: BLE001 - a template that does not apply
            return False

    def graph(self, n):
        """A fresh Graph for batch size ``n``."""
        g = Graph()
        new = {}
        for v, shape_t in self.inputs:
            new[v] = g.new_value(inst(shape_t, n), v.dtype, "input", None, v.name)
        for v, _ in self.externals:
            new[v] = g.new_value(v.shape, v.dtype, "external", v.data, v.name)
        for v, data_t in self.consts:
            data = inst(data_t, n)
            new[v] = g.new_value(data.shape, data.dtype, "const", data, v.name)
        for op, ins, outs, params, extra in self.instrs:
            kw = {k: inst(t, n) for k, t in extra.items() if k != "fn"}
            fn = extra.get("fn")
            if fn is not None:
                fn = fn(n) if callable(fn) and getattr(fn, "_template", False) else fn
            args = [new[x] if isinstance(x, Value) else inst(x, n) for x in ins]
            types = [None if o is None else (inst(st, n), o.dtype) for o, st in outs]
            instr = g.add(op, args, types, inst(params, n), fn=fn, **kw)
            for (o, _), no in zip(outs, instr.outs):
                if o is not None:
                    new[o] = no
        g.outputs = [new[v] for v in self.outputs]
        return g


def _fn_template(i1, i2, b1, b2, out_t):
    """How a special instr's callable is made at batch size n (a template callable or the
    captured one when it does not depend on the batch size)."""
    op = i1.op
    shapes_equal = all(a is None or a.shape == b.shape for a, b in zip(i1.outs, i2.outs)) and \
        all(a.shape == b.shape for a, b in zip(i1.values(), i2.values()))
    if op == "cast":
        from .trace import _caster

        src, out = i1.values()[0], i1.outs[0]
        broadcast = src.shape != out.shape
        dtype = out.dtype
        shape_t = out_t[0]

        def make(n):
            return _caster(dtype, inst(shape_t, n) if broadcast else None)
        make._template = True
        return make
    if op == "vjp":
        parts1 = getattr(i1.fn, "parts", None)
        parts2 = getattr(i2.fn, "parts", None)
        if parts1 is None or parts2 is None:
            raise NotDynamic("a vjp without a rebuildable rule")
        metas_t = generalize(parts1[0], parts2[0], b1, b2)
        dyn_t = generalize(parts1[1], parts2[1], b1, b2)
        rebuild = parts1[2]

        def make(n):
            return rebuild(inst(metas_t, n), inst(dyn_t, n))
        make._template = True
        return make
    if op in ("opaque", "load", "store", "accumulate_grad") or shapes_equal:
        return i1.fn
    raise NotDynamic(f"a {op} instr whose shapes depend on the batch size")


def generalize_graphs(g1, key1, b1, g2, key2, b2):
    """The DynamicTemplate of two raw captures (``g.pre`` instr lists) or raises NotDynamic."""
    if b1 is None or b2 is None or b1 == b2:
        raise NotDynamic("no batch dimension")
    key_t = generalize(key1, key2, b1, b2)
    if len(g1.instrs) != len(g2.instrs) or len(g1.inputs) != len(g2.inputs) or \
            len(g1.externals) != len(g2.externals) or len(g1.consts) != len(g2.consts):
        raise NotDynamic("the two captures differ in structure")
    vmap = {}

    def pair(a, b):
        vmap[a] = b
        return generalize(a.shape, b.shape, b1, b2)

    inputs = [(a, pair(a, b)) for a, b in zip(g1.inputs, g2.inputs)]
    externals = []
    for a, b in zip(g1.externals, g2.externals):
        if a.data is not b.data or a.shape != b.shape:
            raise NotDynamic("different captured tensors")
        externals.append((a, pair(a, b)))
    consts = []
    for a, b in zip(g1.consts, g2.consts):
        vmap[a] = b
        consts.append((a, generalize(a.data, b.data, b1, b2)))
    instrs = []
    for i1, i2 in zip(g1.instrs, g2.instrs):
        if i1.op is not i2.op and i1.op != i2.op or i1.label != i2.label or \
                len(i1.ins) != len(i2.ins) or len(i1.outs) != len(i2.outs):
            raise NotDynamic(f"{i1.name} against {i2.name}")
        ins = []
        for x, y in zip(i1.ins, i2.ins):
            if isinstance(x, Value):
                if not isinstance(y, Value) or vmap.get(x) is not y:
                    raise NotDynamic(f"operands of {i1.name} differ")
                ins.append(x)
            else:
                ins.append(generalize(x, y, b1, b2))
        outs = []
        for a, b in zip(i1.outs, i2.outs):
            if (a is None) != (b is None):
                raise NotDynamic(f"outputs of {i1.name} differ")
            outs.append((a, None if a is None else pair(a, b)))
        # With dyn, params are the captured ones, kept for the printer only.
        params = i1.params if i1.dyn is not None else generalize(i1.params, i2.params, b1, b2)
        extra = {"target": i1.target if not isinstance(i1.target, int) else i1.target,
                 "site": i1.site, "label": i1.label,
                 "dyn": generalize(i1.dyn, i2.dyn, b1, b2), "aux": i1.aux}
        if i1.target is not i2.target and i1.target != i2.target:
            raise NotDynamic(f"{i1.name} writes another tensor")
        if i1.special and i1.fn is not None:
            extra["fn"] = _fn_template(i1, i2, b1, b2, [st for _, st in outs])
        instrs.append((i1.op, ins, outs, params, extra))
    outputs = list(g1.outputs)
    if [vmap.get(v) for v in outputs] != list(g2.outputs):
        raise NotDynamic("outputs differ")
    return DynamicTemplate(key_t, None, instrs, outputs, inputs, externals, consts)


class RawGraph:
    """A snapshot of a captured graph before the passes rewrite it in place."""

    def __init__(self, g):
        self.inputs, self.externals, self.consts = list(g.inputs), list(g.externals), \
            list(g.consts)
        self.outputs = list(g.outputs)
        self.instrs = [copy.copy(i) for i in g.instrs]
        for i in self.instrs:
            i.ins, i.outs, i.params = list(i.ins), list(i.outs), dict(i.params)
