"""Graph drawings: ``to_dot(tensor)`` writes the graph behind a tensor as Graphviz DOT text (no
dependency); ``render(...)`` turns it into a picture with the ``graphviz`` package (the ``viz``
extra) and Graphviz's ``dot`` program.

Each op node shows its name and the tensors it saved for backward (shape, dtype, bytes, or
"freed" after a backward released them); leaves show their name (from ``params``) and shape;
the output is drawn as a tensor too.

>>> import graphgrad as torch
>>> w = torch.tensor(3.0, requires_grad=True)
>>> print(torch.viz.to_dot(w * 2, params={"w": w}).splitlines()[0])
digraph graphgrad {
"""

from __future__ import annotations

import numpy as np

from .autograd.graph import AccumulateGrad, Freed

__all__ = ["to_dot", "render"]

_LEAF = 'shape=box, style=filled, fillcolor="#cde4ff"'
_OUTPUT = 'shape=box, style=filled, fillcolor="#c9f0c9"'
_OP = 'shape=box, style=filled, fillcolor="#eeeeee"'


def _bytes(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB" if n < 1024 ** 2 else \
        f"{n / 1024 ** 2:.1f} MiB"


def _shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _quote(text: str) -> str:
    """A DOT string literal; line breaks become DOT's ``\\n``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _saved_lines(node) -> list[str]:
    saved = getattr(node, "_saved", ())
    if type(saved) is Freed:
        return ["saved: freed by backward"]
    lines = []
    for v in saved if isinstance(saved, tuple) else ():
        a = getattr(v, "_data", v)
        if isinstance(a, np.ndarray):
            lines.append(f"saved {_shape(a.shape)} {a.dtype.name} {_bytes(a.nbytes)}")
    return lines


def to_dot(tensor, params=None, show_saved=True) -> str:
    """The graph that produced ``tensor`` (or a sequence of tensors) as DOT text; ``params``
    maps names to leaf tensors (``dict(model.named_parameters())``) to label them."""
    outputs = list(tensor) if isinstance(tensor, (list, tuple)) else [tensor]
    names = {id(t): n for n, t in (params or {}).items()}
    lines = ["digraph graphgrad {", '  node [fontname="monospace", fontsize=10];',
             "  rankdir=BT;"]
    ids: dict[int, str] = {}

    def node_id(obj) -> str:
        if id(obj) not in ids:
            ids[id(obj)] = f"n{len(ids)}"
        return ids[id(obj)]

    stack, seen = [], set()
    for i, t in enumerate(outputs):
        out = f"out{i}"
        label = f"output {_shape(t.shape)} {t.dtype.name if hasattr(t.dtype, 'name') else ''}"
        lines.append(f"  {out} [label={_quote(label.strip())}, {_OUTPUT}];")
        if t.grad_fn is not None:
            lines.append(f"  {node_id(t.grad_fn)} -> {out};")
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nid = node_id(node)
        if type(node) is AccumulateGrad:
            leaf = node.variable
            label = f"{names.get(id(leaf), 'leaf')}\n{_shape(leaf.shape)}"
            lines.append(f"  {nid} [label={_quote(label)}, {_LEAF}];")
            continue
        label = "\n".join([type(node).__name__] + (_saved_lines(node) if show_saved else []))
        lines.append(f"  {nid} [label={_quote(label)}, {_OP}];")
        for child, _ in node.next_functions:
            if child is not None:
                lines.append(f"  {node_id(child)} -> {nid};")
                stack.append(child)
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(tensor, filename="graph", format="png", params=None, show_saved=True) -> str:
    """Draws the graph to ``filename.format`` with Graphviz; returns the file's path."""
    try:
        import graphviz
    except ImportError:
        raise ImportError("graphgrad.viz.render needs the graphviz package: pip install "
                          "'graphgrad[viz]' (and Graphviz's dot program, e.g. apt-get install "
                          "graphviz); graphgrad.viz.to_dot works without it") from None
    source = graphviz.Source(to_dot(tensor, params, show_saved))
    try:
        return source.render(filename, format=format, cleanup=True)
    except graphviz.ExecutableNotFound:
        raise RuntimeError("graphgrad.viz.render: Graphviz's dot program is not installed "
                           "(apt-get install graphviz, or brew install graphviz)") from None
