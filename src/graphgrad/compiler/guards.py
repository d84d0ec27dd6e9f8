"""Guards: what a capture assumed about its call, checked before each replay.

A variant is keyed by the call's structure: each tensor argument's shape, dtype and
requires_grad, every other argument's value, grad mode, and the train/eval flags and parameter
identities of the modules involved. External tensors (parameters, buffers) are checked for
shape, dtype and requires_grad. The Python state the capture read (globals, closure cells,
attributes, ``Dropout.p``; pyguards.py) is checked last. A failing guard names itself, so a
recompile warning can say why. ``RECOMPILE_LIMIT`` variants at most, as torch.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..autograd.grad_mode import state as _mode

__all__ = ["Guards", "call_key", "RECOMPILE_LIMIT"]

RECOMPILE_LIMIT = 8
_EMPTY_KW = ("dict",)


def _leaf_key(x):
    if isinstance(x, Tensor):
        d = x._data
        return ("T", d.shape, d.dtype.str, x._rg)
    if isinstance(x, (list, tuple)) and type(x) in (list, tuple):
        return (type(x).__name__,) + tuple(_leaf_key(e) for e in x)
    if isinstance(x, dict) and type(x) is dict:
        return ("dict",) + tuple((k, _leaf_key(v)) for k, v in x.items())
    try:
        hash(x)
        return ("L", type(x).__name__, x)
    except TypeError:
        return ("id", id(x))


def _describe(path, a, b):
    """A readable reason for the first difference between two keys."""
    if isinstance(a, tuple) and isinstance(b, tuple) and a and b and a[0] == "T" == b[0]:
        for name, i in (("shape", 1), ("dtype", 2), ("requires_grad", 3)):
            if a[i] != b[i]:
                return f"{path}: {name} changed from {a[i]} to {b[i]}"
    if (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and a and b
            and a[0] == b[0] and a[0] not in ("L", "T", "id")):
        for i, (x, y) in enumerate(zip(a[1:], b[1:])):
            if x != y:
                return _describe(f"{path}[{i}]", x, y)
    if isinstance(a, tuple) and a and a[0] == "L":
        return f"{path}: Python value changed from {a[2]!r} to {b[2]!r}" if (
            isinstance(b, tuple) and b and b[0] == "L") else f"{path} changed"
    return f"{path} changed"


def call_key(args, kwargs, modules):
    """The guard key of one call (cheap: tuples of shapes, dtypes and flags)."""
    if not kwargs and not modules:
        # the common call: positional tensors only (the same key as the general path)
        try:
            ak = tuple([("T", x._data.shape, x._data.dtype.str, x._rg) if type(x) is Tensor
                        else _leaf_key(x) for x in args])
        except AttributeError:
            ak = None
        if ak is not None:
            return (("tuple",) + ak, _EMPTY_KW, _mode.grad_enabled, _mode.inference, ())
    mods = tuple((tuple(m.training for m in mod.modules()),
                  tuple(id(p) for p in mod.parameters()),
                  tuple(id(b) for b in mod.buffers())) for mod in modules)
    return (_leaf_key(args), _leaf_key(kwargs), _mode.grad_enabled, _mode.inference, mods)


class Guards:
    """The guards of one variant: the call key plus external-tensor checks."""

    def __init__(self, key, graph, py=None):
        self.key = key
        self.externals = [(v.data, v.shape, v.dtype, v.data._rg) for v in graph.externals]
        # pyguards.PyGuards: the Python values the capture read (None: it read none)
        self.py = py if py is not None else getattr(graph, "py_guards", None)

    def check(self, key):
        """None when the variant applies, else the first failed guard in words."""
        if key != self.key:
            return self.explain(key)
        for t, shape, dtype, rg in self.externals:
            d = t._data
            if d.shape != shape or d.dtype != dtype:
                return (f"captured tensor of shape {list(shape)} changed to "
                        f"{list(d.shape)} {d.dtype}")
            if t._rg != rg:
                return "captured tensor's requires_grad changed"
        py = self.py
        if py is not None:
            return py.check()
        return None

    def explain(self, key):
        names = ("args", "kwargs", "grad mode", "inference mode", "modules")
        for name, a, b in zip(names, self.key, key):
            if a != b:
                if name == "modules":
                    for (ta, pa, ba), (tb, pb, bb) in zip(a, b):
                        if ta != tb:
                            return "module train/eval mode changed"
                        if pa != pb or ba != bb:
                            return "module parameter identities changed"
                    return "modules changed"
                if name == "grad mode":
                    return f"grad mode changed from {a} to {b}"
                return _describe(name, a, b)
        return "guard failed"

    def lines(self):
        """The guards in words, for explain."""
        out = [f"grad_enabled == {self.key[2]}"]
        for i, k in enumerate(self.key[0]) if isinstance(self.key[0], tuple) else ():
            out.append(f"args[{i}]: {k}")
        out.append(f"{len(self.externals)} captured tensors keep shape, dtype, requires_grad")
        if self.key[4]:
            out.append("module train/eval flags and parameter identities unchanged")
        if self.py is not None:
            out.extend(self.py.lines())
        return out
