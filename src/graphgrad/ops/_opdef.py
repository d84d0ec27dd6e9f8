"""The op record: one per operation, read by the engine, the docs and the coverage test.

An OpDef holds the forward (written against an array namespace ``xp``), the derivative rule
(a VJP written against a rules namespace ``ns``: raw arrays, or differentiable tensors when a
higher-order graph is wanted; see Note [Rules namespace]), what it saves, its kind and its
dtype rule. ``OPS`` is the table: every op in graphgrad is registered here exactly once.
"""

from __future__ import annotations

from ..autograd.graph import node_class

__all__ = ["OpDef", "OPS", "defop", "KINDS"]

KINDS = ("elementwise", "reduction", "movement", "contraction", "indexing", "creation", "opaque")

# dtype rules: how the dispatcher prepares input dtypes before calling forward.
#   "promote": cast tensor inputs to their torch-promoted common dtype
#   "float":   like promote, then integral/bool results go to the default float dtype
#   "same":    no casting; forward keeps its input's dtype (movement, indexing, ...)
DTYPE_RULES = ("promote", "float", "same")

OPS: dict[str, OpDef] = {}


class OpDef:
    """One operation of the table.

    ``save`` lists what the rule receives after the gradient: an int ``i`` is input ``i`` (a
    tensor or a Python scalar), ``"out"`` is the op's output. Params (keyword arguments of the
    forward) are passed to the rule by keyword too. With ``needs_mask`` the rule also gets
    ``needs``, a tuple of bools saying which inputs want a gradient, to skip costly products.
    """

    __slots__ = (
        "name", "forward", "vjp", "kind", "save", "dtype_rule", "node_cls", "needs_mask",
        "onnx", "frees", "hidden_inputs", "view", "slow",
    )

    def __init__(self, name, forward, vjp, *, kind, save, dtype_rule, node, needs_mask, onnx,
                 hidden_inputs=(), view=False):
        if kind not in KINDS:
            raise ValueError(f"op {name}: unknown kind {kind!r}")
        if dtype_rule not in DTYPE_RULES:
            raise ValueError(f"op {name}: unknown dtype rule {dtype_rule!r}")
        self.name = name
        self.forward = forward
        self.vjp = vjp
        self.kind = kind
        self.save = tuple(save)
        self.dtype_rule = dtype_rule
        self.node_cls = node_class(node) if node else None
        self.needs_mask = needs_mask
        self.onnx = onnx
        # A node that saved tensors cannot run twice once backward has released them.
        self.frees = bool(self.save)
        # Inputs torch does not list in next_functions: "scalars" (a Python number that is part
        # of the overload, as in pow.Tensor_Scalar) or indices (where's condition).
        self.hidden_inputs = hidden_inputs
        # True when the forward returns a view of its (single) input, "multi" for the outputs of
        # split/unbind; see Note [Views] in ops/views.py.
        self.view = view
        # The engine's hot path skips ops that need more than their rule (a needs mask).
        self.slow = needs_mask

    def __repr__(self) -> str:
        return f"OpDef({self.name!r}, kind={self.kind!r})"


def defop(name, forward, vjp=None, *, kind, save=(), dtype_rule="promote", node=None,
          needs_mask=False, onnx=None, hidden_inputs=(), view=False) -> OpDef:
    """Registers an op in ``OPS``; ``node`` is the grad_fn class name (torch's)."""
    if name in OPS:
        raise ValueError(f"op {name!r} is defined twice")
    if vjp is not None and node is None:
        raise ValueError(f"op {name!r} is differentiable but names no grad_fn class")
    op = OpDef(name, forward, vjp, kind=kind, save=save, dtype_rule=dtype_rule, node=node,
               needs_mask=needs_mask, onnx=onnx, hidden_inputs=hidden_inputs, view=view)
    OPS[name] = op
    return op
