"""The deprecated positional overloads torch 2.13 still accepts, with its once-per-process
deprecation warning: ``x.add_(2, y)`` for ``x.add_(y, alpha=2)``, ``torch.add(x, 2, y)``,
``torch.addcmul(x, 0.5, a, b)``, ``torch.addmm(beta, M, alpha, a, b)``, ``M.addmm_(beta, a, b)``
and the rest of torch's ``deprecated.yaml`` (add, sub, addcmul, addcdiv, addmm, addmv, addr,
addbmm, baddbmm; functions, methods and in-place methods). A call that matches no deprecated
form goes to the function unchanged."""

from __future__ import annotations

import functools
import sys
import warnings

from ._tensor import Tensor

_T, _N = "Tensor", "Number"
_OUT = ", *, Tensor out = None"
_BA = "*, Number beta = 1, Number alpha = 1"
# name -> (keyword, names of the tensors in the new form) for the three families
_FAMILY = {"add": ("alpha", ["other"]), "sub": ("alpha", ["other"]),
           "addcmul": ("value", ["tensor1", "tensor2"]),
           "addcdiv": ("value", ["tensor1", "tensor2"]),
           "addmm": (None, ["mat1", "mat2"]), "addmv": (None, ["mat", "vec"]),
           "addr": (None, ["vec1", "vec2"]), "addbmm": (None, ["batch1", "batch2"]),
           "baddbmm": (None, ["batch1", "batch2"])}
_OUT_DTYPE = {"addmm", "baddbmm"}  # torch lists a second new signature with out_dtype
_warned = set()


def _is_number(x):
    return isinstance(x, (int, float, complex)) and not isinstance(x, Tensor)


def _message(name, method, old, new):
    lines = [f"This overload of {name} is deprecated:", f"\t{name}({old})",
             "Consider using one of the following signatures instead:"]
    lines += [f"\t{name}({n})" for n in new]
    return "\n".join(lines)


def _warn(key, text):
    # torch warns from one TORCH_WARN_ONCE site for every deprecated overload: the first call
    # of any of them in a process warns, later ones are quiet (unless set_warn_always)
    from ._flags import is_warn_always_enabled

    if key not in _warned or is_warn_always_enabled():
        _warned.add(key)
        warnings.warn(text, UserWarning, stacklevel=_user_level())


def _user_level():
    """The stack level of the user's call: the first frame outside the wrappers' files."""
    from . import _out

    inside = (__file__, _out.__file__)
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename in inside:
        frame, level = frame.f_back, level + 1
    return level


def _forms(base, name, method):
    """The deprecated forms of ``name`` as (arity, number positions, rebuild, message), arity
    counting ``self`` for methods."""
    kw, tensors = _FAMILY[base]
    ts = ", ".join(f"Tensor {t}" for t in tensors)
    inp = "" if method else "Tensor input, "
    out = "" if method else _OUT
    if kw is not None:  # add/sub/addcmul/addcdiv: (input, Number kw, tensors...)
        n = len(tensors)
        new = [f"{inp}{ts}, *, Number {kw} = 1{out.replace(', *', '')}"]
        old = f"{inp}Number {kw}, {ts}{out}"
        return [(2 + n, (1,), lambda a, kw=kw: ((a[0],) + a[2:], {kw: a[1]}),
                 _message(name, method, old, new))]
    tail = out.replace(", *", "")
    new = [f"{inp}{ts}, {_BA}{tail}"]
    if base in _OUT_DTYPE and not method:
        new.append(f"{inp}{ts}, torch.dtype out_dtype, {_BA}{tail}")
    if method:  # self.addmm(beta, alpha, a, b) / self.addmm(beta, a, b)
        return [(5, (1, 2), lambda a: ((a[0], a[3], a[4]), {"beta": a[1], "alpha": a[2]}),
                 _message(name, method, f"Number beta, Number alpha, {ts}", new)),
                (4, (1,), lambda a: ((a[0], a[2], a[3]), {"beta": a[1]}),
                 _message(name, method, f"Number beta, {ts}", new))]
    return [(5, (0, 2), lambda a: ((a[1], a[3], a[4]), {"beta": a[0], "alpha": a[2]}),
             _message(name, method, f"Number beta, Tensor input, Number alpha, {ts}{out}", new)),
            (4, (0,), lambda a: ((a[1], a[2], a[3]), {"beta": a[0]}),
             _message(name, method, f"Number beta, Tensor input, {ts}{out}", new))]


def accept_deprecated(fn, name, method):
    """``fn`` also accepting torch's deprecated positional forms of ``name``."""
    forms = _forms(name.rstrip("_"), name, method)
    arities = {f[0] for f in forms}

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if len(args) in arities:
            for arity, numbers, rebuild, text in forms:
                if len(args) == arity and all(_is_number(args[i]) for i in numbers):
                    _warn("deprecated overload", text)
                    new_args, extra = rebuild(args)
                    return fn(*new_args, **extra, **kwargs)
        return fn(*args, **kwargs)

    return call


def install(namespace):
    """Wraps graphgrad's top-level functions (in ``namespace``) and the Tensor methods."""
    for base in _FAMILY:
        if base in namespace:
            namespace[base] = accept_deprecated(namespace[base], base, False)
        for name in (base, base + "_"):
            fn = Tensor.__dict__.get(name)
            if fn is not None:
                setattr(Tensor, name, accept_deprecated(fn, name, True))
