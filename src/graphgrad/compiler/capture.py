"""Capture: runs a function once, eagerly, with the recorder on, and returns its Graph.

Besides the dispatcher's ops it records ``loss.backward()`` (each rule traced through the DIFF
namespace with grad mode off, or as one ``vjp`` instr when the rule reads data), gradient
accumulation into leaves, optimizer steps and ``zero_grad`` (opaque instrs), random draws, and
in-place writes. Reading a captured value into Python is a graph break (see docs/compiler.md).
"""

from __future__ import annotations

import operator

import numpy as np

from .._tensor import Tensor, wrap
from ..autograd import engine as _engine
from ..autograd import sites as _sites
from ..autograd.grad_mode import state as _mode
from ..autograd.graph import AccumulateGrad, Freed, OutputEdge, Slots
from ..ops import _dispatch
from ..ops._namespace import DIFF, RAW, sum_to_array
from .dynparams import holds_array, vjp_template
from .optstep import lower_step
from .trace import SHAPE_ONLY_PARAMS, GraphBreak, Tracer, user_site

__all__ = ["Capture", "capture", "flatten", "unflatten"]


# -- argument and result structures ------------------------------------------------------
def flatten(obj, leaves):
    """Appends obj's tensor leaves to ``leaves``; returns a spec to rebuild it."""
    if isinstance(obj, Tensor):
        leaves.append(obj)
        return ("T",)
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return (type(obj), [flatten(x, leaves) for x in obj])
    if isinstance(obj, dict) and type(obj) is dict:
        return (dict, [(k, flatten(v, leaves)) for k, v in obj.items()])
    return ("L", obj)


def unflatten(spec, leaves):
    if spec[0] == "T":
        return leaves[0]
    return _build(spec, iter(leaves))


def _build(s, it):
    # A module-level function: a recursive closure would be a reference cycle holding the
    # outputs (and their graphs) until the garbage collector runs.
    tag = s[0]
    if tag == "T":
        return next(it)
    if tag == "L":
        return s[1]
    if tag is dict:
        return {k: _build(v, it) for k, v in s[1]}
    return tag([_build(x, it) for x in s[1]])


# -- the recorder ------------------------------------------------------------------------
class Capture(Tracer):
    """A Tracer that also records backward, optimizer steps and zero_grad, and that turns
    data-dependent Python into a graph break (``self.breaks``)."""

    def __init__(self, fullgraph=False):
        super().__init__()
        self.fullgraph = fullgraph
        self.breaks: list[GraphBreak] = []
        self.patches: list = []
        self.peeked = False
        self.did_backward = False  # a backward() inside the function was recorded
        self.joint = None  # the recorded backward of a region (region.py)
        self.region_error = None

    # -- install / remove ---------------------------------------------------------------
    def start(self):
        if _dispatch._tracer is not None:
            raise RuntimeError("graphgrad.compile: a compiled function was called while another "
                               "one is being captured (nested compile is not supported)")
        _dispatch._tracer = self
        from ..nn.modules.module import Module
        from ..optim.optimizer import Optimizer

        cap = self
        for name in ("item", "tolist", "numpy", "__bool__", "__float__", "__int__",
                     "__index__", "__array__"):
            self._patch(Tensor, name, _reader(cap, getattr(Tensor, name), name))
        for cls in (Optimizer, Module):
            orig = cls.zero_grad
            self._patch(cls, "zero_grad", _zero_grad(cap, orig))
        for name in ("__setitem__", "index_put_"):
            self._patch(Tensor, name, _breaker(cap, getattr(Tensor, name), f"Tensor.{name}"))
        prop = Tensor.grad
        self._patch(Tensor, "grad", property(prop.fget, _grad_setter(cap, prop.fset)))
        self._patch(DIFF, "const", staticmethod(_diff_const(cap, DIFF.const)))
        self._watch_wraps()

    def _watch_wraps(self):
        """Notes every array ``wrap`` turns into a Tensor with no recorded producer (see
        ``Tracer.created``), through the memory ledger's hook in ``wrap``."""
        from .. import _tensor

        cap, track, ledger = self, _tensor._track, _tensor._ledger
        floor = ledger.min_bytes
        created, amap = self.created, self.amap

        def watch(data):
            if _dispatch._tracer is cap and id(data) not in amap:
                created[id(data)] = (data, user_site())
            if data.nbytes >= floor:
                track(data)
        self.unwatch = (track, floor)
        ledger.min_bytes = 0
        _tensor._track = watch

    def _patch(self, cls, name, new):
        self.patches.append((cls, name, cls.__dict__[name]))
        setattr(cls, name, new)

    def stop(self):
        if _dispatch._tracer is self:
            _dispatch._tracer = None
        unwatch = self.__dict__.pop("unwatch", None)
        if unwatch is not None:
            from .. import _tensor

            _tensor._track, _tensor._ledger.min_bytes = unwatch
        for cls, name, old in reversed(self.patches):
            setattr(cls, name, old)
        self.patches = []

    def break_graph(self, err: GraphBreak):
        """Stops recording; the rest of this call runs eagerly. With fullgraph, raises."""
        self.stop()
        if self.fullgraph:
            raise err
        self.breaks.append(err)

    def unsupported(self, what):
        self.break_graph(GraphBreak(f"{what} is not captured", user_site()))

    def state_update(self, what):
        """A buffer updated in place with NumPy (BatchNorm's running statistics in train mode):
        replaying the graph would skip it, so this call runs eagerly."""
        self.unsupported(what)

    def read(self, tensor, what):
        try:
            super().read(tensor, what)
        except GraphBreak as err:
            self.break_graph(err)

    def record(self, op, inputs, arrays, params, out, aux=None):
        try:
            return super().record(op, inputs, arrays, params, out, aux)
        except GraphBreak as err:
            self.break_graph(err)

    def write(self, tensor, src):
        try:
            super().write(tensor, src)
        except GraphBreak as err:
            self.break_graph(err)

    def record_region(self):
        """When the outputs need autograd history and the function ran no backward itself,
        records the backward of the forward after it (``self.joint``, see region.py; or
        ``self.region_error``). Recording is switched on for it if it is off."""
        outs, leaves = getattr(self, "outs", None), getattr(self, "leaves", None)
        if outs is None or self.breaks or self.did_backward or not _grad_outputs(outs):
            return
        from .region import NoRegion, derive

        restart = _dispatch._tracer is not self
        if restart:
            self.start()
        try:
            self.joint = derive(self, outs, leaves)
        except NoRegion as err:
            self.region_error = str(err)
        finally:
            if restart:
                self.stop()
        self.outs = self.leaves = None

    def release(self):
        """Drops what only the capture needed (every array and tensor it saw, the capture
        call's activations among them), keeping the graph and the specs: without it a
        variant would hold the first call's memory for as long as the function lives."""
        self.keep = []
        self.amap = {}
        self.created = {}
        self.by_base = {}
        self.ext_tensors = {}

    def paused(self):
        return _Paused(self)

    # -- effects --------------------------------------------------------------------------
    def opaque_call(self, owner, fn, args, kwargs, label=None):
        """Records ``fn(*args, **kwargs)`` (an optimizer step, zero_grad) as one opaque instr
        run for its effects on every call, then runs it now with the recorder paused."""
        touched = _touched(owner)
        deps = [self.amap[id(t._data)] for t in touched if id(t._data) in self.amap]

        call = lower_step(owner, fn, args, kwargs, _sites.capture(2))
        if call is None:
            def call(*_):
                fn(*args, **kwargs)
        self.graph.add("opaque", deps, [], fn=call,
                       label=label or f"{type(owner).__name__}.{fn.__name__}")
        with self.paused():
            out = fn(*args, **kwargs)
        # The effect changed these arrays in place: later reads must load them again.
        for t in touched:
            self._invalidate(t)
        for t in _touched(owner):
            self._invalidate(t)
        return out

    def _invalidate(self, t):
        v = self.amap.pop(id(t._data), None)
        if v is not None and v.kind == "external":
            self.ext_tensors.pop(id(t), None)
        self.dirty.add(id(t))

    def value(self, arr, tensor=None):
        if (tensor is not None and id(tensor) in self.dirty and id(arr) not in self.amap
                and tensor._data is arr):
            # Read after an effect: a load instr, ordered after it.
            v = self.graph.add("load", [], [(arr.shape, arr.dtype)], fn=_loader(tensor),
                               label=self.ext_names.get(id(tensor))).outs[0]
            self.keep.append(tensor)
            return self.bind(arr, v)
        return super().value(arr, tensor)

    @property
    def dirty(self):
        d = self.__dict__.get("_dirty")
        if d is None:
            d = self.__dict__["_dirty"] = set()
        return d

    def accumulate(self, t, g):
        """AccumulateGrad: adds gradient ``g`` (a Tensor) into leaf ``t``'s .grad."""
        v = self.value(g._data, g)
        target = t
        tv = self.amap.get(id(t._data))
        if tv is not None and tv.kind == "const":
            # A leaf made inside the function is a new tensor on every eager call.
            raise RuntimeError("a gradient for a leaf tensor created inside the function")
        if tv is not None and tv.kind == "input":
            target = self.graph.inputs.index(tv)  # the call's own argument, on every call
        instr = self.graph.add("accumulate_grad", [v], [(t._data.shape, t._data.dtype)],
                               target=target, label=self.ext_names.get(id(t)))
        self.keep.append(t)
        self.bind(accumulate_grad(t, g._data), instr.outs[0])

    # -- backward ---------------------------------------------------------------------------
    def backward(self, tensors, grad_tensors, retain_graph, create_graph, inputs):
        """Records ``backward()``; returns False when it broke the graph (the caller then runs
        the eager engine)."""
        if create_graph or inputs is not None:
            self.unsupported("backward(create_graph=True or inputs=...)")
            return False
        roots, _ = _engine._root_grads(tensors, grad_tensors, True)
        order = _topo([n for n, _ in roots])
        for node in order:
            if type(node) is AccumulateGrad:
                continue
            if node._extra is not None or getattr(node, "_op", None) is None \
                    or getattr(node._op, "name", "").startswith("compiled_"):
                self.unsupported("backward through a hook, retain_grad or custom Function")
                return False
            if type(node._saved) is Freed:
                break  # the eager engine raises torch's error below
        else:
            mark = len(self.graph.instrs)
            try:
                self._run_backward(roots, order, retain_graph, grad_tensors)
            except GraphBreak as err:
                self.break_graph(err)
                return False
            except Exception as err:  # noqa: BLE001 - a rule the recorder cannot run
                del self.graph.instrs[mark:]
                self.unsupported(f"backward through {type(err).__name__} ({err})")
                return False
            self.did_backward = True
            return True
        self.stop()
        return False

    def _run_backward(self, roots, order, retain_graph, grad_tensors=None):
        buffers = {}
        for i, (node, g) in enumerate(roots):
            if not isinstance(g, Tensor):
                g = wrap(np.asarray(g), False, None)
            if grad_tensors is None or i >= len(grad_tensors) or grad_tensors[i] is None \
                    or not isinstance(grad_tensors[i], Tensor):
                self.const(g._data)  # the engine's seed (ones), or a Python number's
            self.value(g._data, g)
            buffers[node] = g if node not in buffers else buffers[node] + g
        prev = _mode.grad_enabled
        _mode.grad_enabled = False
        # Leaves are updated and saved values released only once every rule has run, so a
        # failure part way can still fall back to the eager engine.
        leaves, ran = [], []
        try:
            for node in order:
                g = buffers.pop(node, None)
                if g is None:
                    continue
                if type(node) is AccumulateGrad:
                    leaves.append((node.variable, g))
                    continue
                if type(node) is OutputEdge:
                    # Output _nr of a multi-output node: its gradient goes into that slot of
                    # the node's Slots (summed per slot, as the engine does). No instr.
                    slots = [None] * _n_outputs(node)
                    slots[node._nr] = g
                    child = node._node
                    gs = Slots(slots)
                    buffers[child] = buffers[child] + gs if child in buffers else gs
                    ran.append(node)
                    continue
                grads = self._node_vjp(node, g)
                ran.append(node)
                for child, gi in zip(node._next, grads):
                    if child is None or gi is None:
                        continue
                    buffers[child] = buffers[child] + gi if child in buffers else gi
            for t, g in leaves:
                self.accumulate(t, g)
        finally:
            _mode.grad_enabled = prev
        if not retain_graph:
            for node in ran:
                if node._op.frees:
                    node._saved = Freed(None, 0)

    def _node_vjp(self, node, g):
        """One node's rule, recorded op by op through DIFF; a rule that reads data (a mask,
        ``ns.raw(x) > 0``) or fails there is recorded as one ``vjp`` instr instead."""
        op, params = node._op, node._params
        if op.needs_mask:
            params = dict(params) if params else {}
            params["needs"] = tuple(c is not None for c in node._next)
        if node._versions:
            _engine._check_versions(node)
        saved = node._saved
        if "aux" in op.save or (params and op.name not in SHAPE_ONLY_PARAMS
                                and holds_array(params)):
            # Index plans, masks and auxiliary results (indices of a max) are values of this
            # call: the rule runs on arrays with them rebuilt at every replay.
            return self._vjp_instr(node, op, params, g, saved)
        mark = len(self.graph.instrs)
        self.peeked = False
        orig_raw = DIFF.__dict__["raw"]
        DIFF.raw = staticmethod(_peek_raw(self))
        grads = None
        try:
            vals = [_engine._saved_tensor(node, s, v) for s, v in zip(op.save, saved)]
            res = op.vjp(DIFF, g, *vals, **params) if params else op.vjp(DIFF, g, *vals)
            res = res if type(res) is tuple else (res,)
            if not self.peeked:
                grads = [self._fit(gi, meta) for gi, meta in zip(res, node._meta)]
        except GraphBreak:
            raise
        except Exception:  # noqa: BLE001 - any failure falls back to the raw rule below
            grads = None
        finally:
            DIFF.raw = orig_raw
        if grads is None or self.peeked:
            del self.graph.instrs[mark:]
            grads = self._vjp_instr(node, op, params, g, saved)
        return grads

    def _fit(self, gi, meta):
        if gi is None or meta is None:
            return None
        if not isinstance(gi, Tensor):
            arr = np.asarray(gi)
            gi = wrap(arr, False, None)
            self.const(arr)
        shape, dtype = meta
        if gi._data.shape != shape:
            gi = DIFF.sum_to(gi, shape)
        if gi._data.dtype != dtype:
            from .._dtype import from_numpy_dtype
            from ..ops.elementwise import _to_dtype

            gi = _to_dtype(gi, from_numpy_dtype(dtype))
        return gi

    def _vjp_instr(self, node, op, params, g, saved):
        metas = node._meta
        # which inputs get a gradient (not the nodes: a closure holding them would keep the
        # capture call's whole graph alive for as long as the instr lives)
        nxt = tuple(c is not None for c in node._next)

        def rule(garr, *vals):
            res = op.vjp(RAW, garr, *vals, **params) if params else op.vjp(RAW, garr, *vals)
            return _fit_raw(res, metas, nxt)

        found = vjp_template(self, op.name, saved, params)
        if isinstance(found, str):
            raise GraphBreak(f"the derivative of {op.name}() {found}", user_site())
        dyn, values = found
        if type(g) is Slots:
            # A multi-output node: one input per output gradient that arrived.
            present = [i for i, x in enumerate(g.grads) if x is not None]
            g_ins = [self.value(g.grads[i]._data, g.grads[i]) for i in present]
            n_slots = len(g.grads)
            garr0 = Slots([None if x is None else x._data for x in g.grads])
        else:
            g_ins, garr0 = [self.value(g._data, g)], g._data
        ng = len(g_ins)
        results = rule(garr0, *[x._data if isinstance(x, Tensor) else x for x in saved])

        slotted = type(g) is Slots

        def replay(*arrays):
            built = dyn.build(arrays[ng:])
            if slotted:
                slots = [None] * n_slots
                for i, a in zip(present, arrays):
                    slots[i] = a
                garr = Slots(slots)
            else:
                garr = arrays[0]
            return rule_with(garr, built["saved"], built["params"])

        def rule_with(garr, vals, prm):
            res = op.vjp(RAW, garr, *vals, **prm) if prm else op.vjp(RAW, garr, *vals)
            return _fit_raw(res, metas, nxt)

        def rebuild(new_metas, new_dyn):
            # dynamic=True: the same rule for another batch size (compiler/dynamic.py)
            return _vjp_replay(op, new_metas, nxt, new_dyn, ng, slotted,
                               n_slots if slotted else 0, present if slotted else ())

        replay.parts = (metas, dyn, rebuild)
        types = [None if r is None else (r.shape, r.dtype) for r in results]
        instr = self.graph.add("vjp", g_ins + values, types, fn=replay, label=op.name)
        grads = []
        for r, v in zip(results, instr.outs):
            if r is None:
                grads.append(None)
            else:
                self.bind(r, v)
                grads.append(wrap(r, False, None))
        return grads


def _vjp_replay(op, metas, nxt, dyn, ng, slotted, n_slots, present):
    """The array function of a vjp instr (as ``Capture._vjp_instr`` builds it)."""

    def replay(*arrays):
        built = dyn.build(arrays[ng:])
        if slotted:
            slots = [None] * n_slots
            for i, a in zip(present, arrays):
                slots[i] = a
            garr = Slots(slots)
        else:
            garr = arrays[0]
        vals, prm = built["saved"], built["params"]
        res = op.vjp(RAW, garr, *vals, **prm) if prm else op.vjp(RAW, garr, *vals)
        return _fit_raw(res, metas, nxt)

    def rebuild(new_metas, new_dyn):
        return _vjp_replay(op, new_metas, nxt, new_dyn, ng, slotted, n_slots, present)
    replay.parts = (metas, dyn, rebuild)
    return replay


def _n_outputs(edge):
    return edge._params["n"]


def _fit_raw(res, metas, nxt):
    """A raw rule's gradients summed to their inputs' shapes and cast to their dtypes."""
    res = res if type(res) is tuple else (res,)
    out = []
    for gi, meta, child in zip(res, metas, nxt):
        if gi is None or not child or meta is None:
            out.append(None)
            continue
        gi = np.asarray(gi)
        if gi.shape != meta[0]:
            gi = sum_to_array(gi, meta[0])
        if gi.dtype != meta[1]:
            gi = gi.astype(meta[1])
        out.append(gi)
    return tuple(out)


def accumulate_grad(t, arr):
    """Adds ``arr`` into ``t.grad`` (a copy when it is None), as the engine does outside grad
    mode; returns the array now in ``t.grad``. The executor calls this on every replay."""
    cur = t._grad
    if cur is None:
        t._grad = wrap(np.array(arr, copy=True), False, None)
    elif cur._data.flags.writeable and cur._data.shape == arr.shape and not cur._rg:
        cur._data += arr
    else:
        t._grad = wrap(np.asarray(cur._data + arr), False, None)
    return t._grad._data


def _touched(owner):
    """Tensors an optimizer step or zero_grad may change: parameters, grads, state."""
    from ..optim.optimizer import Optimizer

    out = []
    if isinstance(owner, Optimizer):
        params = [p for group in owner.param_groups for p in group["params"]]
        for st in owner.state.values():
            out.extend(v for v in st.values() if isinstance(v, Tensor))
    else:
        params = list(owner.parameters())
    for p in params:
        out.append(p)
        if p._grad is not None:
            out.append(p._grad)
    return out


def _loader(tensor):
    def load():
        return tensor._data
    return load


def _topo(roots):
    """The nodes reachable from ``roots`` in an order where every node comes after all the
    nodes that send it gradients (as the engine's dependency counting)."""
    deps, seen, stack = {}, set(), list(dict.fromkeys(roots))
    for n in stack:
        seen.add(n)
    i = 0
    while i < len(stack):
        n = stack[i]
        i += 1
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
        for c in getattr(n, "_next", ()) or ():
            if c is None:
                continue
            deps[c] -= 1
            if not deps[c]:
                ready.append(c)
    return order


class _Paused:
    def __init__(self, cap):
        self.cap = cap

    def __enter__(self):
        _dispatch._tracer = None

    def __exit__(self, *exc):
        if self.cap.patches:  # still recording (no graph break meanwhile)
            _dispatch._tracer = self.cap


def _reader(cap, orig, name):
    def method(self, *args, **kwargs):
        if _dispatch._tracer is cap:
            cap.read(self, name)
        return orig(self, *args, **kwargs)
    method.__name__ = name
    return method


def _breaker(cap, orig, what):
    def method(self, *args, **kwargs):
        if _dispatch._tracer is cap:
            cap.unsupported(what)
        return orig(self, *args, **kwargs)
    method.__name__ = orig.__name__
    return method


def _zero_grad(cap, orig):
    def zero_grad(self, set_to_none=True):
        if _dispatch._tracer is cap:
            return cap.opaque_call(self, orig, (self, set_to_none), {},
                                   label=f"{type(self).__name__}.zero_grad")
        return orig(self, set_to_none)
    return zero_grad


def _grad_setter(cap, fset):
    def setter(self, value):
        if _dispatch._tracer is cap:
            if value is None:
                # ``p.grad = None`` (a hand-written zero_grad): replayed as an effect.
                def clear(*_):
                    fset(self, None)
                cap.keep.append(self)
                cap.graph.add("opaque", [], [], fn=clear, label="grad = None")
            else:
                cap.unsupported("assigning Tensor.grad")
        fset(self, value)
    return setter


def _diff_const(cap, orig):
    # A rule's constant (zeros of a shape, a one-hot of a static position): rules that read
    # data are recorded as vjp instrs (see _Peek), so what reaches here is static.
    def const(a):
        t = orig(a)
        if _dispatch._tracer is cap:
            cap.const(t._data)
        return t
    return const


# -- the raw-array proxy ---------------------------------------------------------------
def _peek_raw(cap):
    def raw(x):
        a = x._data if isinstance(x, Tensor) else x
        return _Peek(a, cap) if isinstance(a, np.ndarray) else a
    return raw


def _unpeek(x):
    if type(x) is _Peek:
        x.cap.peeked = True
        return x.a
    if isinstance(x, (list, tuple)):
        return type(x)(_unpeek(e) for e in x)
    return x


class _Peek:
    """What ``ns.raw(x)`` returns while a rule is recorded: shape, dtype, ndim and size are
    free to read (the graph is specialised on them); any use of the values marks the rule as
    data-dependent, so it is recorded as one vjp instr instead of baking a mask."""

    __slots__ = ("a", "cap")

    def __init__(self, a, cap):
        self.a = a
        self.cap = cap

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)
    size = property(lambda self: self.a.size)

    def __getattr__(self, name):
        self.cap.peeked = True
        return getattr(self.a, name)

    def __array__(self, dtype=None, copy=None):
        self.cap.peeked = True
        return self.a if dtype is None else self.a.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self.cap.peeked = True
        return getattr(ufunc, method)(*_unpeek(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        self.cap.peeked = True
        return func(*_unpeek(args), **{k: _unpeek(v) for k, v in kwargs.items()})

    def __len__(self):
        return len(self.a)


def _binop(f):
    def method(self, *others):
        self.cap.peeked = True
        return f(self.a, *_unpeek(others))
    return method


for _name, _f in [("__add__", operator.add), ("__sub__", operator.sub), ("__mul__", operator.mul),
                  ("__truediv__", operator.truediv), ("__floordiv__", operator.floordiv),
                  ("__mod__", operator.mod), ("__pow__", operator.pow),
                  ("__lt__", operator.lt), ("__le__", operator.le), ("__gt__", operator.gt),
                  ("__ge__", operator.ge), ("__eq__", operator.eq), ("__ne__", operator.ne),
                  ("__and__", operator.and_), ("__or__", operator.or_),
                  ("__xor__", operator.xor), ("__neg__", operator.neg),
                  ("__invert__", operator.invert), ("__abs__", operator.abs),
                  ("__getitem__", operator.getitem), ("__bool__", bool),
                  ("__float__", float), ("__int__", int), ("__index__", operator.index),
                  ("__iter__", iter),
                  ("__radd__", lambda a, b: b + a), ("__rsub__", lambda a, b: b - a),
                  ("__rmul__", lambda a, b: b * a), ("__rtruediv__", lambda a, b: b / a)]:
    setattr(_Peek, _name, _binop(_f))
_Peek.__hash__ = None


def capture(fn, args, kwargs, *, fullgraph=False, ext_names=None, region=True):
    """Runs ``fn(*args, **kwargs)`` once, recording it. Returns (capture, result); the graph
    is ``capture.graph`` unless ``capture.breaks`` is non-empty.

    With ``region``, when outputs need autograd history and ``fn`` ran no backward itself,
    the backward of the forward is recorded after it (``capture.joint``, see region.py;
    ``capture.region_error`` says why it could not be)."""
    cap = Capture(fullgraph)
    if ext_names:
        cap.ext_names.update(ext_names)
    leaves: list = []
    spec = flatten((args, kwargs), leaves)
    if len({id(t._data) for t in leaves}) != len(leaves):
        # One tensor in two argument positions would become one graph input, and a later
        # call with two different tensors (same guard key) would read the first for both.
        err = GraphBreak("the same tensor is passed in two argument positions (aliased "
                         "arguments are not guarded)", user_site())
        if fullgraph:
            raise err
        cap.breaks.append(err)
        return cap, fn(*args, **kwargs)
    for i, t in enumerate(leaves):
        cap.input(t, f"arg{i}")
    cap.start()
    try:
        result = fn(*args, **kwargs)
        if not cap.breaks:
            outs: list = []
            cap.out_spec = flatten(result, outs)
            graph = cap.graph
            try:
                graph.outputs = [cap.value(t._data, t) for t in outs]
            except GraphBreak as err:
                if fullgraph:
                    raise
                cap.breaks.append(err)
            cap.in_spec = spec
            cap.outs, cap.leaves = outs, leaves
            if region:
                cap.record_region()
    finally:
        cap.stop()
    return cap, result


def _grad_outputs(outs):
    return any(isinstance(t, Tensor) and t._rg and t._fn is not None for t in outs)
