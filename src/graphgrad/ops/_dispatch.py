"""The single dispatch point: every op application in graphgrad passes through here.

It prepares input dtypes (torch promotion), calls the op's forward on raw arrays, and, when
grad mode is on and an input requires grad, records one graph Node. This is the eager hot path:
no shape inference (NumPy computes shapes), no per-call dict building.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .. import _step as _steps
from .._tensor import Tensor, version_cell, wrap
from ..autograd import cuts as _cuts
from ..autograd import sites as _sites
from ..autograd.grad_mode import state as _mode
from ..autograd.graph import hooks_open as _hooks_open
from ..autograd.graph import next_sequence, pack_saved

__all__ = ["apply", "unary", "binary"]

xp = np  # the only backend so far; see graphgrad/backends
# graphgrad.compile's recorder (compiler/trace.py): None except while a function is captured.
_tracer = None
# graphgrad.profiler's recorder while a profile is active (See Note [Profiler hook]).
_profiler = None
# forward AD's hook (autograd/forward_ad.py): None except while a dual tensor exists.
_fwd = None
_ndarray = np.ndarray
_asarray = np.asarray


_narrow = None  # ops/_narrow.py once bfloat16 is in use (set by _dtype), else None


def _edge(t):
    """The node a gradient for tensor ``t`` flows into, or None."""
    fn = t._fn
    if fn is not None:
        return fn
    if t._rg:
        return t._accumulator()
    return None


def _scalar(x):
    """Python scalars are weak operands; NumPy scalars are treated as Python ones, as in torch."""
    t = type(x)
    if t is float or t is int or t is bool:
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (float, int, complex)):
        return x
    raise TypeError(f"unsupported operand type {t.__name__}; expected a Tensor or a number")


def _fits(value: int, dtype) -> bool:
    info = _INT_RANGES.get(dtype)
    if info is None:
        info = _INT_RANGES[dtype] = (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    return info[0] <= value <= info[1]


_INT_RANGES: dict = {}


def _wrapped(value, like):
    """A Python int outside an integer tensor's range wraps around, as in torch (uint8: -1 is
    255), as a 0-d array of the tensor's dtype."""
    return np.asarray(value).astype(like.dtype)


def _default_float():
    return _dtype._defaults.float.np


def _promote_arrays(arrays, inputs, to_float):
    """Casts the array inputs to torch's result dtype; scalars stay weak."""
    dims, zeros, scalars = [], [], []
    for a, x in zip(arrays, inputs):
        if type(a) is _ndarray:
            (dims if a.ndim else zeros).append(_dtype.from_numpy_dtype(a.dtype))
        elif a is not None and not isinstance(x, (tuple, list, slice)):
            scalars.append(a)
    target = _dtype.combine(dims, zeros, scalars)
    if target is None:
        return arrays
    target = target.np
    if to_float and target.kind not in "fc":
        target = _default_float()
    return [a.astype(target) if type(a) is _ndarray and a.dtype != target else a for a in arrays]


def _new_node(op, edges, meta, params):
    """A graph node for one application of ``op``; its saved values are set by the caller."""
    node = op.node_cls()
    node._op = op
    node._next = edges
    node._meta = meta
    node._params = params
    node._seq = next_sequence()
    node._step = step = _steps._count
    _steps.live_nodes[step] += 1
    node._extra = None
    # See Note [Sites]: the user's line is recorded only when diagnostics ask for it.
    node._site = _sites.capture(3) if _sites.state.on else None
    return node


def _record(op, inputs, arrays_meta, out, params, aux=None):
    """Makes the Node for ``out``; returns the output tensor."""
    node = _new_node(op, tuple(_edge(x) if isinstance(x, Tensor) else None for x in inputs),
                     arrays_meta, params)
    save = op.save
    result = wrap(out, True, node)
    if save:
        node._saved = tuple(_saved_value(op, inputs, s, out, aux) for s in save)
        node._versions = _versions(op, inputs, result)
        if _hooks_open:  # saved_tensors_hooks active (autograd/graph.py)
            pack_saved(node, result)
    else:
        node._saved = ()
        node._versions = None
    return result


def _versions(op, inputs, result):
    """(version cell, version at save time) for each saved tensor and a saved output.

    See Note [Saved versions]: an in-place change of a saved value bumps its cell, and the
    engine refuses to use it.
    """
    pairs = []
    for s in op.save:
        if s == "out":
            cell = result._vc = [0]
            pairs.append((cell, 0))
        elif s != "aux":
            x = inputs[s]
            if isinstance(x, Tensor):
                cell = version_cell(x)
                pairs.append((cell, cell[0]))
    return tuple(pairs)


def _saved_value(op, inputs, s, out, aux):
    if s == "out":
        return out
    if s == "aux":
        return aux
    x = inputs[s]
    if isinstance(x, Tensor) and x._inf:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. To work around you can make a "
            "clone to get a normal tensor and use it in autograd. "
            f"(op: {op.name}, input {s} of shape {list(x._data.shape)})"
        )
    return x


def _forward_error(op, inputs, err):
    """Turns a NumPy error into the exception torch raises, naming the op and the shapes."""
    shapes = [list(x._data.shape) if isinstance(x, Tensor) else x for x in inputs
              if isinstance(x, Tensor)]
    if isinstance(err, np.exceptions.AxisError):
        return IndexError(f"{op.name}: Dimension out of range ({err})")
    if isinstance(err, MemoryError):  # torch: RuntimeError naming the bytes
        from ._alloc_error import alloc_error

        return alloc_error(err, f"{op.name}, input shapes {shapes}")
    msg = str(err)
    if "broadcast" in msg:
        return RuntimeError(_broadcast_message(op, shapes))
    return RuntimeError(f"{op.name}: {msg} (input shapes: {shapes})")


def _broadcast_message(op, shapes):
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else shapes[0]
    for k in range(1, max(len(a), len(b)) + 1):
        sa = a[-k] if k <= len(a) else 1
        sb = b[-k] if k <= len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            dim = max(len(a), len(b)) - k
            return (f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {dim} (in {op.name}: shapes {a} and {b})")
    return f"{op.name}: shapes {shapes} cannot be broadcast together"


def _run(op, arrays, params, inputs):
    try:
        if params:
            return op.forward(xp, *arrays, **params)
        return op.forward(xp, *arrays)
    except (ValueError, MemoryError) as err:  # NumPy's shape errors; torch: RuntimeError
        raise _forward_error(op, inputs, err) from None


def _with_scalar(op, arr, scalar):
    """Prepares a tensor's array and a weak Python scalar operand: a float scalar (or a
    float-valued op) lifts an integral tensor to the default float dtype, and an int scalar
    outside an integer tensor's range wraps. Returns (array, scalar operand)."""
    kind = arr.dtype.kind
    if kind != "f" and kind != "c":
        if type(scalar) is complex:  # NumPy would widen an int tensor to complex128
            return arr.astype(_dtype.default_complex().np), scalar
        if op.dtype_rule == "float" or type(scalar) is float:
            return arr.astype(_default_float()), scalar
        if kind in "iu" and type(scalar) is int and not _fits(scalar, arr.dtype):
            return arr, _wrapped(scalar, arr)
    return arr, scalar


def unary(op, x, params=None):
    """Applies a one-input op to tensor ``x``."""
    if _profiler is not None and not _profiler.busy:
        return _profiler.run(unary, op, (x, params))
    if _fwd is not None and not _fwd.busy:
        return _fwd.run(unary, op, (x, params))
    if _narrow is not None and (r := _narrow.unary(op, x, params)) is not NotImplemented:
        return r  # a bfloat16 operand: computed in float32 (Note [bfloat16])
    if x._view is not None and x._view[3] != x._vc[0]:
        _refresh_view(x)
    a = x._data
    if op.dtype_rule == "float" and a.dtype.kind not in "fc":
        a = a.astype(_default_float())
    try:
        out = op.forward(xp, a, **params) if params else op.forward(xp, a)
    except (ValueError, MemoryError) as err:
        raise _forward_error(op, (x,), err) from None
    if type(out) is not _ndarray:
        out = _asarray(out)
    if _tracer is not None:
        _tracer.record(op, (x,), (a,), params, out)
    if (x._rg and _mode.grad_enabled and op.vjp is not None
            and (kind := out.dtype.kind) in "fcV" and not _mode.inference):  # V: bfloat16
        if kind == "c" or a.dtype.kind == "c":  # See Note [Complex rules]
            op = complex_op(op)
        fn = x._fn
        node = _new_node(op, (fn if fn is not None else x._accumulator(),),
                         ((x._data.shape, x._data.dtype),), params)
        result = wrap(out, True, node)
        save = op.save
        if not save:
            node._saved = ()
            node._versions = None
        elif save[0] == "out" and len(save) == 1:
            node._saved = (out,)
            cell = result._vc = [0]
            node._versions = ((cell, 0),)
        else:
            node._saved = tuple(_saved_value(op, (x,), s, out, None) for s in save)
            node._versions = _versions(op, (x,), result)
        if save and _hooks_open:
            pack_saved(node, result)
        if op.view:
            _track_view(op, params, x, result, None)
        return result
    if x._rg and _mode.grad_enabled and not _mode.inference:
        _cuts.note_op(op, (x,))  # an op with no derivative cut the graph (why_no_grad)
    if x._rg and _mode.grad_enabled and not _mode.inference:
        _cuts.note_op(op, (x,))  # an op with no derivative cut the graph (why_no_grad)
    result = wrap(out, False, None)
    if op.view:
        creation = None
        if x._rg and not _mode.inference:
            # A view made under no_grad still requires grad (as a leaf), as in torch.
            result._rg = True
            creation = "no_grad"
        _track_view(op, params, x, result, creation)
    return result


def _track_view(op, params, x, result, creation):
    """Note [Views]: a view shares its input's storage and version cell, and remembers its base
    and the chain of view ops from it, so that in-place changes can rebase histories."""
    cell = result._vc = version_cell(x)
    # a view is an inference tensor iff its base is, whatever the mode it was made in
    result._inf = x._inf
    info = x._view
    if info is None:
        result._view = [x, ((op, params),), creation, cell[0]]
    else:
        if creation is None:
            creation = info[2]
        result._view = [info[0], info[1] + ((op, params),), creation, cell[0]]


def binary(op, a, b, params=None):
    """Applies a two-input elementwise op; either side may be a Python scalar."""
    if _profiler is not None and not _profiler.busy:
        return _profiler.run(binary, op, (a, b, params))
    if _fwd is not None and not _fwd.busy:
        return _fwd.run(binary, op, (a, b, params))
    if _narrow is not None and (r := _narrow.binary(op, a, b, params)) is not NotImplemented:
        return r
    if isinstance(a, Tensor):
        if a._view is not None and a._view[3] != a._vc[0]:
            _refresh_view(a)
        da = a._data
        if isinstance(b, Tensor):
            if b._view is not None and b._view[3] != b._vc[0]:
                _refresh_view(b)
            db = b._data
            if da.dtype != db.dtype:
                da, db = _promote_arrays((da, db), (a, b), op.dtype_rule == "float")
            elif op.dtype_rule == "float" and da.dtype.kind not in "fc":
                f = _default_float()
                da, db = da.astype(f), db.astype(f)
            tb = True
        else:
            tb = False
            tp = type(b)
            if tp is not float and tp is not int:
                b = _scalar(b)
            da, db = _with_scalar(op, da, b)
        ta = True
    else:
        ta = False
        tp = type(a)
        if tp is not float and tp is not int:
            a = _scalar(a)
        if b._view is not None and b._view[3] != b._vc[0]:
            _refresh_view(b)
        db, da = _with_scalar(op, b._data, a)
        tb = True
    try:
        out = op.forward(xp, da, db, **params) if params else op.forward(xp, da, db)
    except (ValueError, MemoryError) as err:
        raise _forward_error(op, (a, b), err) from None

    if type(out) is not _ndarray:
        out = _asarray(out)
    if _tracer is not None:
        _tracer.record(op, (a, b), (da, db), params, out)
    if not _mode.grad_enabled or op.vjp is None or _mode.inference:
        if op.vjp is None and _mode.grad_enabled and not _mode.inference:
            _cuts.note_op(op, (a, b))
        return wrap(out, False, None)
    kind = out.dtype.kind
    if kind != "f":
        if kind != "c":
            _cuts.note_op(op, (a, b))  # a comparison: bool output, no history
            return wrap(out, False, None)
        op = complex_op(op)  # See Note [Complex rules]
    ea = eb = None
    if ta:
        if a._rg:
            ea = a._fn
            if ea is None:
                ea = a._accumulator()
        ma = (a._data.shape, a._data.dtype)
    else:
        ma = None
    if tb:
        if b._rg:
            eb = b._fn
            if eb is None:
                eb = b._accumulator()
        mb = (b._data.shape, b._data.dtype)
    else:
        mb = None
    if ea is None and eb is None:
        return wrap(out, False, None)
    node = _new_node(op, (ea, eb), (ma, mb), params)
    result = wrap(out, True, node)
    save = op.save
    if not save:
        node._saved = ()
        node._versions = None
    else:
        if (ta and a._inf) or (tb and b._inf):
            for s in save:
                _saved_value(op, (a, b), s, out, None)  # raises for a saved inference tensor
        if save == _SAVE_BOTH:
            node._saved = (a, b)
            # Inline _versions for the common case: only tensor inputs carry a version cell.
            if ta and tb:
                ca = a._vc or version_cell(a)
                cb = b._vc or version_cell(b)
                node._versions = ((ca, ca[0]), (cb, cb[0]))
            else:
                t = a if ta else b
                c = t._vc or version_cell(t)
                node._versions = ((c, c[0]),)
        else:
            node._saved = tuple(out if s == "out" else (a, b)[s] for s in save)
            node._versions = _versions(op, (a, b), result)
        if _hooks_open:
            pack_saved(node, result)
    return result


_SAVE_BOTH = (0, 1)


def apply(op, inputs, params=None):
    """Applies any op; ``inputs`` holds tensors, scalars, None, or other plain arguments.

    Returns the output tensor, or ``(tensor, aux)`` for an op whose forward returns an
    auxiliary array too (declared by saving ``"aux"``, e.g. the indices of ``max(dim)``).
    """
    if _profiler is not None and not _profiler.busy:
        return _profiler.run(apply, op, (inputs, params))
    if _fwd is not None and not _fwd.busy:
        return _fwd.run(apply, op, (inputs, params))
    if _narrow is not None and (r := _narrow.apply(op, inputs, params)) is not NotImplemented:
        return r
    for x in inputs:
        if isinstance(x, Tensor) and x._view is not None and x._view[3] != x._vc[0]:
            _refresh_view(x)
    arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    rule = op.dtype_rule
    if rule != "same":
        arrays = _promote_arrays(arrays, inputs, rule == "float")
    out = _run(op, arrays, params, inputs)
    aux = None
    if "aux" in op.save:
        out, aux = out
    if type(out) is not _ndarray:
        out = _asarray(out)
    if _tracer is not None:
        _tracer.record(op, inputs, arrays, params, out, aux)
    rg = False
    if op.vjp is not None and _mode.grad_enabled and out.dtype.kind in "fcV" \
            and not _mode.inference:  # V: bfloat16 views (Note [bfloat16])
        for x in inputs:
            if isinstance(x, Tensor) and x._rg:
                rg = True
                break
    if rg:
        if out.dtype.kind == "c" or any(type(a) is _ndarray and a.dtype.kind == "c"
                                        for a in arrays):
            op = complex_op(op)  # See Note [Complex rules]
        meta = tuple((x._data.shape, x._data.dtype) if isinstance(x, Tensor) else None
                     for x in inputs)
        result = _record(op, inputs, meta, out, params, aux)
    else:
        if (_mode.grad_enabled and not _mode.inference
                and (op.vjp is None or out.dtype.kind not in "fc")):
            _cuts.note_op(op, inputs)  # no derivative, or an integer/bool result
        result = wrap(out, False, None)
    return (result, aux) if "aux" in op.save else result


# Note [Complex rules]: torch's gradient for a complex input z is conj(dL/dz) * 2 ... written as
# g * conj(f'(z)) for a holomorphic f. A rule written for real values computes g * f'(z) and is
# linear in g, so conj(rule(conj(g))) is torch's gradient for every holomorphic op (add, mul,
# div, exp, matmul, sum, ...); a real input then keeps the real part (the engine's cast).
# Ops that are not holomorphic (abs, angle, real, imag, conj, view_as_real, ...) register their
# own record here (ops/complex.py); complex_op() is called only when a node is recorded.
_COMPLEX_OPS: dict = {}


def _conjugated(rule):
    def vjp(ns, g, *args, **kw):
        grads = rule(ns, ns.conj(g), *args, **kw)
        if type(grads) is tuple:
            return tuple(None if gi is None else ns.conj(gi) for gi in grads)
        return ns.conj(grads)
    return vjp


def complex_op(op):
    """The record used for ``op`` when a complex value flows through it."""
    twin = _COMPLEX_OPS.get(op)
    if twin is None:
        import copy

        twin = _COMPLEX_OPS[op] = copy.copy(op)
        twin.vjp = _conjugated(op.vjp)
    return twin


from .views import refresh as _refresh_view  # noqa: E402 - views builds on this module
