"""The recording hook: while a Tracer is installed as ``ops._dispatch._tracer``, every op the
dispatcher runs (and every random draw, in-place write and optimizer step) is also appended to
a Graph. Arrays are identified by ``id``: an array the tracer has not seen is an external
(bound to its Tensor, read live on every call) or a baked constant (creation ops).
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from .._tensor import Tensor
from .dynparams import AuxSpec, MultiOut, find_dyn_params, flatten_aux, holds_array
from .ir import Graph

__all__ = ["Tracer", "GraphBreak", "user_site", "active_tracer"]

_get_ident = threading.get_ident


# Ops whose array params are functions of shapes only (gather positions of reflection and
# replication padding, resampling taps): the guards on shapes make baking them right.
SHAPE_ONLY_PARAMS: set = {
    *(f"{m}_pad{k}d" for m in ("reflection", "replication") for k in (1, 2, 3)),
    "pad.circular", "pad_backward", "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward",
    "adaptive_avg_pool3d", "adaptive_avg_pool3d_backward",
    *(f"upsample_{m}{k}d{b}" for m in ("nearest", "nearest_exact") for k in (1, 2, 3)
      for b in ("", "_backward")),
    *(f"upsample_{m}{b}" for m in ("linear1d", "bilinear2d", "trilinear3d", "bicubic2d")
      for b in ("", "_backward")),
    *(f"_upsample_{m}2d_aa{b}" for m in ("bilinear", "bicubic") for b in ("", "_backward")),
}


# Ops whose output shape depends on the input's values: a replay could not keep the shapes
# the graph was specialised on.
DATA_SHAPED = {"masked_select", "unique", "bincount", "histc"}


class GraphBreak(Exception):
    """Raised inside a capture when ``fn`` does something the graph cannot hold (reading a
    captured value into Python); ``site`` names the user's line."""

    def __init__(self, reason, site=None):
        super().__init__(reason if site is None else f"{reason} at {site}")
        self.reason = reason
        self.site = site


def user_site() -> str | None:
    """``file:line`` of the innermost frame outside graphgrad (the user's code)."""
    from ..autograd.sites import _is_internal

    f = sys._getframe(1)
    while f is not None:
        if not _is_internal(f.f_code.co_filename):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return None


class Tracer:
    """Records into ``self.graph``. ``amap`` maps id(array) -> Value; ``keep`` holds every
    array and tensor seen so that ids stay unique during the capture."""

    # Note [One thread records]: the tracer is installed in a process-global slot
    # (``ops._dispatch._tracer``) that every thread's dispatcher reads, but a capture records
    # only the thread that started it. Every entry point the library calls is gated (see
    # ``_gate`` and ``__init_subclass__``): from another thread it does what the library would
    # do with no tracer installed (records nothing; an opaque call runs the function;
    # ``backward`` lets the eager engine run). Code that branches on ``_dispatch._tracer``
    # itself must test ``active_tracer()`` instead.

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _gate_methods(cls)

    def mine(self) -> bool:
        """True in the thread that is capturing."""
        return self.thread == _get_ident()

    def __init__(self):
        self.thread = _get_ident()
        self.graph = Graph()
        self.amap: dict = {}
        self.keep: list = []
        self.ext_names: dict = {}  # id(Tensor) -> a name for the printer (parameter names)
        self.ext_tensors: dict = {}  # id(Tensor) -> external Value
        # id(array) -> (array, site) for arrays wrapped into a Tensor during the capture with no
        # recorded producer (an op computing with NumPy behind the dispatcher, e.g. nonzero):
        # such an array reaching the graph would be baked, so it is a graph break instead.
        self.created: dict = {}
        self.by_base: dict = {}  # id(array.base) -> bound views of it (see _derived)

    # -- values -------------------------------------------------------------------------
    def bind(self, arr, v):
        self.amap[id(arr)] = v
        self.keep.append(arr)
        base = getattr(arr, "base", None)
        if base is not None:
            self.by_base.setdefault(id(base), []).append(arr)
        return v

    def alias(self, new, old):
        """``new`` holds the same values as the recorded ``old`` (a snapshot copy)."""
        v = self.amap.get(id(old))
        if v is not None:
            self.bind(new, v)

    def value(self, arr, tensor=None):
        """The Value holding ``arr``: known, or a new external (a Tensor's array) or const.
        An array wrapped during the capture without a recorded producer is a graph break
        unless it is a reshaped view of a recorded value."""
        v = self.amap.get(id(arr))
        if v is not None:
            return v
        made = self.created.get(id(arr))
        if made is not None and made[0] is arr:
            v = self._derived(arr)
            if v is None:
                raise GraphBreak("a tensor computed outside the recorded ops (with NumPy, so "
                                 "its values would be baked into the graph) was made", made[1])
            return v
        if tensor is not None and tensor._data is arr:
            v = self.ext_tensors.get(id(tensor))
            if v is None:
                v = self.graph.new_value(arr.shape, arr.dtype, "external", tensor,
                                         self.ext_names.get(id(tensor)))
                self.ext_tensors[id(tensor)] = v
                self.keep.append(tensor)
            return self.bind(arr, v)
        return self.const(arr)

    def _derived(self, arr):
        """A view instr when ``arr`` is a C-contiguous reshape of a recorded value (the
        ``squeeze`` of max's indices), else None."""
        base = arr.base
        if base is None or not arr.flags.c_contiguous:
            return None
        ptr = arr.__array_interface__["data"][0]
        for cand in [base] + self.by_base.get(id(base), []):
            v = self.amap.get(id(cand))
            if (v is None or v.kind == "const" or cand.size != arr.size
                    or not cand.flags.c_contiguous or cand.dtype != arr.dtype
                    or cand.__array_interface__["data"][0] != ptr):
                continue
            from ..ops import OPS

            instr = self.graph.add(OPS["view"], [v], [(arr.shape, arr.dtype)],
                                   {"shape": tuple(arr.shape), "in_shape": tuple(cand.shape)})
            return self.bind(arr, instr.outs[0])
        return None

    def const(self, arr):
        """Bakes ``arr`` (creation ops: ``tensor``, ``zeros``, ...) unless already known."""
        v = self.amap.get(id(arr))
        if v is None:
            v = self.bind(arr, self.graph.new_value(arr.shape, arr.dtype, "const",
                                                    np.array(arr, copy=True)))
        return v

    def input(self, tensor, name):
        arr = tensor._data
        v = self.amap.get(id(arr))
        if v is not None and v.kind == "input":
            return v  # the same tensor passed twice
        return self.bind(arr, self.graph.new_value(arr.shape, arr.dtype, "input", None, name))

    def _arg(self, x, a):
        """The IR operand for forward argument ``a`` (the eager input was ``x``)."""
        if type(a) is np.ndarray:
            if isinstance(x, Tensor) and x._data is not a:
                # The dispatcher cast the tensor (dtype promotion): record the cast.
                src = self.value(x._data, x)
                v = self.amap.get(id(a))
                if v is None:
                    v = self.graph.add("cast", [src], [(a.shape, a.dtype)], fn=_caster(a.dtype),
                                       label=_dname(a.dtype)).outs[0]
                    self.bind(a, v)
                return v
            return self.value(a, x if isinstance(x, Tensor) else None)
        if isinstance(a, Tensor):
            return self.value(a._data, a)
        if isinstance(a, (list, tuple)) and any(isinstance(e, (np.ndarray, Tensor)) for e in a):
            raise GraphBreak("an op input that is a list of arrays", user_site())
        return a

    # -- recording (called from ops/_dispatch.py) ---------------------------------------
    def record(self, op, inputs, arrays, params, out, aux=None):
        """One dispatched op: ``out = op.forward(np, *arrays, **params)``."""
        if op.name in DATA_SHAPED:
            raise GraphBreak(f"{op.name}() has an output shape that depends on tensor values",
                             user_site())
        dyn = None
        if params:
            dyn = self.dyn_params(op, params)
        ins = [self._arg(x, a) for x, a in zip(inputs, arrays)]
        types = [(out.shape, out.dtype)]
        spec, aux_arrays = None, ()
        if aux is not None:
            if type(aux) is np.ndarray:
                aux_arrays = (aux,)
            else:
                aux_arrays = []
                if not flatten_aux(aux, aux_arrays):
                    raise GraphBreak(f"{op.name}() returns a scalar computed from the data "
                                     "in its auxiliary value", user_site())
                spec = AuxSpec(len(aux_arrays))
            types.extend((a.shape, a.dtype) for a in aux_arrays)
        if dyn is not None:
            ins.extend(dyn[1])
        instr = self.graph.add(op, ins, types, params, dyn=dyn and dyn[0], aux=spec)
        self.bind(out, instr.outs[0])
        for a, v in zip(aux_arrays, instr.outs[1:]):
            self.bind(a, v)
        return instr

    def record_multi(self, op, inputs, params, outs):
        """An op whose forward returns a tuple of arrays (linalg decompositions)."""
        dyn = self.dyn_params(op, params) if params else None
        ins = [self._arg(x, x._data if isinstance(x, Tensor) else x) for x in inputs]
        if dyn is not None:
            ins.extend(dyn[1])
        instr = self.graph.add(op, ins, [(o.shape, o.dtype) for o in outs], params,
                               dyn=dyn and dyn[0], aux=MultiOut(len(outs)))
        for o, v in zip(outs, instr.outs):
            self.bind(o, v)
        return instr

    def dyn_params(self, op, params):
        """(DynParams, param input Values) when ``params`` hold arrays computed from recorded
        values (index plans, masks), None when they hold none; raises GraphBreak when an array
        in them cannot be traced back to a recorded value."""
        for k, p in params.items():
            if holds_array(p):
                if op.name in SHAPE_ONLY_PARAMS:
                    return None
                found = find_dyn_params(self, op.name, params)
                if isinstance(found, str):
                    # Baking it would silently reuse this call's indices on every replay.
                    raise GraphBreak(f"{op.name}() takes an array computed from tensor values "
                                     f"(parameter {k!r})", user_site())
                return found
        return None

    def random(self, arrays, fn, label=None, inputs=()):
        """Arrays drawn from graphgrad's generator: ``fn()`` draws fresh ones (a tuple with one
        array per entry of ``arrays``, or one array). ``inputs``: tensors whose arrays ``fn``
        takes (a bernoulli's probabilities)."""
        single = not isinstance(arrays, tuple)
        outs = (arrays,) if single else arrays
        types = [None if a is None else (a.shape, a.dtype) for a in outs]
        ins = [self.value(t._data, t) for t in inputs]
        instr = self.graph.add("random", ins, types, fn=fn, label=label)
        for a, v in zip(outs, instr.outs):
            if a is not None:
                self.bind(a, v)
        return instr

    def write(self, tensor, src):
        """``tensor``'s array was overwritten in place with ``src``'s values (an in-place op).

        Later reads of the array see the new value; an external tensor (a parameter or
        buffer) also gets a store, so the write happens on every call."""
        dst = tensor._data
        if tensor._view is not None or (dst.base is not None and self._shared(dst)):
            # Other arrays may share this memory; a functional rebinding would miss them.
            raise GraphBreak("an in-place write into a view", user_site())
        v = self.value(src, None)
        if src.shape != dst.shape or src.dtype != dst.dtype:
            v = self.graph.add("cast", [v], [(dst.shape, dst.dtype)],
                               fn=_caster(dst.dtype, dst.shape), label=_dname(dst.dtype)).outs[0]
        old = self.amap.get(id(dst))
        stored = self.__dict__.setdefault("_stored", set())
        if old is None or old.kind == "external" or id(tensor) in stored:
            # An external: every write is a store (a second add_ too, after the first one
            # rebound the array to a temp).
            if old is None:
                self.value(dst, tensor)
            stored.add(id(tensor))
            self.keep.append(tensor)
            self.graph.add("store", [v], [], target=tensor, label=self._label(tensor))
        elif old.kind == "input":
            raise GraphBreak("an in-place write into an input tensor", user_site())
        self.amap[id(dst)] = v

    def _shared(self, dst) -> bool:
        """Whether memory under ``dst`` (a NumPy view) may be seen through another value: its
        base is a recorded value or an external's array. An op's own temporary (a convolution's
        output is a transposed view of its matmul result, which nothing else holds) is not,
        so ``relu_`` on it stays in the graph (``nn.ReLU(inplace=True)`` after a conv)."""
        base = dst.base
        while base is not None:
            if id(base) in self.amap:
                return True
            base = getattr(base, "base", None)
        return any(v.kind == "external" and v.data is not None
                   and np.may_share_memory(v.data._data, dst) for v in self.amap.values())

    def read(self, tensor, what):
        """``tensor``'s values are read into Python (``.item()``, ``bool()``, ...)."""
        v = self.amap.get(id(tensor._data))
        if v is not None and v.kind == "const":
            return
        raise GraphBreak(f"Tensor.{what}() reads a tensor's value into Python", user_site())

    def _label(self, tensor):
        return self.ext_names.get(id(tensor))


# Entry points the library calls on the installed tracer, and what each does when called from
# a thread other than the capturing one (see Note [One thread records]).
def _nothing(*args, **kwargs):
    return None


def _run_opaque(owner, fn, args, kwargs, label=None):
    return fn(*args, **kwargs)


def _not_recorded(*args, **kwargs):
    return False


_OTHER_THREAD = {
    "record": _nothing, "record_multi": _nothing, "const": _nothing, "alias": _nothing,
    "write": _nothing, "random": _nothing, "read": _nothing, "state_update": _nothing,
    "unsupported": _nothing, "break_graph": _nothing, "opaque_call": _run_opaque,
    "backward": _not_recorded,
}


def _gate(fn, other):
    def gated(self, *args, **kwargs):
        if self.thread == _get_ident():
            return fn(self, *args, **kwargs)
        return other(*args, **kwargs)
    gated.__name__ = fn.__name__
    gated.__qualname__ = fn.__qualname__
    gated.__doc__ = fn.__doc__
    gated.__wrapped__ = fn
    return gated


def _gate_methods(cls):
    for name, other in _OTHER_THREAD.items():
        fn = cls.__dict__.get(name)
        if fn is not None and callable(fn) and not hasattr(fn, "__wrapped__"):
            setattr(cls, name, _gate(fn, other))


_gate_methods(Tracer)


def active_tracer():
    """The tracer recording this thread's ops, or None (another thread's capture is None
    here)."""
    from ..ops import _dispatch

    t = _dispatch._tracer
    return t if t is not None and t.thread == _get_ident() else None


_holds_array = holds_array  # the former private name


def _dname(dtype):
    from .ir import dtype_name

    return dtype_name(dtype)


def _caster(dtype, shape=None):
    dtype = np.dtype(dtype)
    if shape is None:
        def cast(a):
            return a.astype(dtype)
    else:
        def cast(a):
            return np.broadcast_to(a, shape).astype(dtype)
    return cast
