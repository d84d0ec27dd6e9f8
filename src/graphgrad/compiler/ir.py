"""The compiler's IR: a flat SSA list of op applications over typed values.

A ``Graph`` is what ``capture`` records from one run of a function: ``Value``s (each written
once) and ``Instr``s (each reads values and literals and defines new values), in execution
order. Passes rewrite it; the executor replays it on raw arrays. See docs/compiler.md ("IR").
"""

from __future__ import annotations

import numpy as np

__all__ = ["Value", "Instr", "Graph", "SPECIAL_OPS", "KINDS", "dtype_name", "type_str"]

# Value kinds. "input": a tensor argument of the compiled function (bound per call).
# "external": a tensor captured from outside (parameter, buffer, optimizer state, a constant
# tensor made outside the function): read live from ``Value.data`` (the Tensor) on every call.
# "const": an array baked into the graph (``Value.data`` is the ndarray). "temp": an instr output.
KINDS = ("input", "external", "const", "temp")

# Instrs whose op is a string rather than an OpDef. Every one carries ``fn`` (a callable on
# arrays, returning one array or a tuple with one array per output) except "accumulate_grad"
# and "store", whose targets are external tensors (``Instr.target``) and which the executor
# runs itself.
#   accumulate_grad  adds ins[0] into target.grad (target.grad = copy when it is None); its one
#                    output is the array now in target.grad
#   store            writes ins[0] into target's array in place (no output)
#   opaque           a Python callable run for its effects and/or outputs (optimizer steps)
#   random           fresh draws from graphgrad's generator on every replay (no inputs)
#   vjp              a derivative rule run on raw arrays (a rule that reads data, e.g. a mask)
#   cast             ins[0].astype(dtype) (the dispatcher's dtype promotion)
#   load             re-reads an external after an effect changed it
#   fused            a group of instrs compiled to one kernel (made by passes/fusion.py)
SPECIAL_OPS = ("accumulate_grad", "store", "opaque", "random", "vjp", "cast", "load", "fused")
EFFECTS = ("accumulate_grad", "store", "opaque", "random")

_DTYPE_NAMES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
                "bool": "b8", "complex64": "c64", "complex128": "c128"}


def dtype_name(dtype) -> str:
    """The short dtype name the printer uses (f32, i64, b8, ...)."""
    name = np.dtype(dtype).name
    return _DTYPE_NAMES.get(name, name)


def type_str(shape, dtype) -> str:
    """``f32[32,10]``; a 0-d value prints as ``f32[]``."""
    return f"{dtype_name(dtype)}[{','.join(str(s) for s in shape)}]"


class Value:
    """One SSA value: written by exactly one instr (temp) or bound from outside.

    ``id`` is unique within its graph (the printer renumbers). ``shape`` is a tuple of ints,
    ``dtype`` a NumPy dtype. ``data``: the Tensor for an external (its ``_data`` is read at
    each call), the ndarray for a const, None otherwise. ``name``: a label for the printer
    (an external's parameter name, an input's position).
    """

    __slots__ = ("id", "shape", "dtype", "kind", "data", "name")

    def __init__(self, id, shape, dtype, kind, data=None, name=None):
        if kind not in KINDS:
            raise ValueError(f"unknown value kind {kind!r}")
        self.id = id
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.kind = kind
        self.data = data
        self.name = name

    @property
    def type(self) -> str:
        return type_str(self.shape, self.dtype)

    @property
    def nbytes(self) -> int:
        n = self.dtype.itemsize
        for s in self.shape:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"%{self.id}:{self.type}"


class Instr:
    """One op application: ``outs = op(*ins, **params)``.

    ``op`` is an OpDef of ``graphgrad.ops.OPS`` (called as ``op.forward(np, *arrays,
    **params)``) or a string of ``SPECIAL_OPS``. ``ins`` are the forward's positional inputs in
    order: ``Value``s where the eager call had arrays, literals (Python scalars, None, tuples,
    slices) otherwise. ``outs`` is a list of Values (one for most ops; two for an op that
    returns an auxiliary array; one per gradient for a vjp, None where no gradient flows).
    ``fn`` is the array callable of a special op; ``target`` the external Tensor of an
    accumulate_grad/store; ``site`` the user's source line (a string) when known.

    ``dyn`` (a ``dynparams.DynParams``, or None): the last ``dyn.n`` inputs are arrays the
    params are rebuilt from on every call (index plans, masks: params computed from tensor
    values); ``params`` then holds the captured params, for printing only. ``aux`` (a
    ``dynparams.AuxSpec``, or None): the forward returns ``(out, structure)`` and each array of
    the structure is one more output (max pooling's indices).
    """

    __slots__ = ("op", "ins", "outs", "params", "fn", "target", "site", "label", "dyn", "aux")

    def __init__(self, op, ins, outs, params=None, *, fn=None, target=None, site=None,
                 label=None, dyn=None, aux=None):
        if isinstance(op, str) and op not in SPECIAL_OPS:
            raise ValueError(f"unknown special op {op!r}")
        self.op = op
        self.ins = list(ins)
        self.outs = list(outs)
        self.params = dict(params) if params else {}
        self.fn = fn
        self.target = target
        self.site = site
        self.label = label  # extra text the printer shows in brackets: op[label](...)
        self.dyn = dyn
        self.aux = aux

    @property
    def name(self) -> str:
        return self.op if isinstance(self.op, str) else self.op.name

    @property
    def special(self) -> bool:
        return isinstance(self.op, str)

    @property
    def effect(self) -> bool:
        """True when the instr must run even if no output is used (and never be merged)."""
        return self.op in EFFECTS if isinstance(self.op, str) else False

    @property
    def elementwise(self) -> bool:
        return not isinstance(self.op, str) and self.op.kind == "elementwise"

    @property
    def may_alias(self) -> bool:
        """True when an output may share memory with an input (NumPy views from movement ops,
        a load of an external): a memory plan must not write into such an output."""
        if isinstance(self.op, str):
            return self.op == "load"
        return bool(self.op.view) or self.op.kind == "movement"

    def values(self):
        """The Value inputs, in order (literals skipped)."""
        return [x for x in self.ins if isinstance(x, Value)]

    def kernel(self):
        """A callable on arrays for this instr: ``f(*arrays)`` where arrays replace the Value
        inputs in order; returns one array or a tuple (one per output)."""
        if self.fn is not None and not self.ins_literal():
            return self.fn
        if self.dyn is not None or self.aux is not None:
            return self._dyn_kernel()
        positions = [i for i, x in enumerate(self.ins) if isinstance(x, Value)]
        template = list(self.ins)
        if self.fn is not None:
            base = self.fn
        else:
            forward, params = self.op.forward, self.params
            if params:
                def base(*args):
                    return forward(np, *args, **params)
            else:
                def base(*args):
                    return forward(np, *args)
        if len(positions) == len(template):
            return base

        def call(*arrays):
            args = list(template)
            for p, a in zip(positions, arrays):
                args[p] = a
            return base(*args)
        return call

    def _dyn_kernel(self):
        """kernel() of an OpDef instr with params rebuilt from inputs and/or a structured
        auxiliary result (see ``dyn`` and ``aux``)."""
        n_dyn = self.dyn.n if self.dyn is not None else 0
        op_ins = self.ins[:len(self.ins) - n_dyn]
        positions = [i for i, x in enumerate(op_ins) if isinstance(x, Value)]
        n_op = len(positions)
        template = list(op_ins)
        forward, static, dyn = self.op.forward, self.params, self.dyn
        unpack = self.aux.unpack if self.aux is not None else None

        def call(*arrays):
            args = list(template)
            for p, a in zip(positions, arrays):
                args[p] = a
            params = dyn.build(arrays[n_op:]) if dyn is not None else static
            out = forward(np, *args, **params)
            return unpack(out) if unpack is not None else out
        return call

    def ins_literal(self) -> bool:
        return any(not isinstance(x, Value) for x in self.ins)

    def __repr__(self) -> str:
        return f"Instr({self.name}, ins={self.ins}, outs={self.outs})"


class Graph:
    """A captured program: ``inputs`` (Values bound from the call's tensor arguments, in
    flattening order), ``externals`` and ``consts`` (Values bound once), ``instrs`` (in
    execution order), ``outputs`` (Values the call returns, in flattening order; an output may
    be an input, external or const value too).
    """

    def __init__(self):
        self.inputs: list[Value] = []
        self.externals: list[Value] = []
        self.consts: list[Value] = []
        self.instrs: list[Instr] = []
        self.outputs: list[Value] = []
        self._next = 0

    def new_value(self, shape, dtype, kind, data=None, name=None) -> Value:
        v = Value(self._next, shape, dtype, kind, data, name)
        self._next += 1
        if kind == "input":
            self.inputs.append(v)
        elif kind == "external":
            self.externals.append(v)
        elif kind == "const":
            self.consts.append(v)
        return v

    def add(self, op, ins, out_types, params=None, **kw) -> Instr:
        """Appends an instr whose outputs are new temps of the given (shape, dtype) pairs (None
        for an absent output); returns it."""
        outs = [None if t is None else self.new_value(t[0], t[1], "temp") for t in out_types]
        instr = Instr(op, ins, outs, params, **kw)
        self.instrs.append(instr)
        return instr

    def users(self) -> dict:
        """Value -> list of instrs reading it."""
        users: dict = {}
        for instr in self.instrs:
            for v in instr.values():
                users.setdefault(v, []).append(instr)
        return users

    def replace_uses(self, old: Value, new: Value) -> None:
        """Makes every reader of ``old`` (instrs and outputs) read ``new``."""
        for instr in self.instrs:
            instr.ins = [new if x is old else x for x in instr.ins]
        self.outputs = [new if x is old else x for x in self.outputs]

    def validate(self) -> None:
        """Raises AssertionError when a value is read before it is defined or defined twice."""
        defined = set(self.inputs) | set(self.externals) | set(self.consts)
        for instr in self.instrs:
            for v in instr.values():
                assert v in defined, f"{v!r} read before it is defined by {instr.name}"
            for v in instr.outs:
                if v is not None:
                    assert v not in defined, f"{v!r} defined twice"
                    defined.add(v)
        for v in self.outputs:
            assert v in defined, f"output {v!r} is never defined"

    # -- printer ------------------------------------------------------------------------
    def format(self) -> str:
        """The stable text form used by golden tests and explain. Values are renumbered in
        order of definition: inputs, externals, consts, then instr outputs. Example::

            graph(%0:f32[4], %1:f32[4]):
              %2:f32[4] = external 'w'
              %3:f32[] = const 2.0
              %4:f32[4] = mul(%0, %2)
              %5:f32[4] = mul(%4, %3)
              return (%5)
        """
        names: dict = {}

        def name(v):
            if v not in names:
                names[v] = f"%{len(names)}"
            return names[v]

        for v in self.inputs:
            name(v)
        head = ", ".join(f"{name(v)}:{v.type}" for v in self.inputs)
        lines = [f"graph({head}):"]
        for v in self.externals:
            label = f" {v.name!r}" if v.name else ""
            lines.append(f"  {name(v)}:{v.type} = external{label}")
        for v in self.consts:
            lines.append(f"  {name(v)}:{v.type} = const {_const_text(v.data)}")
        for instr in self.instrs:
            args = [name(x) if isinstance(x, Value) else _literal(x) for x in instr.ins]
            dyn = instr.dyn
            args += [f"{k}={(dyn and dyn.describe(k)) or _literal(p)}"
                     for k, p in instr.params.items()]
            label = f"[{instr.label}]" if instr.label else ""
            call = f"{instr.name}{label}({', '.join(args)})"
            outs = [o for o in instr.outs if o is not None]
            if outs:
                lhs = ", ".join(f"{name(o)}:{o.type}" for o in outs)
                lines.append(f"  {lhs} = {call}")
            else:
                lines.append(f"  {call}")
        lines.append(f"  return ({', '.join(name(v) for v in self.outputs)})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def _const_text(a) -> str:
    a = np.asarray(a)
    if a.size <= 4:
        return np.array2string(a.ravel() if a.ndim > 1 else a, separator=", ").replace("\n", "")
    return f"<{a.size} values>"


def _literal(x) -> str:
    if isinstance(x, Value):
        return f"%{x.id}"
    if isinstance(x, float):
        return repr(x)
    if isinstance(x, np.dtype):
        return dtype_name(x)
    if isinstance(x, type) and issubclass(x, np.generic):
        return dtype_name(x)
    if isinstance(x, np.ndarray):
        return _const_text(x)
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_literal(e) for e in x)
        return f"({inner},)" if isinstance(x, tuple) and len(x) == 1 else (
            f"({inner})" if isinstance(x, tuple) else f"[{inner}]")
    return repr(x)
