"""Views and in-place changes through them: CopySlices and the regenerated view history.

Note [Views]: an op marked ``view=True`` returns a NumPy view of its input, so the output
shares storage with it. The dispatcher gives the output the input's version cell and
``_view = [base, chain, creation, version seen]``: the root tensor whose storage it shares, the
chain of ``(op, params)`` that rebuilds it from that root, how it was made (``None``,
``"no_grad"`` or ``("multi", i)`` for an output of split/unbind) and the version at which its
``grad_fn`` was last valid.

An in-place op on a view ``v`` of base ``b`` writes through NumPy into ``b``'s storage; for
autograd, ``b``'s history becomes a ``CopySlices`` node with two edges: ``b``'s old history,
which receives the gradient outside the region ``v`` covers, and the in-place op's result, which
receives the region. Every view of ``b`` then holds a stale ``grad_fn``: it is rebuilt lazily
(``refresh``), on first use after the version moved, as one ``AsStridedBackward0`` node over
``b``'s current history, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from .. import _tensor
from ..autograd.errors import AutogradError
from ..autograd.grad_mode import state as _mode
from ._dispatch import _edge, _new_node, unary
from ._opdef import defop

__all__ = ["refresh", "rebase", "check_inplace_view"]


def _chain_forward(ns, g, chain):
    """The view of ``g`` (shaped like the base) that ``chain`` selects."""
    if ns.differentiable:
        for op, params in chain:
            g = unary(op, g, params)
        return g
    for op, params in chain:
        g = op.forward(np, g, **params) if params else op.forward(np, g)
    return g


def _chain_backward(ns, g, chain):
    """A base-shaped gradient holding ``g`` in the region ``chain`` selects, zeros elsewhere."""
    for op, params in reversed(chain):
        g = op.vjp(ns, g, **params) if params else op.vjp(ns, g)
    return g


def _copy_slices_vjp(ns, g, chain):
    region = _chain_forward(ns, g, chain)
    if ns.differentiable:
        outside = g - _chain_backward(ns, region, chain)
    else:
        outside = g.copy()
        _chain_forward(ns, outside, chain)[...] = 0
    return outside, region


def _as_strided_vjp(ns, g, chain):
    return _chain_backward(ns, g, chain)


# Records without a forward: their nodes are made by in-place ops, never by a call.
COPY_SLICES = defop("copy_slices", None, _copy_slices_vjp, kind="movement",
                    dtype_rule="same", node="CopySlices")
AS_STRIDED = defop("as_strided", None, _as_strided_vjp, kind="movement",
                   dtype_rule="same", node="AsStridedBackward0")


def _meta(t):
    return (t._data.shape, t._data.dtype)


def refresh(t):
    """Rebuilds the ``grad_fn`` of view ``t`` after its storage changed (see Note [Views])."""
    info = t._view
    version = t._vc[0]
    if info[3] == version:
        return
    info[3] = version
    base = info[0]
    if info[2] == "no_grad" or not base._rg or _mode.inference:
        return
    node = _new_node(AS_STRIDED, (_edge(base),), (_meta(base),), {"chain": info[1]})
    node._saved = ()
    node._versions = None
    t._fn = node
    t._rg = True


def check_inplace_view(t, recording):
    """torch's errors for in-place ops on views it cannot track."""
    info = t._view
    base = info[0]
    if not recording:
        return
    if base._rg and base._fn is None and info[2] != "no_grad":
        raise AutogradError(
            "a view of a leaf Variable that requires grad is being used in an in-place "
            "operation.", shapes=[list(base._data.shape)],
            fix="change the leaf under `with torch.no_grad():`, or clone it before taking the "
                "view")
    creation = info[2]
    if creation == "no_grad" and base._rg:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
            "You can clarify your code by moving both the view and the inplace either both "
            "inside the no_grad block (if you don't want the inplace to be tracked) or both "
            "outside (if you want the inplace to be tracked).")
    if type(creation) is tuple:
        fn_name = info[1][-1][0].node_cls.__name__.removesuffix("Backward0")
        raise RuntimeError(
            f"Output {creation[1]} of {fn_name} is a view and is being modified inplace. This "
            "view is the output of a function that returns multiple views. Such functions do "
            "not allow the output views to be modified inplace. You should replace the inplace "
            "operation by an out-of-place one.")


def rebase(t, result):
    """After ``result`` was written into view ``t``: the base's history becomes CopySlices."""
    info = t._view
    base = info[0]
    node = _new_node(COPY_SLICES, (_edge(base), result._fn), (_meta(base), _meta(result)),
                     {"chain": info[1]})
    node._saved = ()
    node._versions = None
    base._fn = node
    base._rg = True


_tensor._refresh_view = refresh
