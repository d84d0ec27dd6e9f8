"""KernelSpec: what a code generator receives for one fused group, independent of the IR.

Slots number the kernel's values: inputs first (``0 .. len(inputs)-1``), then one slot per
term, in order. Every term reads slots or literals; reductions (sum/mean over the trailing
``naxes`` of the iteration shape) come last and read full-shape slots.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Lit", "Term", "KernelSpec"]


class Lit:
    """A literal operand (a Python number or None), baked into the kernel's source."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return f"Lit({self.value!r})"

    def __eq__(self, other):
        return isinstance(other, Lit) and type(other.value) is type(self.value) and (
            other.value == self.value or (other.value != other.value and
                                          self.value != self.value))

    def __hash__(self):
        return hash((type(self.value), repr(self.value)))


class Term:
    """One op inside a kernel: ``op`` is an OpDef (or the string ``"cast"``), ``args`` are
    slots (ints) or ``Lit``s in the forward's positional order, ``params`` its keyword
    arguments, ``dtype`` the result's dtype and ``shape`` its shape."""

    __slots__ = ("op", "args", "params", "dtype", "shape")

    def __init__(self, op, args, params, dtype, shape):
        self.op = op
        self.args = tuple(args)
        self.params = dict(params or {})
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)

    @property
    def name(self) -> str:
        return self.op if isinstance(self.op, str) else self.op.name

    @property
    def is_reduction(self) -> bool:
        return not isinstance(self.op, str) and self.op.kind == "reduction"

    def __repr__(self) -> str:
        return f"Term({self.name}, {self.args}, {self.params}, {self.dtype})"


class KernelSpec:
    """A fused group: ``shape`` is the iteration shape (every input broadcasts to it),
    ``inputs`` a list of (shape, dtype), ``terms`` the ops, ``outputs`` the slots the kernel
    returns (full-shape values, then reductions, in the order given)."""

    def __init__(self, shape, inputs, terms, outputs):
        self.shape = tuple(shape)
        self.inputs = [(tuple(s), np.dtype(d)) for s, d in inputs]
        self.terms = list(terms)
        self.outputs = list(outputs)

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    def slot_dtype(self, slot):
        if slot < self.n_inputs:
            return self.inputs[slot][1]
        return self.terms[slot - self.n_inputs].dtype

    def slot_shape(self, slot):
        if slot < self.n_inputs:
            return self.inputs[slot][0]
        return self.terms[slot - self.n_inputs].shape

    def term(self, slot) -> Term | None:
        return None if slot < self.n_inputs else self.terms[slot - self.n_inputs]

    @property
    def naxes(self) -> int:
        """How many trailing axes the reductions fold (0: no reduction)."""
        for t in self.terms:
            if t.is_reduction:
                axes = t.params.get("axes")
                return len(self.shape) if axes is None else len(axes)
        return 0

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def key(self) -> str:
        """A text that identifies the kernel's structure (shapes reduced to their broadcast
        pattern, so one kernel serves every batch size with the same pattern)."""
        parts = [f"nd{len(self.shape)} red{self.naxes}"]
        for s, d in self.inputs:
            parts.append(f"in {d.name} {_pattern(s, self.shape)}")
        for t in self.terms:
            args = ",".join(str(a) if isinstance(a, int) else repr(a.value) for a in t.args)
            params = ",".join(f"{k}={_param_text(v)}" for k, v in sorted(t.params.items())
                              if k not in ("shape", "in_shape"))
            parts.append(f"{t.name}({args};{params})->{t.dtype.name}")
        parts.append("out " + ",".join(map(str, self.outputs)))
        return "\n".join(parts)

    def __repr__(self) -> str:
        return f"KernelSpec(shape={self.shape}, terms={len(self.terms)})"


def _param_text(v):
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return np.dtype(v).name
    return repr(v)


def _pattern(in_shape, shape) -> str:
    """How an input of ``in_shape`` broadcasts to ``shape``: 'full', 'one', or per-dim
    letters (F: present, B: broadcast) after right-alignment."""
    in_shape = tuple(in_shape)
    if in_shape == tuple(shape):
        return "full"
    if math.prod(in_shape) == 1:
        return "one"
    padded = (1,) * (len(shape) - len(in_shape)) + in_shape
    return "".join("B" if p == 1 and s != 1 else "F" for p, s in zip(padded, shape))
