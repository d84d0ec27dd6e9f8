"""The records and NumPy kernels behind sparse tensors: scatter, gather, spmm, alias.

Note [Sparse values]: a sparse tensor takes part in autograd through its values tensor (one
row per stored entry). Every sparse op is an op on values: ``scatter`` adds values into a
dense array (to_dense, coalesce, sums), ``gather`` reads dense entries into values
(to_sparse, ``sparse * dense``), ``spmm`` multiplies a sparse matrix, given as row and column
index arrays and its values, with a dense operand. scatter and gather are each other's
derivative, and spmm's derivative is spmm with the indices swapped, so the rules stay
differentiable (``create_graph=True``) by calling the same records. The gradient reaching a
sparse tensor is therefore the dense gradient read at its stored entries: torch's "masked"
convention (the gradient has the input's sparsity pattern).

The records are OpDef objects applied through the one dispatch point, but they are not entered
in ``graphgrad.ops.OPS``: their inputs are index arrays plus values, not the tensors a user
passes, so the generic OpInfo sweep and the ONNX table (which key on OPS) do not apply; the
tests in tests/sparse check them against torch and finite differences instead.
"""

from __future__ import annotations

import numpy as np

from .._tensor import wrap
from ..ops._dispatch import apply
from ..ops._opdef import OpDef

__all__ = ["segment_sum", "record", "scatter", "gather", "spmm", "alias", "index_tensor"]


def _segments(seg):
    """(start of each run, its id) for sorted ids ``seg``."""
    first = np.empty(seg.shape[0], dtype=bool)
    first[0] = True
    np.not_equal(seg[1:], seg[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return starts, seg[starts]


def _sorted(seg):
    return seg.shape[0] < 2 or bool((seg[1:] >= seg[:-1]).all())


def segment_sum(seg, vals, n):
    """Sums the rows of ``vals`` that share a segment id into an ``(n, *vals.shape[1:])`` array.

    Sorted ids (the rows of a coalesced tensor) go straight to ``np.add.reduceat``; others are
    sorted first. ``np.add.at`` would be 10-50x slower.
    """
    out = np.zeros((n,) + vals.shape[1:], dtype=vals.dtype)
    if seg.shape[0] == 0:
        return out
    if not _sorted(seg):
        order = np.argsort(seg, kind="stable")
        seg = seg[order]
        vals = vals[order]
    starts, ids = _segments(seg)
    out[ids] = np.add.reduceat(vals, starts, axis=0)
    return out


# -- forwards and rules --------------------------------------------------------------------
def _scatter_fwd(xp, idx, vals, flat, shape, unique):
    if unique:
        out = np.zeros(flat, dtype=vals.dtype)
        out[idx] = vals
    else:
        out = segment_sum(idx, vals, flat[0])
    return out.reshape(shape)


def _scatter_rule(ns, g, idx, flat, shape, unique):
    if ns.differentiable:
        return None, gather(idx, g, flat)
    return None, np.take(g.reshape(flat), idx, axis=0)


def _gather_fwd(xp, idx, x, flat, shape, unique):
    return np.take(x.reshape(flat), idx, axis=0)


def _gather_rule(ns, g, idx, flat, shape, unique):
    if ns.differentiable:
        return None, scatter(idx, g, flat, shape, unique=unique)
    return None, _scatter_fwd(np, idx, g, flat, shape, unique)


def sort_order(seg):
    """The stable order that sorts ``seg``, or None when it is sorted already."""
    return None if _sorted(seg) else np.argsort(seg, kind="stable")


def _spmm_fwd(xp, rows, cols, vals, x, n, orders=None):
    out = np.zeros((n,) + x.shape[1:], dtype=np.result_type(vals, x))
    if rows.shape[0] == 0:
        return out
    order = sort_order(rows) if orders is None else orders[0]
    if order is not None:  # permute the 1-D index arrays, not the gathered rows
        rows, cols, vals = rows[order], cols[order], vals[order]
    starts, ids = _segments(rows)
    if x.ndim == 2:
        # gathered as (k, nnz): reduceat then adds contiguous runs (about 2x faster than rows)
        picked = np.take(np.ascontiguousarray(x.T), cols, axis=1).astype(out.dtype, copy=False)
        picked *= vals
        out[ids] = np.add.reduceat(picked, starts, axis=1).T
    else:
        out[ids] = np.add.reduceat(np.take(x, cols) * vals, starts)
    return out


def _spmm_rule(ns, g, rows, cols, vals, x, n, needs, orders=None):
    gv = gx = None
    m = x.shape[0]
    swapped = None if orders is None else orders[::-1]
    if ns.differentiable:
        if needs[3]:
            gx = spmm(cols, rows, vals, g, m, "MmBackward0", orders=swapped)
        if needs[2]:
            r, c = ns.raw(rows), ns.raw(cols)
            prod = ns.getitem(g, r) * ns.getitem(x, c)
            gv = prod.sum(dim=tuple(range(1, prod.ndim))) if prod.ndim > 1 else prod
    else:
        if needs[3]:
            gx = _spmm_fwd(np, cols, rows, vals, g, m, swapped)
        if needs[2]:
            if x.ndim == 2:
                gv = np.einsum("ij,ij->i", np.take(g, rows, axis=0), np.take(x, cols, axis=0))
            else:
                gv = np.take(g, rows) * np.take(x, cols)
    return None, None, gv, gx


def _alias_fwd(xp, v):
    return v


def _alias_rule(ns, g):
    return g


def _copy_fwd(xp, v):
    return v.copy()


_KINDS = {
    # name: (forward, rule, saved inputs, needs mask, op kind)
    "scatter": (_scatter_fwd, _scatter_rule, (0,), False, "indexing"),
    "gather": (_gather_fwd, _gather_rule, (0,), False, "indexing"),
    "spmm": (_spmm_fwd, _spmm_rule, (0, 1, 2, 3), True, "contraction"),
    "alias": (_alias_fwd, _alias_rule, (), False, "movement"),
    "copy": (_copy_fwd, _alias_rule, (), False, "movement"),
}
_RECORDS: dict = {}


def record(kind, node):
    """The record of sparse op ``kind`` whose graph node is called ``node`` (torch's grad_fn
    name differs by entry point: torch.mm gives MmBackward0, torch.sparse.mm
    SparseAddmmBackward0), made once."""
    op = _RECORDS.get((kind, node))
    if op is None:
        fwd, rule, save, needs, op_kind = _KINDS[kind]
        op = _RECORDS[(kind, node)] = OpDef(f"sparse_{kind}", fwd, rule, kind=op_kind, save=save,
                                            dtype_rule="same", node=node, needs_mask=needs,
                                            onnx=None)
    return op


def index_tensor(a):
    """An int64 index array as a constant input of a record."""
    return wrap(np.ascontiguousarray(a, dtype=np.int64), False, None)


def _idx(idx):
    return idx if not isinstance(idx, np.ndarray) else index_tensor(idx)


def scatter(idx, vals, flat, shape, *, unique=False, node="ToDenseBackward0"):
    """Adds row ``k`` of ``vals`` into row ``idx[k]`` of a zero ``flat``-shaped array, returned
    reshaped to ``shape``; ``unique`` says no index repeats (a plain assignment)."""
    return apply(record("scatter", node), (_idx(idx), vals),
                 {"flat": tuple(flat), "shape": tuple(shape), "unique": unique})


def gather(idx, x, flat, *, unique=False, node="IndexBackward0"):
    """Rows ``idx`` of ``x`` viewed as a ``flat``-shaped array."""
    return apply(record("gather", node), (_idx(idx), x),
                 {"flat": tuple(flat), "shape": tuple(x.shape), "unique": unique})


def spmm(rows, cols, vals, x, n, node, orders=None):
    """The ``(n, ...)`` product of the sparse matrix (rows, cols, vals) with dense ``x``;
    ``orders`` (the sort orders of rows and of cols, None where sorted) saves the sorts when the
    same matrix is used again (a GCN's adjacency)."""
    params = {"n": n} if orders is None else {"n": n, "orders": orders}
    return apply(record("spmm", node), (_idx(rows), _idx(cols), vals, x), params)


def alias(t, node, *, copy=False):
    """``t`` under a node named ``node`` (torch's grad_fn name for the sparse op)."""
    return apply(record("copy" if copy else "alias", node), (t,))
