"""graphgrad.compile: capture a function as a flat IR, optimise it, replay it on arrays.

See docs/compiler.md. ``compile`` is exported as ``graphgrad.compile``.
"""

from __future__ import annotations

from .api import CompiledFunction, compile, compile_graph
from .explain import explain
from .ir import Graph, Instr, Value
from .status import is_compiling, is_dynamo_compiling, is_exporting
from .trace import GraphBreak

__all__ = ["compile", "explain", "CompiledFunction", "compile_graph", "Graph", "Instr", "Value",
           "GraphBreak", "is_compiling", "is_dynamo_compiling", "is_exporting"]
