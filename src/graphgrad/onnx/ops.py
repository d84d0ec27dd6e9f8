"""The ONNX mapping of every op in ``graphgrad.ops.OPS``, keyed by op name.

Each entry is a ``Mapping``: the lowest opset its converter supports, the converter (called
with the Builder and the IR instr, returns one ONNX name per instr output) and a note naming
the ONNX operators used (``decomposes`` when there is no direct ONNX op). Ops that cannot be
exported are listed in ``REASONS`` with why. The coverage test fails when an op of the table
is in neither. ``OpDef.onnx`` is the op author's hint; this table is what export uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..compiler.ir import Value
from .builder import ExportError

__all__ = ["Mapping", "MAPPINGS", "REASONS", "register", "lookup", "arg", "LATEST_OPSET",
           "MIN_OPSET"]

# The highest opset export writes (onnxruntime 1.32 runs every op below at 21) and the lowest
# any converter supports (axes as inputs of ReduceSum/Squeeze/Unsqueeze, Split arrived at 13).
LATEST_OPSET = 21
MIN_OPSET = 13


@dataclass(frozen=True)
class Mapping:
    min_opset: int
    convert: Callable
    onnx_ops: str  # the ONNX operators the converter emits, for the docs and the audit


MAPPINGS: dict[str, Mapping] = {}
REASONS: dict[str, str] = {}


def register(names, onnx_ops, min_opset=MIN_OPSET):
    """Decorator: ``fn(b, instr)`` converts every op in ``names``."""
    if isinstance(names, str):
        names = [names]

    def deco(fn):
        for n in names:
            if n in MAPPINGS:
                raise ValueError(f"ONNX mapping for {n!r} registered twice")
            MAPPINGS[n] = Mapping(min_opset, fn, onnx_ops)
        return fn
    return deco


def unsupported(names, reason):
    for n in [names] if isinstance(names, str) else names:
        REASONS[n] = reason


def lookup(name, opset):
    """The Mapping for op ``name`` at ``opset``; ExportError naming the reason otherwise."""
    m = MAPPINGS.get(name)
    if m is None:
        why = REASONS.get(name, "no ONNX mapping has been written for it")
        raise ExportError(f"op {name!r} cannot be exported to ONNX: {why}")
    if opset < m.min_opset:
        raise ExportError(f"op {name!r} needs opset {m.min_opset} or later (asked for {opset})")
    return m


def arg(b, instr, i, dtype=None):
    """The ONNX name of input ``i`` of ``instr``, cast to ``dtype`` when given; a Python
    scalar literal becomes a constant of ``dtype`` (or of the first output's dtype)."""
    x = instr.ins[i]
    if isinstance(x, Value):
        name = b.x(x)
        return name if dtype is None else b.cast(name, x.dtype, dtype)
    if x is None:
        raise ExportError(f"{instr.name}: input {i} is None")
    if dtype is None:
        dtype = instr.outs[0].dtype
    return b.scalar(x, dtype)


def in_dtype(instr, i):
    x = instr.ins[i]
    return x.dtype if isinstance(x, Value) else np.asarray(x).dtype


# The converters register themselves on import.
from . import (  # noqa: E402,F401
    _conv_bitshift,
    _conv_complex,
    _conv_ctc,
    _conv_extra,
    _conv_linalg_extra,
    _conv_math,
    _conv_nn,
    _conv_reduce,
    _conv_shape,
    _conv_spatial3d,
    _conv_special,
)
from ._reasons import REASONS as _R  # noqa: E402

for _k, _v in _R.items():
    if _k not in MAPPINGS:
        REASONS[_k] = _v
