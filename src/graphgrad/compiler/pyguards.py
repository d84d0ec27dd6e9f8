"""Guards on the Python state a capture read, and detection of its Python side effects.

While ``graphgrad.compile`` captures a call, ``StateTrace`` traces the capturing thread's user
frames opcode by opcode (``sys.settrace`` with ``f_trace_opcodes``) and follows the values that
``LOAD_GLOBAL``, ``LOAD_DEREF``, ``LOAD_ATTR``/``LOAD_METHOD``, ``BINARY_SUBSCR`` and
``GET_ITER`` take from state that outlives the call. Every such read becomes a guard, checked
before each replay: numbers, bools, strings, None, enums and tuples of them by value, other
objects (tensors, modules, functions) by identity. The stores and mutations a replay would drop
(``STORE_GLOBAL``, ``STORE_DEREF`` of an outer cell, ``STORE_ATTR``/``STORE_SUBSCR`` and
mutating methods on outliving objects, ``print``/logging/Python RNG calls, an LR scheduler's
``step``) are returned as graph breaks naming the line. See Note [Python-state guards].
"""

from __future__ import annotations

import builtins
import collections
import dis
import enum
import logging
import math
import random as _pyrandom
import sys
import sysconfig
import threading
import types
import warnings

from .._tensor import Tensor
from ..ops import _dispatch
from .trace import GraphBreak

__all__ = ["StateTrace", "PyGuards"]

# Note [Python-state guards]: the capture records tensor ops; Python values a function reads
# (a global float, a closure's tensor, ``self.temperature``, ``Dropout.p``) are baked into the
# graph. So the capture call's frames are traced: outside graphgrad every user frame (not the
# standard library, not site-packages), and inside graphgrad the nn.Module code, where only
# ``self.<attr>`` reads of modules are followed (``Dropout.p``, ``LeakyReLU.negative_slope``,
# the parameters of a module reached through a global). A small symbolic stack per frame,
# updated along the executed path, knows which object each LOAD_ATTR/STORE_ATTR/subscript
# works on; any instruction it does not model forgets the stack (unknown operands), which only
# ever makes it more conservative. An object "outlives the call" when it was reached from the
# call's arguments, the compiled modules, a global, a closure cell of a function that existed
# before the call, or an attribute/item/element of such an object. Reads of objects made during
# the call are not guarded; stores into them are allowed. A store whose target the stack does
# not know is checked at the end of the capture against a snapshot of the outliving objects.

_get_ident = threading.get_ident
_MISSING = object()
_UNKNOWN = object()  # a value the tracer cannot know without running code
_LIMIT = 2000  # objects snapshotted per capture, at most (large containers are not walked)
_BIG = 4096  # containers longer than this have their length guarded, not every entry

_PREFIXES = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                        "platlib") if sysconfig.get_paths().get(k)})
_GG_DIR = __file__.rsplit("/compiler/", 1)[0] if "/compiler/" in __file__ else None
_kinds: dict = {}


def _frame_kind(code):
    """"user", "lib" (graphgrad's nn.Module code: self.<attr> reads only) or None."""
    kind = _kinds.get(code)
    if kind is None:
        from ..autograd.sites import _is_internal

        f = code.co_filename
        if _is_internal(f):
            f = f.replace("\\", "/")
            # the modules' own code; not the Module base class (hooks, __getattr__)
            kind = "lib" if "/nn/modules/" in f and not f.endswith("/module.py") else ""
        elif f.startswith("<frozen") or f.startswith(_PREFIXES):
            kind = ""
        else:
            kind = "user"
        _kinds[code] = kind
    return kind or None


_instrs: dict = {}


def _instructions(code):
    table = _instrs.get(code)
    if table is None:
        table = _instrs[code] = {i.offset: i for i in dis.get_instructions(code)}
    return table


# -- values ------------------------------------------------------------------------------
_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_CODE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
               types.ModuleType, types.MethodDescriptorType, types.WrapperDescriptorType,
               staticmethod, classmethod)


def _by_value(v) -> bool:
    t = type(v)
    if t in _SCALARS:
        return True
    if isinstance(v, tuple) and not isinstance(v, enum.Enum):
        return len(v) <= 64 and all(_by_value(e) for e in v)
    return False


def _vkey(v):
    """A comparison key that tells 0.0 from -0.0 and equates NaNs (so a NaN global does not
    fail its guard on every call)."""
    t = type(v)
    if t is float:
        return (float, "nan") if v != v else (float, v, math.copysign(1.0, v))
    if isinstance(v, tuple):
        return (t,) + tuple(_vkey(e) for e in v)
    return (t, v)


def static_attr(obj, name):
    """``getattr(obj, name)`` when it runs no code (instance dict, plain class attribute, a
    Module's parameters/buffers/submodules, a Python module's dict); else _UNKNOWN."""
    if isinstance(obj, types.ModuleType):
        return obj.__dict__.get(name, _UNKNOWN)
    t = type(obj)
    cls_val = _MISSING
    for k in t.__mro__:
        kd = k.__dict__
        if name in kd:
            cls_val = kd[name]
            break
    if cls_val is not _MISSING:
        ct = type(cls_val)
        if hasattr(ct, "__set__") or hasattr(ct, "__delete__"):
            return _UNKNOWN  # a data descriptor (property, slot): code or C state
    if t.__getattribute__ is not object.__getattribute__ and not isinstance(obj, type):
        from ..nn.modules.module import Module

        if not isinstance(obj, Module):
            return _UNKNOWN
    try:
        d = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        d = None
    if isinstance(obj, type):
        for k in obj.__mro__:
            if name in k.__dict__:
                v = k.__dict__[name]
                return _UNKNOWN if hasattr(type(v), "__get__") else v
        return _UNKNOWN
    if d is not None and name in d:
        return d[name]
    if cls_val is not _MISSING:
        if hasattr(type(cls_val), "__get__"):
            return _UNKNOWN  # a method or other descriptor: code, not state
        return cls_val
    if d is not None:
        for store in ("_parameters", "_buffers", "_modules"):
            members = d.get(store)
            if type(members) is dict and name in members:
                return members[name]
    return _UNKNOWN


def _module_sig(m):
    """What the call key guards for a compiled module, for a module reached otherwise (a
    global, a closure): every submodule's identity and train flag, parameter and buffer
    identities."""
    # a walk over the modules' own dicts (Module.modules() and parameters() are generators
    # several times slower; this runs on every call)
    out = []
    add, stack = out.append, [m]
    pop, push = stack.pop, stack.extend
    while stack:
        s = pop()
        d = s.__dict__
        add(id(s))
        add(d.get("training"))
        for store in (d.get("_parameters"), d.get("_buffers")):
            if store:
                out.extend(map(id, store.values()))
            add(None)
        subs = d.get("_modules")
        if subs:
            push(subs.values())
    return tuple(out)


def _runs_python(obj, name) -> bool:
    """Whether ``getattr(obj, name)`` would run Python code (a property, a Python
    ``__getattribute__``/``__getattr__``): that code runs in a traced frame, whose own reads
    are guarded."""
    t = type(obj)
    if isinstance(getattr(t, "__getattribute__", None), types.FunctionType):
        return True
    for k in t.__mro__:
        if name in k.__dict__:
            v = k.__dict__[name]
            return isinstance(v, property) or isinstance(
                getattr(type(v), "__get__", None), types.FunctionType)
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict) and name in d:
        return False
    return isinstance(getattr(t, "__getattr__", None), types.FunctionType)


def c_attr(obj, name):
    """``getattr`` for an attribute that runs no Python code (C types' own lookups)."""
    try:
        return getattr(obj, name, _MISSING)
    except Exception:  # noqa: BLE001 - an attribute that cannot be read is not guardable
        return _UNKNOWN


def _item(container, key):
    try:
        if type(container) is dict or isinstance(container, collections.OrderedDict):
            return dict.get(container, key, _MISSING)
        if type(container) in (list, tuple) and type(key) is int:
            return container[key] if -len(container) <= key < len(container) else _MISSING
    except TypeError:
        return _MISSING
    return _UNKNOWN


def _contents(container):
    if type(container) in (list, tuple):
        return tuple(container)
    if type(container) is dict:
        return tuple(container.items())
    if type(container) is set:
        return tuple(sorted(map(id, container)))
    return _UNKNOWN


# -- guards ------------------------------------------------------------------------------
class _Guard:
    __slots__ = ("kind", "base", "name", "value", "by_value", "key", "site", "text")

    def __init__(self, kind, base, name, value, site, text):
        self.kind, self.base, self.name, self.value = kind, base, name, value
        self.by_value = kind != "contents" and _by_value(value)
        self.key = _vkey(value) if self.by_value else None
        self.site, self.text = site, text

    def current(self):
        k, b, n = self.kind, self.base, self.name
        if k == "global":
            return b.get(n, _MISSING)
        if k == "builtin":
            return _MISSING if n in b[0] else b[1].get(n, _MISSING)
        if k == "cell":
            try:
                return b.cell_contents
            except ValueError:
                return _MISSING
        if k == "attr":
            return static_attr(b, n)
        if k == "getattr":
            return c_attr(b, n)
        if k == "item":
            return _item(b, n)
        if k == "module":
            return _module_sig(b)
        if k == "len":
            return len(b)
        return _contents(b)

    def holds(self, cur=_MISSING):
        cur = self.current() if cur is _MISSING else cur
        if self.by_value:
            return cur is self.value or (type(cur) is type(self.value)
                                         and _vkey(cur) == self.key)
        if self.kind == "contents":
            return (cur is not _UNKNOWN and len(cur) == len(self.value)
                    and all(_same(a, b) for a, b in zip(cur, self.value)))
        if self.kind == "module":
            return cur == self.value
        return cur is self.value

    def describe(self):
        v = self.value
        if self.kind == "module":
            return f"{self.text}: submodules, train/eval flags and parameters unchanged"
        if self.kind == "contents":
            return f"contents of {self.text} ({len(v)} entries) unchanged"
        if self.by_value:
            return f"{self.text} == {v!r}"
        return f"{self.text} is the same {type(v).__name__} object"

    def failure(self):
        cur = self.current()
        if cur is _MISSING:
            now = "is gone"
        elif self.kind == "module":
            now = "changed (a submodule, train/eval flag or parameter)"
        elif self.by_value or self.kind == "contents":
            now = f"changed from {_short(self.value)} to {_short(cur)}"
        else:
            now = f"now refers to another {type(cur).__name__} (identity guard)"
        return f"{self.text} {now} (guard on the read at {self.site})"


def _same(a, b):
    if a is b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2:
        return a[0] == b[0] and _same(a[1], b[1])  # dict items
    return _by_value(a) and type(a) is type(b) and _vkey(a) == _vkey(b)


def _short(v):
    r = repr(v) if not isinstance(v, tuple) or len(v) < 8 else f"<{len(v)} entries>"
    return r if len(r) <= 60 else r[:57] + "..."


class PyGuards:
    """The Python-state guards of one capture; ``check()`` is None or the first failed guard
    in words."""

    def __init__(self, guards):
        self.guards = guards
        self._fast = _generate(guards)

    def check(self):
        i = self._fast()
        if i < 0:
            return None
        return self.guards[i].failure()

    def lines(self):
        return [f"{g.describe()}  [read at {g.site}]" for g in self.guards]

    def __len__(self):
        return len(self.guards)


def _generate(guards):
    """One straight-line function of all guards (returns the index of the first failing one,
    or -1): identity guards are one ``is``, value guards a type test and an ``==``."""
    env = {"_MISSING": _MISSING, "static_attr": static_attr, "_item": _item, "_g": guards,
           "ValueError": ValueError, "_type": type}
    body = []
    for i, g in enumerate(guards):
        env[f"B{i}"] = g.base
        env[f"V{i}"] = g.value
        k = g.kind
        if k == "global":
            env[f"N{i}"] = g.name
            expr = f"B{i}.get(N{i}, _MISSING)"
        elif k == "cell":
            expr = f"B{i}.cell_contents"
        elif k == "attr":
            env[f"N{i}"] = g.name
            d = getattr(g.base, "__dict__", None)
            if (isinstance(d, dict) and g.name in d and not isinstance(g.base, type)
                    and not any(g.name in c.__dict__ for c in type(g.base).__mro__)):
                env[f"D{i}"] = d  # the instance dict itself (it is never replaced)
                expr = f"D{i}.get(N{i}, _MISSING)"
            else:
                expr = f"static_attr(B{i}, N{i})"
        else:
            body.append(f"    if not _g[{i}].holds(): return {i}")
            continue
        v = g.value
        if v is None or type(v) is bool:
            test = f"x is not V{i}"  # singletons
        elif g.by_value and type(v) in (int, str) or (type(v) is float and v == v and v) or (
                type(v) is tuple and all(type(e) in (int, str, bool) for e in v)):
            test = f"_type(x) is not _type(V{i}) or x != V{i}"
        elif g.by_value:
            body.append(f"    if not _g[{i}].holds(): return {i}")
            continue
        else:
            test = f"x is not V{i}"
        body.append(f"    x = {expr}")
        body.append(f"    if {test}: return {i}")
    src = "def check():\n    try:\n" + "\n".join("    " + ln for ln in body or ["    pass"])
    src += "\n    except ValueError:\n        return next(i for i, g in enumerate(_g) " \
           "if not g.holds())\n    return -1\n"
    exec(compile(src, "<graphgrad guards>", "exec"), env)  # noqa: S102 - built from indices
    return env["check"]


# -- effects -----------------------------------------------------------------------------
_MUTATORS = {
    list: {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
           "__setitem__", "__delitem__", "__iadd__"},
    dict: {"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__"},
    set: {"add", "discard", "remove", "pop", "clear", "update", "difference_update",
          "intersection_update", "symmetric_difference_update"},
    bytearray: {"append", "extend", "insert", "pop", "remove", "clear", "reverse"},
    collections.deque: {"append", "appendleft", "extend", "extendleft", "pop", "popleft",
                        "remove", "clear", "rotate", "insert"},
}
_MUTATOR_NAMES = set().union(*_MUTATORS.values())
_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}


def _effectful_values():
    import numpy as np

    vals = {id(print): "print()", id(builtins.input): "input()",
            id(warnings.warn): "warnings.warn()"}
    for name in _LOG_METHODS | {"basicConfig"}:
        f = getattr(logging, name, None)
        if f is not None:
            vals[id(f)] = f"logging.{name}()"
    for name in dir(_pyrandom):
        f = getattr(_pyrandom, name)
        if isinstance(f, types.MethodType) and f.__self__ is _pyrandom._inst:
            vals[id(f)] = f"random.{name}() (Python's global generator)"
    import graphgrad as _gg

    for name in ("manual_seed", "seed", "set_rng_state", "set_default_dtype",
                 "set_default_device", "set_default_tensor_type", "use_deterministic_algorithms",
                 "set_printoptions", "set_num_threads"):
        f = getattr(_gg, name, None)
        if f is not None:
            vals[id(f)] = f"graphgrad.{name}() (process-wide state)"
    for name in ("manual_seed", "seed", "set_state"):
        f = getattr(getattr(_gg, "Generator", None), name, None)
        if f is not None:
            vals[id(f)] = f"Generator.{name}()"
    rs = getattr(np.random, "mtrand", None)
    rs = getattr(rs, "_rand", None)
    for name in dir(np.random):
        f = getattr(np.random, name, None)
        if getattr(f, "__self__", None) is rs and rs is not None:
            vals[id(f)] = f"numpy.random.{name}() (NumPy's global generator)"
    return vals


_effectful: dict | None = None


def _effect_of_call(base, name):
    """A side effect of calling ``base.name(...)`` that a replay would drop, in words."""
    if isinstance(base, (logging.Logger, logging.LoggerAdapter)) and name in _LOG_METHODS:
        return f"logging through {type(base).__name__}.{name}()"
    if base is sys.stdout or base is sys.stderr:
        if name in ("write", "writelines", "flush"):
            return f"sys.{'stdout' if base is sys.stdout else 'stderr'}.{name}()"
    if name == "step":
        from ..optim import lr_scheduler as _lrs

        sched = tuple(c for c in (getattr(_lrs, "LRScheduler", None),
                                  getattr(_lrs, "ReduceLROnPlateau", None)) if c is not None)
        if sched and isinstance(base, sched):
            return f"{type(base).__name__}.step() (a learning-rate scheduler changes Python " \
                   "floats, which a replay would not)"
    return None


class _Entry:
    """One symbolic stack slot: a known value, whether it outlives the call, and (for
    guards) how to read it again."""

    __slots__ = ("value", "lives")

    def __init__(self, value, lives):
        self.value, self.lives = value, lives


_U = None  # an unknown stack slot


class StateTrace:
    """Context manager around a capture call (see the module docstring). After it exits,
    ``guards()`` gives the PyGuards and ``effects`` the side effects (GraphBreaks)."""

    def __init__(self, fn, args, kwargs, modules=(), fullgraph=False):
        from ..nn.modules.module import Module

        self._Module = Module
        self.fullgraph = fullgraph
        self.effects: list[GraphBreak] = []
        self.errors: list[str] = []
        self._guards: dict = {}
        self._lives: dict = {}  # id -> object (kept alive so ids stay unique)
        self._snap_attrs: dict = {}  # id -> (object, shallow copy of vars)
        self._snap_items: dict = {}  # id -> (container, shallow copy)
        self._unknown_attr: dict = {}  # attribute name -> site of a store to an unknown object
        self._unknown_mut: str | None = None
        self._frames: dict = {}  # id(frame) -> [frame, stack] for traced frames
        self._closures: dict = {}  # code -> {free var name: cell}
        self._tree_roots: list = []  # modules reached otherwise: structure guarded at the end
        self._keyed = set()  # ids of modules whose train flags/parameters the call key guards
        for m in modules:
            for sub in m.modules():
                self._keyed.add(id(sub))
        self._live(fn)
        self._live(getattr(fn, "__self__", None))
        for m in modules:
            self._live(m)
        for a in args:
            self._live(a)
        for a in kwargs.values():
            self._live(a)
        self._prev = None
        self._on = False

    # -- the objects that outlive the call ------------------------------------------------
    def _live(self, obj, depth=0):
        if obj is None or isinstance(obj, Tensor) or type(obj) in _SCALARS:
            return
        i = id(obj)
        if i in self._lives or len(self._lives) > _LIMIT:
            return
        self._lives[i] = obj
        if isinstance(obj, types.FunctionType):
            self._register(obj)
            return
        if isinstance(obj, types.MethodType):
            self._live(obj.__func__, depth)
            self._live(obj.__self__, depth)
            return
        if isinstance(obj, (type, types.ModuleType, types.BuiltinFunctionType)):
            return
        if isinstance(obj, (list, tuple, dict, set, bytearray, collections.deque)):
            if not isinstance(obj, tuple):
                self._snap_items[i] = (obj, _snapshot(obj))
            if depth < 3 and len(obj) <= 256:
                for e in (obj.values() if isinstance(obj, dict) else obj):
                    self._live(e, depth + 1)
            return
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict):
            self._snap_attrs[i] = (obj, dict(d))
        if isinstance(obj, self._Module):
            if i not in self._keyed and not self._on_tree(obj):
                self._tree_roots.append(obj)
                for sub in obj.modules():  # its structure guard covers their parameters
                    self._keyed.add(id(sub))
            for sub in obj.modules():
                self._live(sub, depth)

    def _on_tree(self, m):
        return any(m is s for r in self._tree_roots for s in r.modules())

    def _register(self, fn):
        cells = fn.__closure__
        if cells:
            known = self._closures.setdefault(fn.__code__, [])
            if not any(c is cells for c in known):
                known.append(cells)

    # -- tracing --------------------------------------------------------------------------
    def __enter__(self):
        self._on = True
        mon = getattr(sys, "monitoring", None)
        tool = None
        if mon is not None:  # 3.12+: settrace's opcode events miss a code's first traced run
            tool = next((t for t in (4, 3, 2) if mon.get_tool(t) is None), None)
        if tool is None:
            self._prev = sys.gettrace()
            sys.settrace(self._call)
            return self
        self._tool, self._codes, self._thread = tool, set(), _get_ident()
        ev = mon.events
        mon.use_tool_id(tool, "graphgrad.compile")
        mon.register_callback(tool, ev.PY_START, self._m_start)
        mon.register_callback(tool, ev.PY_RESUME, self._m_start)
        mon.register_callback(tool, ev.PY_RETURN, self._m_end)
        mon.register_callback(tool, ev.PY_YIELD, self._m_end)
        mon.register_callback(tool, ev.EXCEPTION_HANDLED, self._m_handled)
        mon.register_callback(tool, ev.INSTRUCTION, self._m_instruction)
        mon.set_events(tool, ev.PY_START | ev.PY_RESUME | ev.EXCEPTION_HANDLED)
        return self

    def _stop(self):
        if not self._on:
            return
        self._on = False
        tool = getattr(self, "_tool", None)
        if tool is None:
            sys.settrace(self._prev)
            return
        mon = sys.monitoring
        mon.set_events(tool, 0)
        for code in self._codes:
            mon.set_local_events(tool, code, 0)
        for e in (mon.events.PY_START, mon.events.PY_RESUME, mon.events.PY_RETURN,
                  mon.events.PY_YIELD, mon.events.EXCEPTION_HANDLED, mon.events.INSTRUCTION):
            mon.register_callback(tool, e, None)
        mon.free_tool_id(tool)

    def __exit__(self, *exc):
        self._stop()
        self._frames.clear()
        try:
            self._finish()
        except Exception as err:  # noqa: BLE001 - a failed analysis is a break, not a crash
            self.effects.append(GraphBreak("graphgrad.compile could not check the Python "
                                           f"state of the call ({type(err).__name__}: {err})"))
        return False

    # -- sys.monitoring (3.12+) -----------------------------------------------------------
    def _m_start(self, code, offset):
        if _get_ident() != self._thread:
            return None  # sys.monitoring is process-wide: other threads are not this call
        kind = _frame_kind(code)
        if kind is None or _dispatch._tracer is None:
            return None  # see _call
        if code not in self._codes:
            ev = sys.monitoring.events
            sys.monitoring.set_local_events(self._tool, code, ev.INSTRUCTION | ev.PY_RETURN
                                            | ev.PY_YIELD)
            self._codes.add(code)
        self._frames[id(sys._getframe(1))] = [None, [], kind]
        return None

    def _m_end(self, code, offset, value):
        self._frames.pop(id(sys._getframe(1)), None)

    def _m_handled(self, code, offset, exc):
        st = self._frames.get(id(sys._getframe(1)))
        if st is not None:
            st[1] = []

    def _m_instruction(self, code, offset):
        frame = sys._getframe(1)
        st = self._frames.get(id(frame))
        if st is None or not self._on:
            return None
        try:
            self._step(frame, st)
        except GraphBreak:
            raise
        except Exception as err:  # noqa: BLE001 - never let the analysis break user code
            self.errors.append(f"{type(err).__name__}: {err} at {_site(frame)}")
            st[1] = []
        return None

    # -- sys.settrace (3.10, 3.11) ---------------------------------------------------------
    def _call(self, frame, event, arg):
        kind = _frame_kind(frame.f_code)
        if kind is None or _dispatch._tracer is None:
            # Not user code, or the recorder is paused: an opaque call (an optimizer step and
            # its hooks) runs for real on every replay, so its effects are not dropped.
            return None
        frame.f_trace = self._local  # before f_trace_opcodes: 3.12 instruments on that set
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        self._frames[id(frame)] = [None, [], kind]
        return self._local

    def _local(self, frame, event, arg):
        st = self._frames.get(id(frame))
        if st is None:
            return None
        if event != "opcode":
            if event == "return":
                del self._frames[id(frame)]  # (a resumed generator is a new 'call')
            else:
                st[1] = []  # an exception unwinds: the stack is unknown
            return self._local
        try:
            self._step(frame, st)
        except GraphBreak:
            raise  # fullgraph=True: raised at the user's line, before the effect runs
        except Exception as err:  # noqa: BLE001 - never let the analysis break user code
            self.errors.append(f"{type(err).__name__}: {err} at {_site(frame)}")
            st[1] = []
        return self._local

    def _effect(self, frame, what):
        err = GraphBreak(f"Python side effect: {what}", _site(frame))
        self.effects.append(err)
        if self.fullgraph:
            self._stop()
            raise err

    def _guard(self, kind, base, name, value, frame, text):
        key = (kind, id(base), name)
        if key not in self._guards:
            self._guards[key] = _Guard(kind, base, name, value, _site(frame), text)

    def _step(self, frame, st):
        ins = _instructions(frame.f_code).get(frame.f_lasti)
        if ins is None:
            st[1] = []
            return
        op = ins.opname
        stack = st[1]
        lib = st[2] == "lib"
        if op in ("RESUME", "NOP", "EXTENDED_ARG", "CACHE", "PRECALL", "KW_NAMES"):
            return
        if op.startswith("LOAD_FAST") or op == "LOAD_DEREF" and lib:
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            loc = frame.f_locals
            for n in names:
                v = loc.get(n, _MISSING)
                stack.append(None if v is _MISSING else _Entry(v, id(v) in self._lives))
            return
        if lib:
            if op in ("LOAD_ATTR", "LOAD_METHOD"):
                self._lib_attr(frame, ins, stack)
            else:
                self._generic(ins, stack)
            return
        if op == "LOAD_CONST":
            stack.append(_Entry(ins.argval, False))
            return
        if op in ("LOAD_GLOBAL", "LOAD_NAME"):
            self._load_global(frame, ins, stack, op == "LOAD_NAME")
            return
        if op in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
            self._load_deref(frame, ins, stack)
            return
        if op in ("LOAD_ATTR", "LOAD_METHOD"):
            self._load_attr(frame, ins, stack)
            return
        if op == "BINARY_SUBSCR":
            key = stack.pop() if stack else _U
            base = stack.pop() if stack else _U
            got = self._subscr(frame, base, key)
            if got is None:
                self._whole(frame, base)
            stack.append(got)
            return
        if op.startswith("CALL") or op == "CONTAINS_OP":
            # A container that outlives the call handed to code (len(), dict.get, sum, `in`):
            # its shallow contents are guarded.
            for e in stack:
                self._whole(frame, e)
            self._generic(ins, stack)
            return
        if op == "GET_ITER":
            base = stack.pop() if stack else _U
            if base is not _U and base.lives and not isinstance(base.value, Tensor):
                self._contents_guard(frame, base.value, "iterated")
            stack.append(_U)
            return
        if op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            self._effect(frame, f"assigns the global {ins.argval!r}")
            stack.clear()
            return
        if op in ("STORE_DEREF", "DELETE_DEREF"):
            if ins.argval in frame.f_code.co_freevars and not self._call_local_cell(
                    frame, ins.argval):
                self._effect(frame, f"assigns the closure variable {ins.argval!r} "
                                    "(nonlocal) of an enclosing function")
            if stack:
                stack.pop()
            return
        if op in ("STORE_ATTR", "DELETE_ATTR"):
            base = stack.pop() if stack else _U
            self._store_attr(frame, base, ins.argval)
            stack.clear()
            return
        if op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
            n = 3 if op == "STORE_SUBSCR" else 2
            top = [stack.pop() if stack else _U for _ in range(n)]
            self._store_item(frame, top[1])
            stack.clear()
            return
        self._generic(ins, stack)

    def _generic(self, ins, stack):
        op = ins.opname
        if op in ("STORE_FAST", "POP_TOP") and stack:
            stack.pop()
        elif op == "COPY" and isinstance(ins.arg, int) and len(stack) >= ins.arg:
            stack.append(stack[-ins.arg])
        elif op == "DUP_TOP" and stack:
            stack.append(stack[-1])
        elif op == "SWAP" and isinstance(ins.arg, int) and len(stack) >= ins.arg:
            stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]
        elif op == "ROT_TWO" and len(stack) >= 2:
            stack[-1], stack[-2] = stack[-2], stack[-1]
        elif op == "PUSH_NULL":
            stack.append(_U)
        elif op in ("BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP") or \
                op.startswith("BINARY_") or op.startswith("INPLACE_"):
            if len(stack) >= 2:
                stack.pop()
                stack[-1] = _U
            else:
                stack.clear()
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            if stack:
                stack.pop()
            stack.extend([_U] * max(1, _pushes(ins)))
        else:
            stack.clear()  # not modelled: forget what the stack holds

    # -- reads ----------------------------------------------------------------------------
    def _load_global(self, frame, ins, stack, by_name):
        name = ins.argval
        nulls = _pushes(ins) - 1
        stack.extend([_U] * max(0, nulls))
        if by_name and name in frame.f_locals:
            stack.append(None)
            return
        g = frame.f_globals
        if name in g:
            v = g[name]
            self._guard("global", g, name, v, frame, f"global {name!r}")
        else:
            b = frame.f_builtins
            v = b.get(name, _MISSING)
            if v is _MISSING:
                stack.append(None)
                return
            self._guard("builtin", (g, b), name, v, frame, f"builtin {name!r}")
        self._check_callable(frame, v)
        self._live(v)
        stack.append(_Entry(v, True))

    def _check_callable(self, frame, v):
        global _effectful
        if _effectful is None:
            _effectful = _effectful_values()
        what = _effectful.get(id(v))
        if what is not None:
            self._effect(frame, f"calls {what}")

    def _load_deref(self, frame, ins, stack):
        name = ins.argval
        code = frame.f_code
        if name not in code.co_freevars or name == "__class__":
            v = frame.f_locals.get(name, _MISSING)  # this frame's own cell: a local
            stack.append(None if v is _MISSING else _Entry(v, id(v) in self._lives))
            return
        cell = _matching_cell(self._closures.get(code, ()), frame, name)
        if cell is None:
            if self._call_local_cell(frame, name):
                v = frame.f_locals.get(name, _MISSING)
                stack.append(None if v is _MISSING else _Entry(v, id(v) in self._lives))
                return
            cell = self._find_cell(frame, name)
        if cell is None:
            self._effect(frame, f"reads the closure variable {name!r} of a function the "
                                "compiler cannot find (its value could not be guarded)")
            stack.append(None)
            return
        try:
            v = cell.cell_contents
        except ValueError:
            stack.append(None)
            return
        self._guard("cell", cell, name, v, frame, f"closure variable {name!r} of "
                                                   f"{code.co_name}()")
        self._live(v)
        stack.append(_Entry(v, True))

    def _call_local_cell(self, frame, name):
        """True when the cell of free variable ``name`` belongs to a frame of this call."""
        code = frame.f_code
        f = frame.f_back
        while f is not None:
            if id(f) in self._frames and name in f.f_code.co_cellvars and \
                    _nested(code, f.f_code):
                return True
            f = f.f_back
        return False

    def _find_cell(self, frame, name):
        """The cell of free variable ``name`` of the function running ``frame``, among all
        functions with its code (3.11 frames do not name their function)."""
        import gc

        code = frame.f_code
        fns = [o.__closure__ for o in gc.get_referrers(code)
               if isinstance(o, types.FunctionType) and o.__code__ is code and o.__closure__]
        return _matching_cell(fns, frame, name)

    def _load_attr(self, frame, ins, stack):
        name = ins.argval
        base = stack.pop() if stack else _U
        n = max(1, _pushes(ins))
        stack.extend([_U] * (n - 1))
        if base is _U:
            if name in _MUTATOR_NAMES:
                self._unknown_mut = self._unknown_mut or _site(frame)
            stack.append(None)
            return
        obj = base.value
        what = _effect_of_call(obj, name)
        if what is not None:
            self._effect(frame, what)
        if base.lives:
            muts = next((m for t, m in _MUTATORS.items() if isinstance(obj, t)), ())
            if name in muts:
                self._effect(frame, f"calls {type(obj).__name__}.{name}() on a "
                                    f"{type(obj).__name__} that outlives the call")
        elif name in _MUTATOR_NAMES and not isinstance(obj, Tensor):
            pass  # a container made during the call
        if isinstance(obj, Tensor):
            stack.append(None)
            return
        v = static_attr(obj, name)
        kind = "attr"
        if v is _UNKNOWN and base.lives and not _runs_python(obj, name):
            v, kind = c_attr(obj, name), "getattr"
        if v is _UNKNOWN or v is _MISSING:
            stack.append(None)
            return
        if base.lives and not (isinstance(obj, types.ModuleType)
                               and isinstance(v, _CODE_TYPES)) \
                and not isinstance(v, (types.FunctionType, staticmethod, classmethod,
                                       types.BuiltinMethodType, types.MethodType)):
            self._guard(kind, obj, name, v, frame, f"{_tname(obj)}.{name}")
        self._check_callable(frame, v)
        if base.lives:
            self._live(v)
        if n == 2 and ins.opname == "LOAD_METHOD" or (n == 2 and ins.arg is not None
                                                     and ins.arg & 1):
            stack[-1] = _Entry(v, base.lives)  # the method ...
            stack.append(base)  # ... and its self, as the interpreter pushes them
            return
        stack.append(_Entry(v, base.lives))

    def _lib_attr(self, frame, ins, stack):
        """graphgrad's Module code: guards ``self.<attr>`` of modules (Dropout.p)."""
        name = ins.argval
        base = stack.pop() if stack else _U
        stack.extend([_U] * max(1, _pushes(ins)))
        if base is _U or not isinstance(base.value, self._Module) or name.startswith("_"):
            return
        obj = base.value
        keyed = id(obj) in self._keyed
        if keyed and name == "training":
            return
        v = static_attr(obj, name)
        if v is _UNKNOWN:
            return
        if _by_value(v) or isinstance(v, enum.Enum) or (isinstance(v, Tensor) and not keyed):
            self._guard("attr", obj, name, v, frame, f"{_tname(obj)}.{name}")

    def _whole(self, frame, e):
        if e is _U or not e.lives or type(e.value) not in (list, dict, set):
            return
        self._contents_guard(frame, e.value, "read")

    def _contents_guard(self, frame, c, how):
        if type(c) not in (list, tuple, dict, set):
            return
        if len(c) > _BIG:
            # Checking every entry on every call would cost more than the replay saves: the
            # length is guarded (Known limit: an entry replaced in place is not seen).
            self._guard("len", c, None, len(c), frame, f"len() of the {type(c).__name__} {how}")
            return
        self._guard("contents", c, None, _contents(c), frame,
                    f"the {type(c).__name__} {how}")

    def _subscr(self, frame, base, key):
        if base is _U or key is _U or not base.lives or not _by_value(key.value):
            return None
        c = base.value
        v = _item(c, key.value)
        if v is _UNKNOWN or v is _MISSING:
            return None
        self._guard("item", c, key.value, v, frame, f"{type(c).__name__}[{key.value!r}]")
        self._live(v)
        return _Entry(v, True)

    # -- stores ---------------------------------------------------------------------------
    def _store_attr(self, frame, base, name):
        if base is _U:
            self._unknown_attr.setdefault(name, _site(frame))
            return
        obj = base.value
        if isinstance(obj, Tensor):
            return  # the capture handles tensors (.grad, .data, requires_grad)
        if base.lives or id(obj) in self._lives:
            self._effect(frame, f"sets the attribute {name!r} of a {_tname(obj)} that "
                                "outlives the call")

    def _store_item(self, frame, base):
        if base is _U:
            self._unknown_mut = self._unknown_mut or _site(frame)
            return
        obj = base.value
        if isinstance(obj, Tensor):
            return
        if base.lives or id(obj) in self._lives:
            self._effect(frame, f"assigns an item of a {type(obj).__name__} that outlives "
                                "the call")

    # -- after the call -------------------------------------------------------------------
    def _finish(self):
        """Stores whose target was unknown: compare the outliving objects with their
        snapshots."""
        for name, site in self._unknown_attr.items():
            for obj, snap in self._snap_attrs.values():
                d = getattr(obj, "__dict__", None)
                if isinstance(d, dict) and d.get(name, _MISSING) is not snap.get(name,
                                                                                 _MISSING):
                    self.effects.append(GraphBreak(
                        f"Python side effect: sets the attribute {name!r} of a "
                        f"{_tname(obj)} that outlives the call", site))
                    break
        if self._unknown_mut is not None:
            for obj, snap in self._snap_items.values():
                if not _unchanged(obj, snap):
                    self.effects.append(GraphBreak(
                        f"Python side effect: mutates a {type(obj).__name__} that outlives "
                        "the call", self._unknown_mut))
                    break
        if self.errors:
            self.effects.append(GraphBreak("graphgrad.compile could not follow the Python "
                                           f"state read by the call ({self.errors[0]})"))
        for root in self._tree_roots:
            self._guards[("module", id(root), None)] = _Guard(
                "module", root, None, _module_sig(root), "the capture call",
                f"module {_tname(root)} (reached through a global, closure or argument)")
        for g in self._guards.values():
            # A value the call itself changed after reading it (graphgrad code did: the user's
            # own stores are breaks above) would fail its guard on every later call.
            if not g.holds():
                self.effects.append(GraphBreak("Python state read by the call changed during "
                                               f"it: {g.failure()}"))
                break

    def guards(self) -> PyGuards | None:
        gs = list(self._guards.values())
        return PyGuards(gs) if gs else None

    def attach(self, cap) -> None:
        """Hands the result to the capture: side effects become its graph breaks (the
        variant runs eagerly, so they happen on every call), the guards go on its graph."""
        if self.effects and not cap.breaks:
            cap.breaks.extend(self.effects)
        cap.graph.py_guards = None if cap.breaks else self.guards()


def _matching_cell(closures, frame, name):
    """The cell for ``name`` among ``closures`` (cell tuples of functions with the frame's
    code) whose cells hold the frame's current free-variable values; None when no closure
    matches or the matching ones disagree on the cell (which function runs is not known)."""
    code = frame.f_code
    loc = frame.f_locals
    found = None
    i = code.co_freevars.index(name)
    for cells in closures:
        try:
            if not all(loc.get(n, _MISSING) is c.cell_contents
                       for n, c in zip(code.co_freevars, cells)):
                continue
        except ValueError:
            continue
        if found is not None and found is not cells[i]:
            return None
        found = cells[i]
    return found


def _pushes(ins):
    """How many values an instruction pushes (LOAD_GLOBAL/LOAD_ATTR may push a NULL)."""
    try:
        eff = dis.stack_effect(ins.opcode, ins.arg)
    except (ValueError, TypeError):
        return 1
    pops = 1 if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") else 0
    return eff + pops


def _nested(code, outer):
    for c in outer.co_consts:
        if isinstance(c, types.CodeType) and (c is code or _nested(code, c)):
            return True
    return False


def _snapshot(obj):
    if isinstance(obj, dict):
        return list(obj.items())
    return list(obj)


def _unchanged(obj, snap):
    cur = _snapshot(obj)
    if len(cur) != len(snap):
        return False
    if isinstance(obj, (set, frozenset)):
        return set(map(id, cur)) == set(map(id, snap))
    return all(_same(a, b) for a, b in zip(cur, snap))


def _tname(obj):
    if isinstance(obj, types.ModuleType):
        return f"module {obj.__name__}"
    if isinstance(obj, type):
        return obj.__qualname__
    return type(obj).__qualname__


def _site(frame):
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"
