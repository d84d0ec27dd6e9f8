"""verify=: replays a compiled call eagerly from the same state and compares.

``verify=True`` checks the first call after each capture and every 16th call; an int ``n``
checks every n-th call. State (external tensors, gradients, optimizer state, the generator) is
snapshotted, the compiled call runs, the state is restored, the call runs eagerly under a new
capture, and outputs and state are compared. On a mismatch the first divergent IR value is
reported (warning) and the variant falls back to eager.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from .._tensor import Tensor

__all__ = ["due", "check", "VerifyError"]


class VerifyError(RuntimeError):
    pass


def due(verify, v) -> bool:
    if v.verify_next:
        return True
    every = 16 if verify is True else int(verify)
    return every > 0 and v.calls % every == 0


def _optimizers(graph):
    from ..optim.optimizer import Optimizer

    out = []
    for instr in graph.instrs:
        fn = instr.fn
        cells = getattr(fn, "__closure__", None) or ()
        for c in cells:
            try:
                obj = c.cell_contents
            except ValueError:
                continue
            if isinstance(obj, tuple):
                out.extend(o for o in obj if isinstance(o, Optimizer))
    return list(dict.fromkeys(out))


def _snapshot(v):
    from ..ops.random import default_generator

    tensors = [x.data for x in v.cap.graph.externals]
    tensors += [i.target for i in v.graph.instrs if isinstance(i.target, Tensor)]
    tensors = list({id(t): t for t in tensors}.values())
    opts = _optimizers(v.graph)
    return {
        "data": [(t, t._data.copy()) for t in tensors],
        "grad": [(t, None if t._grad is None else t._grad._data.copy()) for t in tensors],
        "opt": [(o, copy.deepcopy(o.state)) for o in opts],
        "rng": default_generator.get_state(),
    }


def _restore(snap):
    from .._tensor import wrap
    from ..ops.random import default_generator

    for t, d in snap["data"]:
        np.copyto(t._data, d)
    for t, g in snap["grad"]:
        t._grad = None if g is None else wrap(g.copy(), False, None)
    for o, st in snap["opt"]:
        o.state = copy.deepcopy(st)
    default_generator.set_state(snap["rng"])


def _state(snap):
    out = [t._data.copy() for t, _ in snap["data"]]
    out += [None if t._grad is None else t._grad._data.copy() for t, _ in snap["grad"]]
    return out


def _close(a, b):
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        tol = 1e-4 if a.dtype.itemsize <= 4 else 1e-9
        return bool(np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True))
    return bool(np.array_equal(a, b))


def check(cf, v, args, kwargs):
    """Verifies one call; returns (result, ok). The result is the eager one."""
    from .api import run_variant
    from .capture import capture, flatten

    v.verify_next = False
    snap = _snapshot(v)
    out_c = run_variant(v, args, kwargs)
    leaves_c: list = []
    flatten(out_c, leaves_c)
    arrays_c = [t._data.copy() for t in leaves_c]
    state_c = _state(snap)
    _restore(snap)
    cap, out_e = capture(cf.fn, args, kwargs, ext_names=cf._names())
    leaves_e: list = []
    flatten(out_e, leaves_e)
    state_e = _state(snap)
    ok = (len(leaves_c) == len(leaves_e)
          and all(_close(a, t._data) for a, t in zip(arrays_c, leaves_e))
          and all(_close(a, b) for a, b in zip(state_c, state_e)))
    if ok:
        return out_e, True
    where = _first_divergence(v, cap, snap, args, kwargs) if not cap.breaks else "a graph break"
    msg = (f"graphgrad.compile(verify=...): compiled and eager results differ for "
           f"{getattr(cf.fn, '__qualname__', cf.fn)}; first divergent value: {where}. "
           "Falling back to eager for these inputs.")
    warnings.warn(msg, stacklevel=3)
    v.runner = None
    v.reason = msg
    cf.last_mismatch = where
    return out_e, False


def _first_divergence(v, cap, snap, args, kwargs):
    """Replays the compiled graph with a plain Executor keeping every value, and compares each
    value with the eager capture's value at the same position of the captured instr list."""
    from .capture import flatten
    from .executor import Executor

    arr_of = {}
    for a in cap.keep:
        if isinstance(a, np.ndarray):
            val = cap.amap.get(id(a))
            if val is not None and val not in arr_of:
                arr_of[val] = a
    eager_by_pos = [[arr_of.get(o) if o is not None else None for o in instr.outs]
                    for instr in cap.graph.instrs]
    saved = _snapshot(v)
    _restore(snap)
    leaves: list = []
    flatten((args, kwargs), leaves)
    ex = Executor(v.graph)
    try:
        _, slots = ex.run(leaves, keep_all=True)
    finally:
        _restore(saved)
    for pos, instr in enumerate(v.pre):
        if pos >= len(eager_by_pos):
            break
        for o, e in zip(instr.outs, eager_by_pos[pos]):
            if o is None or e is None or o not in ex.slot:
                continue
            if not _close(slots[ex.slot[o]], e):
                site = f" ({instr.site})" if instr.site else ""
                label = f"[{instr.label}]" if instr.label else ""
                return f"instr #{pos} {o!r} = {instr.name}{label}(...){site}"
    return "outputs or state only (every compared intermediate value matches)"
