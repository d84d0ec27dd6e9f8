"""``torch.autograd.forward_ad``: dual tensors (forward-mode AD) inside a ``dual_level``.

graphgrad's op table holds reverse-mode rules only, so each op's tangent is derived from its
VJP by the double-VJP identity (as ``func.jvp`` does): with g(u) = J^T u built with its graph,
d<g(u), t>/du = J t. The dispatcher calls :meth:`_State.run` only while a dual tensor exists
(``ops._dispatch._fwd`` is None otherwise), so eager code without forward AD pays nothing.
View ops are linear, so their tangent is the same view of the input's tangent (as in torch).
A case that cannot be derived this way (complex values, an op without a derivative, a rule
that is not differentiable) raises instead of returning a wrong tangent.
"""

from __future__ import annotations

import weakref
from collections import namedtuple

import numpy as np

from .._tensor import Tensor, wrap

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


class UnpackedDualTensor(namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """What :func:`unpack_dual` returns: the primal (a view without tangent) and the tangent."""

    __slots__ = ()


class _State:
    """The active level and the tangents of its dual tensors (id -> (weakref, tangent))."""

    __slots__ = ("level", "busy", "tangents", "next_level")
    tracks_writes = True  # in-place ops take the recorded path (ops/inplace.py)
    handles_functions = True  # a custom Function's jvp gives its tangents (function.py)

    def __init__(self):
        self.level = None
        self.busy = False
        self.tangents = {}
        self.next_level = 0

    # -- tangent storage ---------------------------------------------------------------------
    def get(self, t):
        entry = self.tangents.get(id(t))
        if entry is None or entry[0]() is not t:
            return None
        return entry[1]

    def set(self, t, tangent):
        key = id(t)
        tangents = self.tangents
        tangents[key] = (weakref.ref(t, lambda _r, k=key: tangents.pop(k, None)), tangent)
        _hook(self)

    # -- the dispatcher's hook ---------------------------------------------------------------
    def run(self, fn, op, args):
        """Runs ``fn(op, *args)`` (an ``ops._dispatch`` entry point) and gives its result the
        tangent J t when an input is a dual tensor."""
        from ..ops import _dispatch as D

        if fn is D.unary:
            inputs = (args[0],)
        elif fn is D.binary:
            inputs = (args[0], args[1])
        else:
            inputs = args[0]
        duals = [i for i, x in enumerate(inputs) if isinstance(x, Tensor)
                 and self.get(x) is not None]
        self.busy = True
        try:
            out = fn(op, *args)
        finally:
            self.busy = False
        if not duals:
            return out
        has_aux = fn is D.apply and "aux" in op.save
        result = out[0] if has_aux else out
        if result._data.dtype.kind not in "fV":
            if result._data.dtype.kind == "c":
                raise NotImplementedError(
                    f"forward AD: complex tangents are not supported (op {op.name}, output "
                    f"shape {list(result._data.shape)})")
            return out  # an integer or boolean result has no tangent, as in torch
        if op.vjp is None:
            raise NotImplementedError(
                f"forward AD: the derivative of {op.name} is not implemented (input shapes "
                f"{_shapes(inputs)})")
        self.set(result, self._tangent(fn, op, inputs, args[-1], duals, has_aux, result))
        return out

    def _tangent(self, fn, op, inputs, params, duals, has_aux, result):
        from ..ops import _dispatch as D

        tangents = self._input_tangents(op, inputs, duals)
        if op.view is True and duals == [0] and not tangents[0]._rg:
            # a view op is linear in its input: the tangent is the same view of the tangent
            arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
            arrays[0] = tangents[0]._data
            view = op.forward(np, *arrays, **params) if params else op.forward(np, *arrays)
            if np.shape(view) == result._data.shape:
                return wrap(np.asarray(view), False, None)

        if op.name == "cholesky_inverse":
            # the forward reads one triangle of the factor, the backward rule (torch's) treats
            # it as a full matrix: only the read triangle's tangent moves the result
            tri = np.triu if params.get("upper") else np.tril
            tangents = [wrap(tri(tangents[0]._data), False, None)]

        def call(xs):
            if fn is D.unary:
                y = fn(op, xs[0], params)
            elif fn is D.binary:
                y = fn(op, xs[0], xs[1], params)
            else:
                y = fn(op, type(inputs)(xs), params)
            return [y[0] if has_aux else y]

        return self._double_vjp(op, call, inputs, duals, tangents, [result])[0]

    def _input_tangents(self, op, inputs, duals):
        tangents = [self.get(inputs[i]) for i in duals]
        for i, t in zip(duals, tangents):
            if t._data.dtype.kind == "c":
                raise NotImplementedError(f"forward AD: complex tangents are not supported (op "
                                          f"{op.name})")
            if t._data.shape != inputs[i]._data.shape:
                raise NotImplementedError(
                    f"forward AD: input {i} of {op.name} changed shape in place (to "
                    f"{list(inputs[i]._data.shape)}) after its tangent (of shape "
                    f"{list(t._data.shape)}) was set; in-place view ops (unsqueeze_, t_, ...) "
                    "on dual tensors are not supported")
        return tangents

    def _double_vjp(self, op, call, inputs, duals, tangents, results):
        """J t for each float result: ``call(xs)`` reruns the op on fresh leaves ``xs``; with
        g(u) = J^T u built with its graph, J t = d<g(u), t>/du. When grad mode is on and an
        input or tangent requires grad, the inputs that do are used themselves and J t keeps
        its graph, so reverse mode can differentiate the tangent (as torch allows)."""
        from .engine import grad
        from .grad_mode import state as mode

        graph = (mode.grad_enabled and not mode.inference
                 and (any(isinstance(x, Tensor) and x._rg for x in inputs)
                      or any(t._rg for t in tangents)))
        self.busy = True
        saved = mode.grad_enabled, mode.inference
        mode.grad_enabled, mode.inference = True, False
        try:
            # graph: a tensor that requires grad enters as a clone, which keeps its history,
            # gives each position its own gradient (x * x), and is not changed by a later
            # in-place write into x (which would invalidate the values the rerun saved)
            xs = [x if not isinstance(x, Tensor) else x.clone() if graph and x._rg
                  else wrap(x._data, i in duals, None) for i, x in enumerate(inputs)]
            ys = call(xs)
            live_y = [k for k, y in enumerate(ys) if y._rg]
            out = [wrap(np.zeros_like(r._data), False, None) for r in results]
            if not live_y:
                return out
            # g(u) is linear in u, so any u gives the same J t; a random u makes a rule that
            # is not differentiable visible (its g does not depend on u yet is nonzero).
            us = [wrap(_RNG.standard_normal(ys[k]._data.shape).astype(ys[k]._data.dtype), True,
                       None) for k in live_y]
            leaves = [xs[i] for i in duals]
            gs = grad([ys[k] for k in live_y], leaves, us, create_graph=True, allow_unused=True)
            live, ts = [], []
            for g, t in zip(gs, tangents):
                if g is None:
                    continue
                if not g._rg:
                    if np.any(g._data != 0):
                        raise NotImplementedError(
                            f"forward AD: the backward rule of {op.name} is not differentiable, "
                            f"so its tangent cannot be derived (input shapes "
                            f"{_shapes(inputs)})")
                    continue
                live.append(g)
                ts.append(t if t._data.dtype == g._data.dtype else t.to(g.dtype))
            if not live:
                return out
            jvs = grad(live, us, ts, create_graph=graph, allow_unused=True)
            for k, jv in zip(live_y, jvs):
                if jv is None:
                    continue
                r = results[k]._data
                if graph and jv._rg:  # keep the graph: shape and dtype fixed by ops
                    if jv._data.shape != r.shape:
                        jv = jv.expand(r.shape)
                    out[k] = jv if jv._data.dtype == r.dtype else jv.to(results[k].dtype)
                    continue
                data = jv._data if jv._data.shape == r.shape else np.broadcast_to(jv._data,
                                                                                  r.shape)
                out[k] = wrap(np.array(data, dtype=r.dtype), False, None)
        finally:
            mode.grad_enabled, mode.inference = saved
            self.busy = False
        return out

    def run_multi(self, fn, op, inputs, params):
        """``ops.linalg_solve.apply_multi`` (an op with several outputs) on dual inputs."""
        duals = [i for i, x in enumerate(inputs) if self.get(x) is not None]
        self.busy = True
        try:
            outs = fn(op, inputs, params)
        finally:
            self.busy = False
        if not duals:
            return outs
        floats = [o for o in outs if o._data.dtype.kind in "fV"]
        if any(o._data.dtype.kind == "c" for o in outs):
            raise NotImplementedError(f"forward AD: complex tangents are not supported (op "
                                      f"{op.name})")
        if op.vjp is None:
            raise NotImplementedError(f"forward AD: the derivative of {op.name} is not "
                                      f"implemented (input shapes {_shapes(inputs)})")
        tangents = self._input_tangents(op, inputs, duals)

        def call(xs):
            ys = fn(op, tuple(xs), params)
            return [y for y in ys if y._data.dtype.kind in "fV"]

        for o, t in zip(floats, self._double_vjp(op, call, inputs, duals, tangents, floats)):
            self.set(o, t)
        return outs

    def snapshot(self, copy, t):
        """``copy`` holds ``t``'s values before an in-place write: it takes ``t``'s tangent."""
        if self.busy:
            return
        tangent = self.get(t)
        if tangent is None:
            return
        if tangent._rg:  # a clone keeps the tangent's graph
            self.busy = True
            try:
                self.set(copy, tangent.clone())
            finally:
                self.busy = False
        else:
            self.set(copy, wrap(tangent._data.copy(), False, None))

    def write(self, target, result):
        """An in-place op stored ``result`` into ``target`` (ops/inplace.py): the target's
        tangent becomes the result's; a view's write also goes into its base's tangent."""
        if self.busy:
            return  # a write made while computing a tangent
        t = self.get(result)
        if t is None and self.get(target) is None and (
                target._view is None or self.get(target._view[0]) is None):
            return
        if t is None:
            t = wrap(np.zeros_like(target._data), False, None)
        if target._view is None:
            if t._data.shape == target._data.shape and t._data.dtype == target._data.dtype:
                self.set(target, t)  # keeps a tangent's graph (reverse mode through it)
            else:
                self.set(target, wrap(np.array(np.broadcast_to(t._data, target._data.shape),
                                               dtype=target._data.dtype), False, None))
            return
        base, chain = target._view[0], target._view[1]
        bt = self.get(base)
        if t._rg or (bt is not None and bt._rg):
            self._graph_write(target, base, chain, bt, t)
            return
        if bt is None:
            bt = wrap(np.zeros_like(base._data), False, None)
            self.set(base, bt)
        elif not bt._data.flags.writeable or bt._rg:  # never write into a graph's values
            bt = wrap(np.array(bt._data), False, None)
            self.set(base, bt)
        view = bt._data
        for vop, params in chain:
            view = vop.forward(np, view, **params) if params else vop.forward(np, view)
        if not (isinstance(view, np.ndarray) and np.shares_memory(view, bt._data)
                and view.shape == target._data.shape):
            raise NotImplementedError(
                f"forward AD: an in-place write into a view of a dual tensor (view shape "
                f"{list(target._data.shape)}, base shape {list(base._data.shape)}) is not "
                "supported here")
        if not view.flags.writeable:
            raise NotImplementedError("forward AD: in-place write into a broadcast view of a "
                                      "dual tensor")
        np.copyto(view, t._data, casting="unsafe")
        self.set(target, wrap(view, False, None))

    def _graph_write(self, target, base, chain, bt, t):
        """A write through a view when tangents carry a graph: the base's new tangent is a
        copy whose same view receives ``t`` by ops, so reverse mode sees the write."""
        from ..ops import _dispatch as D

        self.busy = True
        try:
            nb = bt.clone() if bt is not None else wrap(np.zeros_like(base._data), False, None)
            cur = nb
            for vop, params in chain:
                cur = D.unary(vop, cur, params)
            if cur._data.shape != target._data.shape:
                raise NotImplementedError(
                    f"forward AD: an in-place write into a view of a dual tensor (view shape "
                    f"{list(target._data.shape)}, base shape {list(base._data.shape)}) is not "
                    "supported here")
            cur.copy_(t)
        finally:
            self.busy = False
        self.set(base, nb)
        self.set(target, cur)

    def function(self, cls, ctx, args, result):
        """A custom ``autograd.Function`` applied to dual inputs: its ``jvp`` gives the
        outputs' tangents (called with ``ctx`` as ``forward`` left it)."""
        if not any(isinstance(a, Tensor) and self.get(a) is not None for a in args):
            return
        if getattr(cls, "jvp", None) is None:
            raise NotImplementedError("You must implement the jvp function for custom "
                                      "autograd.Function to use it with forward mode AD.")
        grads = []
        for a in args:
            if isinstance(a, Tensor):
                t = self.get(a)
                grads.append(t if t is not None else wrap(np.zeros_like(a._data), False, None))
            else:
                grads.append(None)
        self.busy = True
        try:
            out_t = cls.jvp(ctx, *grads)
        finally:
            self.busy = False
        outs = result if isinstance(result, tuple) else (result,)
        out_t = out_t if isinstance(out_t, tuple) else (out_t,)
        if len(out_t) != len(outs):
            raise RuntimeError(f"jvp: expected {len(outs)} tangents (one per output of forward),"
                               f" got {len(out_t)}")
        for o, t in zip(outs, out_t):
            if isinstance(o, Tensor) and isinstance(t, Tensor):
                if list(t._data.shape) != list(o._data.shape):
                    raise RuntimeError(f"jvp: tangent of shape {list(t._data.shape)} for an "
                                       f"output of shape {list(o._data.shape)}")
                self.set(o, t)


state = _State()
_RNG = np.random.default_rng(0)  # private: forward AD never shifts the user's random stream


def _shapes(inputs):
    return [list(x._data.shape) for x in inputs if isinstance(x, Tensor)]


def _hook(st):
    from .. import _meta
    from ..ops import _dispatch

    if st.level is not None:
        if _dispatch._fwd is _meta.state:
            raise NotImplementedError("forward AD: dual tensors cannot be made while meta "
                                      "tensors are alive (the two share the dispatcher's hook)")
        _dispatch._fwd = st
    else:
        _dispatch._fwd = _meta.state if _meta.arrays else None


def enter_dual_level():
    """Enters a new forward-AD level and returns its number; torch supports one at a time."""
    if state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    state.level = state.next_level
    state.next_level += 1
    return state.level


def exit_dual_level(*, level=None):
    """Leaves the current level; every tangent made in it is dropped."""
    if level is None:
        level = state.level
    if state.level is None or level != state.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    state.tangents.clear()
    state.level = None
    state.busy = False
    _hook(state)


class dual_level:
    """Context manager for forward AD: dual tensors made inside lose their tangents on exit.

    >>> import graphgrad as torch
    >>> import graphgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(torch.tensor([3.0]), torch.tensor([1.0])) ** 2
    ...     fwAD.unpack_dual(y).tangent
    tensor([6.])
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapped


def _check_level(level, api):
    if level is None:
        level = state.level
    if level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level != state.level:
        raise RuntimeError(f"{api}: level {level} is not the active dual level {state.level}")
    return level


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient. The tangent is used
    as is when its dtype and strides match the primal's, else copied into the primal's
    layout."""
    _check_level(level, "make_dual")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual(): expected Tensor arguments for primal and tangent")
    p, t = tensor._data, tangent._data
    if p.dtype.kind not in "fcV":
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if t.dtype.kind not in "fcV":
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if p.dtype.kind == "c" or t.dtype.kind == "c":
        raise NotImplementedError("forward AD: complex dual tensors are not supported")
    if p.shape != t.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(p.shape)} while the given forward gradient is of size "
                           f"{list(t.shape)}.")
    if t.dtype != p.dtype or t.strides != p.strides:
        copy = np.empty_like(p)
        copy[...] = t
        tangent = wrap(copy, False, None)
    state.busy = True
    try:
        dual = tensor.view_as(tensor)
    finally:
        state.busy = False
    state.set(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``UnpackedDualTensor(primal, tangent)``: a view of ``tensor`` without tangent, and the
    tangent (None outside a level or for a tensor that has none)."""
    if not isinstance(tensor, Tensor) or state.level is None:
        return UnpackedDualTensor(tensor, None)
    tangent = state.get(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    state.busy = True
    try:
        primal = tensor.view_as(tensor)
    finally:
        state.busy = False
    return UnpackedDualTensor(primal, tangent)
