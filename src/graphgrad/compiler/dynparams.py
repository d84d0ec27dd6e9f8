"""Params computed from tensor values (index plans, masks) and structured auxiliary outputs.

An op such as gather carries, in its params, arrays built in Python from an index tensor's
values. Baking them would replay this call's indices forever, so the capture finds each such
array among the recorded values (the index array itself, or a reshaped view of it) and records
it as an extra input of the instr: ``DynParams`` rebuilds the params from those inputs on every
replay. An op whose auxiliary result is a structure (max pooling's ``(indices, shape)``) gets
one IR output per array in it (``AuxSpec``). See docs/compiler.md ("Value-dependent params").
"""

from __future__ import annotations

import copy

import numpy as np

from .._tensor import Tensor

__all__ = ["DynParams", "AuxSpec", "MultiOut", "find_dyn_params", "holds_array", "flatten_aux"]


class _Slot:
    """Where a value-dependent array sits in a param structure: the instr's ``k``-th param
    input, reshaped to ``shape`` (None: as it is)."""

    __slots__ = ("k", "shape", "bound")

    def __init__(self, k, shape, bound):
        self.k = k
        self.shape = shape
        self.bound = bound  # exclusive upper bound checked at replay (index arrays), or None

    def __repr__(self):
        return f"<in{self.k}>"


class DynParams:
    """Rebuilds an instr's params from its last ``n`` inputs (the value-dependent arrays).

    ``template`` is the captured params with each value-dependent array replaced by a
    ``_Slot``; ``build(arrays)`` puts the replay's arrays in their places (checking that index
    arrays stay in bounds, as the eager op's own check would)."""

    __slots__ = ("template", "n", "op_name")

    def __init__(self, template, n, op_name):
        self.template = template
        self.n = n
        self.op_name = op_name

    def build(self, arrays):
        return _fill(self.template, arrays, self.op_name)

    def describe(self, key):
        """The printer's text for param ``key`` (None when it holds no value input)."""
        slots = []
        _collect_slots(self.template.get(key), slots)
        return "<" + ",".join(f"in{s.k}" for s in slots) + ">" if slots else None


def _fill(t, arrays, op_name):
    if type(t) is _Slot:
        a = arrays[t.k]
        if t.shape is not None:
            a = a.reshape(t.shape)
        if t.bound is not None and a.size:
            lo = -t.bound if op_name == "take" else 0
            if a.min() < lo or a.max() >= t.bound:
                bad = a[(a < lo) | (a >= t.bound)].flat[0]
                raise RuntimeError(f"{op_name}(): index {bad} is out of bounds for a dimension "
                                   f"with size {t.bound}")
        return a
    if type(t) is dict:
        return {k: _fill(v, arrays, op_name) for k, v in t.items()}
    if type(t) is tuple or type(t) is list:
        return type(t)(_fill(e, arrays, op_name) for e in t)
    if type(t) is _Object:
        obj = copy.copy(t.obj)
        for name, v in t.fields:
            setattr(obj, name, _fill(v, arrays, op_name))
        return obj
    return t


def _collect_slots(t, out):
    if type(t) is _Slot:
        out.append(t)
    elif type(t) is dict:
        for v in t.values():
            _collect_slots(v, out)
    elif type(t) in (tuple, list):
        for e in t:
            _collect_slots(e, out)
    elif type(t) is _Object:
        for _, v in t.fields:
            _collect_slots(v, out)


class _Object:
    """A slotted param object (an IndexPlan) some of whose fields hold value inputs."""

    __slots__ = ("obj", "fields")

    def __init__(self, obj, fields):
        self.obj = obj
        self.fields = fields


def holds_array(p, depth=0):
    """True when param ``p`` holds an array with dims (or a Tensor) anywhere inside."""
    if isinstance(p, np.ndarray):
        return p.ndim > 0
    if isinstance(p, Tensor):
        return True
    if depth > 3:
        return False
    if isinstance(p, dict):
        return any(holds_array(e, depth + 1) for e in p.values())
    if isinstance(p, (list, tuple)):
        return any(holds_array(e, depth + 1) for e in p)
    if isinstance(p, (int, float, str, bool, slice, type(None), np.dtype, type, np.generic)):
        return False
    slots = getattr(type(p), "__slots__", None)
    fields = [getattr(p, n, None) for n in slots] if slots else list(getattr(p, "__dict__",
                                                                              {}).values())
    return any(holds_array(e, depth + 1) for e in fields)


def _is_arange(a):
    """A broadcast arange (``np.arange(s).reshape(1, .., s, .., 1)``): the static part of an
    along-dim key, a function of shapes only."""
    if a.dtype.kind not in "iu" or sum(1 for s in a.shape if s != 1) > 1:
        return False
    return bool(np.array_equal(a.reshape(-1), np.arange(a.size)))


class _Resolver:
    """Replaces value-dependent arrays in a structure by _Slots. ``lenient``: an array that is
    no recorded value becomes a const (a saved value of a vjp, as before) instead of failing;
    ``scalars``: 0-d arrays are values too (saved results), not literals."""

    def __init__(self, tracer, lenient=False, scalars=False):
        self.tracer = tracer
        self.lenient = lenient
        self.scalars = scalars
        self.values = []  # the Values that become the instr's param inputs
        self.pos = {}
        self.unresolved = []
        self.resolved_any = False

    def array(self, a, bound=None, static_ok=False):
        """A _Slot for ``a`` when it is a recorded value (or a reshape of one); ``a`` itself
        when it is static (an arange inside an index key); records failures."""
        if isinstance(a, Tensor):
            a = a._data
        amap = self.tracer.amap
        v = amap.get(id(a))
        shape = None
        if v is None or v.kind == "const":
            base = a.base
            bv = amap.get(id(base)) if isinstance(base, np.ndarray) else None
            if (bv is not None and bv.kind != "const" and base.size == a.size
                    and base.flags.c_contiguous and a.flags.c_contiguous):
                v, shape = bv, a.shape
            elif v is not None:  # a const: baking it is right
                return a
            else:
                v = None
        if v is None:
            if static_ok and _is_arange(a):
                return a
            made = getattr(self.tracer, "created", {}).get(id(a))
            if self.lenient and (made is None or made[0] is not a):
                v = self.tracer.const(a)
            else:
                self.unresolved.append(a)
                return a
        self.resolved_any = True
        if v not in self.pos:
            self.pos[v] = len(self.values)
            self.values.append(v)
        return _Slot(self.pos[v], shape, bound if a.dtype.kind in "iu" else None)

    def walk(self, p, depth=0):
        if isinstance(p, (np.ndarray, Tensor)):
            arr = p._data if isinstance(p, Tensor) else p
            if arr.ndim > 0 or self.scalars or isinstance(p, Tensor):
                return self.array(p)
            return p
        if not holds_array(p) and not (self.scalars and _holds_scalar_array(p)):
            return p
        if isinstance(p, dict):
            return {k: self.walk(v, depth + 1) for k, v in p.items()}
        if type(p) in (list, tuple):
            return type(p)(self.walk(e, depth + 1) for e in p)
        if getattr(type(p), "__name__", "") == "IndexPlan":
            return self.plan(p)
        slots = getattr(type(p), "__slots__", None)
        if not slots:
            self.unresolved.append(p)
            return p
        fields = [(n, self.walk(getattr(p, n, None), depth + 1)) for n in slots]
        return _Object(p, fields)

    def plan(self, p):
        """An IndexPlan: its key reads ``view``; array entries are index arrays (bounded by
        the view's size on their dim) or the static aranges of an along-dim key."""
        key = p.key if isinstance(p.key, tuple) else (p.key,)
        dims = [i for i, k in enumerate(key) if k is not None and k is not Ellipsis]
        new = []
        for i, k in enumerate(key):
            if isinstance(k, np.ndarray) and k.ndim > 0:
                d = dims.index(i) if i in dims else None
                bound = p.view[d] if d is not None and d < len(p.view) else None
                if k.dtype == np.bool_:
                    bound = None
                new.append(self.array(k, bound, static_ok=True))
            else:
                new.append(k)
        key_t = tuple(new) if isinstance(p.key, tuple) else new[0]
        return _Object(p, [("key", key_t)])


def _holds_scalar_array(p):
    if isinstance(p, np.ndarray):
        return True
    return isinstance(p, (list, tuple)) and any(_holds_scalar_array(e) for e in p)


def vjp_template(tracer, op_name, saved, params):
    """For a rule recorded as one vjp instr: (saved template, params template, DynParams of
    both, input Values). Saved arrays that are no recorded value are baked (consts); params
    must trace back to recorded values, else a reason string is returned."""
    r = _Resolver(tracer, lenient=True, scalars=True)
    t_saved = r.walk([x._data if isinstance(x, Tensor) else x for x in saved])
    strict = _Resolver(tracer)
    strict.values, strict.pos = r.values, r.pos
    t_params = strict.walk(params) if params else params
    if strict.unresolved:
        return "holds an array computed in Python from tensor values"
    return DynParams({"saved": t_saved, "params": t_params}, len(r.values), op_name), r.values


def find_dyn_params(tracer, op_name, params):
    """(template DynParams, [param input Values]) for ``params``, or a reason string when an
    array in them is not a recorded value (it was computed in Python from tensor values)."""
    r = _Resolver(tracer)
    template = r.walk(params)
    if r.unresolved:
        return "holds an array computed in Python from tensor values"
    if not r.resolved_any:
        return None  # only static arrays: baking them is right
    return DynParams(template, len(r.values), op_name), r.values


# -- structured auxiliary outputs -----------------------------------------------------------
class AuxSpec:
    """How an op's auxiliary result maps onto IR outputs: every array (and NumPy scalar) in
    the structure is one output; ints, shapes and None are static (a NumPy or Python float in
    it is neither: the capture breaks the graph). ``unpack(result)`` turns
    the forward's ``(out, aux)`` into the tuple of output arrays."""

    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def unpack(self, result):
        out, aux = result
        arrays = []
        flatten_aux(aux, arrays)
        return (out, *arrays)


class MultiOut:
    """The outputs of an op whose forward returns a tuple of arrays, one IR output each."""

    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def unpack(self, result):
        return tuple(np.asarray(o) for o in result)


def flatten_aux(aux, arrays):
    """Appends the arrays of ``aux`` to ``arrays``; returns False when ``aux`` holds a value
    that is neither an array nor static (a scalar computed from the data)."""
    if isinstance(aux, np.ndarray):
        arrays.append(aux)
        return True
    if isinstance(aux, (tuple, list)):
        return all(flatten_aux(e, arrays) for e in aux)
    return aux is None or (isinstance(aux, (int, bool, str, np.dtype))
                           and not isinstance(aux, np.generic))
