"""The ONNX graph under construction: names for IR values, nodes, constants and shape tensors.

Converters (ops.py) call ``Builder`` methods; they never touch protobuf directly. A shape
literal that varies with a dynamic axis arrives as a ``SymInt`` (an int that also knows how to
compute itself from the inputs' shapes, see Note [Symbolic sizes] in _dynamic.py); ``i64``
turns a list holding SymInts into a shape tensor computed at run time.
"""

from __future__ import annotations

import numpy as np

from ..compiler.ir import Value
from ._deps import require_onnx

__all__ = ["Builder", "SymInt", "ExportError", "INT64_MAX", "INT64_MIN"]

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


class ExportError(RuntimeError):
    """The model cannot be exported as asked (an op without a mapping, a graph break, ...)."""


class SymInt(int):
    """An int literal of the traced graph that follows a dynamic axis.

    ``expr`` is ("lin", (input, axis), a, c) for ``a * size + c`` or ("prod", sources, k) for
    ``k * size_0 * size_1 ...``. Used as a plain int it is the traced value (so a converter that
    bakes it still works at the traced shape); ``Builder.i64`` computes it at run time.
    """

    def __new__(cls, value, expr):
        obj = super().__new__(cls, value)
        obj.expr = expr
        return obj

    def __repr__(self):
        return f"SymInt({int(self)}, {self.expr})"


class Builder:
    """Collects nodes and initializers for one ONNX graph at ``opset``."""

    def __init__(self, opset: int, input_names: dict):
        self.onnx = require_onnx()
        self.opset = opset
        self.nodes: list = []
        self.initializers: list = []
        self.names: dict = {}  # Value -> ONNX name
        self.input_names = input_names  # input Value -> ONNX name (graph inputs)
        self.used = set()
        self._consts: dict = {}
        self._dims: dict = {}
        self.sym_used = 0  # SymInts turned into run-time shape computations

    # -- names ----------------------------------------------------------------------------
    def fresh(self, hint="t"):
        hint = "".join(c if c.isalnum() or c in "._" else "_" for c in str(hint)) or "t"
        name = hint
        i = 0
        while name in self.used:
            i += 1
            name = f"{hint}_{i}"
        self.used.add(name)
        return name

    def x(self, v: Value) -> str:
        """The ONNX name holding IR value ``v``."""
        try:
            return self.names[v]
        except KeyError:
            raise ExportError(f"internal: value {v!r} has no ONNX name yet") from None

    # -- nodes ----------------------------------------------------------------------------
    def node(self, op_type, inputs, n_out=1, name_hint=None, domain="", **attrs):
        """Appends a node; returns its output name (or a list when ``n_out`` > 1)."""
        outs = [self.fresh(name_hint or op_type.lower()) for _ in range(n_out)]
        node = self.onnx.helper.make_node(op_type, [i if i is not None else "" for i in inputs],
                                          outs, name=self.fresh(f"n_{op_type}"), domain=domain,
                                          **{k: v for k, v in attrs.items() if v is not None})
        self.nodes.append(node)
        return outs[0] if n_out == 1 else outs

    def const(self, array, hint="const") -> str:
        """An initializer holding ``array`` (small ones are shared by value)."""
        array = np.asarray(array)
        key = None
        if array.size <= 16:
            key = (array.dtype.str, array.shape, array.tobytes())
            if key in self._consts:
                return self._consts[key]
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        if key is not None:
            self._consts[key] = name
        return name

    def scalar(self, value, dtype) -> str:
        """A 0-d tensor of ``dtype`` holding ``value``; a SymInt is computed at run time."""
        if isinstance(value, SymInt):
            s = self.node("Squeeze", [self.i64([value]), self.const(np.array([0]))])
            return self.cast(s, np.int64, dtype)
        return self.const(np.asarray(value).astype(dtype))

    def i64(self, ints) -> str:
        """A 1-D int64 tensor of ``ints``; entries that are SymInts are computed from shapes."""
        ints = list(ints)
        if not any(isinstance(i, SymInt) for i in ints):
            return self.const(np.asarray(ints, dtype=np.int64).reshape(-1), "shape")
        pieces, run = [], []
        for i in ints:
            if isinstance(i, SymInt):
                if run:
                    pieces.append(self.const(np.asarray(run, dtype=np.int64)))
                    run = []
                pieces.append(self._sym(i))
            else:
                run.append(int(i))
        if run:
            pieces.append(self.const(np.asarray(run, dtype=np.int64)))
        return pieces[0] if len(pieces) == 1 else self.node("Concat", pieces, axis=0)

    def _sym(self, s: SymInt) -> str:
        self.sym_used += 1
        kind = s.expr[0]
        if kind == "lin":
            _, src, a, c = s.expr
            out = self.dim(*src)
            if a != 1:
                out = self.node("Mul", [out, self.const(np.array([a], dtype=np.int64))])
            if c:
                out = self.node("Add", [out, self.const(np.array([c], dtype=np.int64))])
            return out
        _, sources, k = s.expr
        out = None
        for src in sources:
            d = self.dim(*src)
            out = d if out is None else self.node("Mul", [out, d])
        if k != 1:
            out = self.node("Mul", [out, self.const(np.array([k], dtype=np.int64))])
        return out

    def dim(self, input_value, axis) -> str:
        """A 1-element int64 tensor: the run-time size of ``input_value``'s ``axis``."""
        key = (input_value, axis)
        if key not in self._dims:
            shape = self.node("Shape", [self.x(input_value)], name_hint="shape")
            self._dims[key] = self.node("Gather", [shape, self.const(np.array([axis]))], axis=0,
                                        name_hint="dim")
        return self._dims[key]

    def shape_of(self, name) -> str:
        return self.node("Shape", [name], name_hint="shape")

    # -- common helpers -------------------------------------------------------------------
    def cast(self, name, from_dtype, to_dtype) -> str:
        if np.dtype(from_dtype) == np.dtype(to_dtype):
            return name
        return self.node("Cast", [name], to=self.tensor_type(to_dtype))

    def tensor_type(self, dtype) -> int:
        return self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def reduce(self, op_type, x, axes, keepdims) -> str:
        """Reduce* over ``axes`` (None: all) in the form the opset wants."""
        if axes is not None and len(axes) == 0:
            return self.node("Identity", [x])
        if op_type == "ReduceSum" and self.opset >= 13 or self.opset >= 18:
            ins = [x] if axes is None else [x, self.const(np.asarray(axes, dtype=np.int64))]
            return self.node(op_type, ins, keepdims=int(keepdims))
        return self.node(op_type, [x], keepdims=int(keepdims),
                         axes=None if axes is None else [int(a) for a in axes])

    def unsqueeze(self, x, axes) -> str:
        return self.node("Unsqueeze", [x, self.const(np.asarray(axes, dtype=np.int64))])

    def squeeze(self, x, axes) -> str:
        if axes is not None and len(axes) == 0:
            return x
        if axes is None:
            return self.node("Squeeze", [x])
        return self.node("Squeeze", [x, self.const(np.asarray(axes, dtype=np.int64))])

    def reshape(self, x, shape) -> str:
        return self.node("Reshape", [x, self.i64(shape)])

    def slice(self, x, starts, ends, axes, steps=None) -> str:
        ins = [x, self.i64(starts), self.i64(ends), self.i64(axes)]
        if steps is not None:
            ins.append(self.i64(steps))
        return self.node("Slice", ins)

    def gather(self, x, indices, axis) -> str:
        return self.node("Gather", [x, self.const(np.asarray(indices, dtype=np.int64))],
                         axis=int(axis))
