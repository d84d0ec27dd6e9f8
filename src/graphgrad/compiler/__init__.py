"""graphgrad.compile: capture a function as a flat IR, optimise it, replay it on arrays.

See docs/compiler.md. ``compile`` is exported as ``graphgrad.compile``; this package is also
``graphgrad.compiler`` (torch.compiler's ``reset``, ``set_stance``, ``is_compiling``,
``list_backends``; ``set_logs`` as torch._logging's).
"""

from __future__ import annotations

from .api import CompiledFunction, compile, compile_graph
from .controls import list_backends
from .explain import explain
from .ir import Graph, Instr, Value
from .logs import set_logs
from .stance import reset, set_stance
from .status import is_compiling, is_dynamo_compiling, is_exporting
from .trace import GraphBreak

__all__ = ["compile", "explain", "CompiledFunction", "compile_graph", "Graph", "Instr", "Value",
           "GraphBreak", "is_compiling", "is_dynamo_compiling", "is_exporting", "reset",
           "set_stance", "list_backends", "set_logs"]
