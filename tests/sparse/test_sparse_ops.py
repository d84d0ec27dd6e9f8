"""Sparse COO ops against torch 2.13: forward values, gradients to the values and to dense
operands, grad_fn names, and repr."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _sparse_harness import compare

import graphgrad as gg

RNG = np.random.default_rng(13)
IDX = np.array([[0, 1, 1, 2, 3], [2, 0, 3, 1, 3]])          # coalesced order
UNC = np.array([[2, 0, 1, 2, 0], [1, 2, 0, 1, 2]])          # unsorted, with duplicates
VALS = RNG.standard_normal(5)
X = RNG.standard_normal((4, 3))
VEC = RNG.standard_normal(4)
IDX2 = np.array([[0, 1, 2, 3], [1, 0, 2, 3]])
# torch merges the operands of a sparse add or mul as if both were sorted; with an unsorted
# operand its pattern differs from graphgrad's (sorted and duplicate-free), not its values
PATTERN_DIFFERS = {"add", "sub", "mul_sparse_uncoalesced"}


def coo(m, v, idx=IDX, size=(4, 4), **kw):
    return m.sparse_coo_tensor(m.tensor(idx), v, size, **kw)


CASES = {
    "sparse_mm": (lambda m, v, x: m.sparse.mm(coo(m, v), x), (VALS, X)),
    "sparse_mm_uncoalesced": (lambda m, v, x: m.sparse.mm(coo(m, v, UNC), x), (VALS, X)),
    "torch_mm": (lambda m, v, x: m.mm(coo(m, v), x), (VALS, X)),
    "matmul": (lambda m, v, x: m.matmul(coo(m, v), x), (VALS, X)),
    "at": (lambda m, v, x: coo(m, v) @ x, (VALS, X)),
    "spmm": (lambda m, v, x: m.spmm(coo(m, v), x), (VALS, X)),
    "mv": (lambda m, v, x: m.mv(coo(m, v), x), (VALS, VEC)),
    "at_vector": (lambda m, v, x: coo(m, v) @ x, (VALS, VEC)),
    "dense_at_sparse": (lambda m, v, x: x.t() @ coo(m, v), (VALS, X)),
    "torch_mm_dense_sparse": (lambda m, v, x: m.mm(x.t(), coo(m, v)), (VALS, X)),
    "sparse_mm_dense_sparse": (lambda m, v, x: m.sparse.mm(x.t(), coo(m, v)), (VALS, X)),
    "addmm": (lambda m, v, x: m.addmm(x, coo(m, v), x, beta=0.5, alpha=2.0), (VALS, X)),
    "sparse_addmm": (lambda m, v, x: m.sparse.addmm(x, coo(m, v), x), (VALS, X)),
    "sparse_sparse_mm": (lambda m, v, w: m.sparse.mm(coo(m, v), coo(m, w, UNC)),
                         (VALS, VALS[::-1].copy())),
    "to_dense": (lambda m, v: coo(m, v).to_dense(), (VALS,)),
    "to_dense_uncoalesced": (lambda m, v: coo(m, v, UNC).to_dense(), (VALS,)),
    "coalesce": (lambda m, v: coo(m, v, UNC).coalesce(), (VALS,)),
    "coalesce_values": (lambda m, v: coo(m, v, UNC).coalesce().values(), (VALS,)),
    "values_squared": (lambda m, v: coo(m, v).coalesce().values() ** 2, (VALS,)),
    "transpose": (lambda m, v, x: m.sparse.mm(coo(m, v).t(), x), (VALS, X)),
    "transpose01": (lambda m, v: coo(m, v).transpose(0, 1), (VALS,)),
    "scalar_mul": (lambda m, v: 2.5 * coo(m, v) * 2, (VALS,)),
    "scalar_div": (lambda m, v: coo(m, v) / 4, (VALS,)),
    "neg": (lambda m, v: -coo(m, v), (VALS,)),
    "relu_pow": (lambda m, v: coo(m, v).relu() + coo(m, v).abs().pow(2), (VALS,)),
    "add": (lambda m, v, w: coo(m, v) + coo(m, w, UNC), (VALS, VALS[::-1].copy())),
    "sub": (lambda m, v, w: coo(m, v) - coo(m, w, UNC), (VALS, VALS[::-1].copy())),
    "add_sorted": (lambda m, v, w: coo(m, v) + coo(m, w, IDX2), (VALS, VALS[:4].copy())),
    "add_coalesced": (lambda m, v, w: coo(m, v).coalesce() + coo(m, w, IDX2).coalesce(),
                      (VALS, VALS[:4].copy())),
    "dense_plus_sparse": (lambda m, v, x: x @ x.t() + coo(m, v), (VALS, X)),
    "sparse_times_dense": (lambda m, v, x: coo(m, v) * (x @ x.t()), (VALS, X)),
    "to_sparse": (lambda m, x: m.sparse.mm(m.relu(x @ x.t()).to_sparse(), x), (X,)),
    "to_sparse_dims": (lambda m, x: (x * (x > 0)).reshape(2, 2, 3).to_sparse(1).to_dense() * 3,
                       (X,)),
    "sum_all": (lambda m, v: m.sparse.sum(coo(m, v, UNC)), (VALS,)),
    "sum_dim0": (lambda m, v: m.sparse.sum(coo(m, v, UNC), 0), (VALS,)),
    "sum_dim1": (lambda m, v: m.sparse.sum(coo(m, v), dim=1), (VALS,)),
    "sum_both": (lambda m, v: m.sparse.sum(coo(m, v), (0, 1)), (VALS,)),
    "tensor_sum": (lambda m, v: coo(m, v).sum(), (VALS,)),
    "tensor_sum_dim": (lambda m, v: coo(m, v).sum(1), (VALS,)),
    "softmax1": (lambda m, v: m.sparse.softmax(coo(m, v), 1), (VALS,)),
    "softmax0_uncoalesced": (lambda m, v: m.sparse.softmax(coo(m, v, UNC), 0), (VALS,)),
    "log_softmax": (lambda m, v: m.sparse.log_softmax(coo(m, v), 1), (VALS,)),
    "log_softmax_negative_dim": (lambda m, v: m.sparse.log_softmax(coo(m, v), -1), (VALS,)),
    "softmax_negative_dim": (lambda m, v: m.sparse.softmax(coo(m, v, UNC), -2), (VALS,)),
    "softmax_dense_dim": (lambda m, v: m.sparse.softmax(
        m.sparse_coo_tensor(m.tensor(IDX[:1, :3]), v.reshape(3, 2), (4, 2)), 1),
        (RNG.standard_normal(6),)),
    "sum_dense_dim": (lambda m, v: m.sparse.sum(
        m.sparse_coo_tensor(m.tensor(IDX[:1, :3]), v.reshape(3, 2), (4, 2)), 0),
        (RNG.standard_normal(6),)),
    "leaf_values_to_double": (lambda m, v, x: m.sparse.mm(coo(m, v.double()), x.double()),
                              (VALS.astype(np.float32), X.astype(np.float32))),
    "float32": (lambda m, v, x: m.sparse.mm(coo(m, v), x),
                (VALS.astype(np.float32), X.astype(np.float32))),
    "empty": (lambda m, v, x: m.sparse.mm(coo(m, v, np.zeros((2, 0), np.int64)), x),
              (np.zeros(0), X)),
    "mul_broadcast_column": (lambda m, v, c: coo(m, v) * c.reshape(4, 1), (VALS, VEC)),
    "mul_broadcast_row": (lambda m, v, c: c * coo(m, v, UNC), (VALS, VEC)),
    "mul_sparse": (lambda m, v, w: coo(m, v).coalesce() * coo(m, w, IDX2).coalesce(),
                   (VALS, VALS[:4].copy())),
    "mul_sparse_uncoalesced": (lambda m, v, w: coo(m, v, UNC) * coo(m, w, IDX2),
                               (VALS, VALS[:4].copy())),
    "index_select": (lambda m, v: coo(m, v, UNC).index_select(0, m.tensor([2, 0, 2, 3])),
                     (VALS,)),
    "index_select_coalesced": (lambda m, v: coo(m, v).coalesce().index_select(
        1, m.tensor([3, 1])), (VALS,)),
    "select_int": (lambda m, v: coo(m, v, UNC)[2], (VALS,)),
    "select_dim1": (lambda m, v: coo(m, v).coalesce().select(1, -2), (VALS,)),
    "sparse_mask": (lambda m, x: (x @ x.t()).sparse_mask(coo(m, m.ones(5, dtype=m.float64),
                                                                UNC)), (X,)),
    "sparse_mask_coalesced": (lambda m, x: (x @ x.t()).sparse_mask(
        coo(m, m.ones(5, dtype=m.float64)).coalesce()), (X,)),
    "dsmm": (lambda m, v, x: m.dsmm(coo(m, v), x), (VALS, X)),
    "spdiags": (lambda m, d: m.sparse.spdiags(d, m.tensor([0, -1, 2]), (4, 4)).to_dense(),
                (RNG.standard_normal((3, 4)),)),
}
# Forward only: torch 2.13 has no gradient for these (spdiags: "derivative for aten::_spdiags
# is not implemented"; Tensor.sum(dim) on sparse: "expand is unsupported for Sparse tensors";
# index_select: no sparse index_add_; select: no sparse select_backward; sparse * broadcast
# dense: no sparse reshape), or a wrong
# one: torch.sparse.softmax/log_softmax with a negative dim fail torch's own gradcheck.
# graphgrad's gradients there are checked by finite differences below.
FORWARD_ONLY = {"spdiags", "tensor_sum_dim", "log_softmax_negative_dim",
                "softmax_negative_dim", "index_select", "index_select_coalesced",
                "mul_broadcast_column", "mul_broadcast_row", "select_int", "select_dim1"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    program, arrays = CASES[name]
    tout, gout = compare(program, arrays, grads=name not in FORWARD_ONLY)
    assert gout.layout == {torch.sparse_coo: gg.sparse_coo, torch.strided: gg.strided}[
        tout.layout]
    assert (gout.grad_fn is None) == (tout.grad_fn is None)
    if tout.grad_fn is not None:
        assert type(gout.grad_fn).__name__ == type(tout.grad_fn).__name__
    if tout.layout == torch.sparse_coo and name not in PATTERN_DIFFERS:
        assert gout.is_coalesced() == tout.is_coalesced()
        assert gout._nnz() == tout._nnz()
        assert repr(gout) == repr(tout)


def _pair(idx=IDX, vals=VALS, size=(4, 4), **kw):
    return (torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), size, **kw),
            gg.sparse_coo_tensor(gg.tensor(idx), gg.tensor(vals), size, **kw))


@pytest.mark.parametrize("kw", [{}, {"requires_grad": True}, {"dtype": torch.float32},
                                {"is_coalesced": True}])
def test_metadata_and_repr(kw):
    gkw = {k: (gg.float32 if v is torch.float32 else v) for k, v in kw.items()}
    t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VALS), (4, 4), **kw)
    g = gg.sparse_coo_tensor(gg.tensor(IDX), gg.tensor(VALS), (4, 4), **gkw)
    assert repr(g) == repr(t)
    assert str(g) == str(t)
    for attr in ("is_sparse", "requires_grad", "is_leaf", "ndim"):
        assert getattr(g, attr) == getattr(t, attr), attr
    for meth in ("sparse_dim", "dense_dim", "_nnz", "is_coalesced", "dim", "numel"):
        assert getattr(g, meth)() == getattr(t, meth)(), meth
    assert tuple(g.shape) == tuple(t.shape) and len(g) == len(t)
    assert str(g.layout) == str(t.layout) == "torch.sparse_coo"
    assert str(g.dtype) == str(t.dtype)
    np.testing.assert_array_equal(g._indices().numpy(), t._indices().numpy())
    np.testing.assert_array_equal(g._values().numpy(), t._values().numpy())


def test_inferred_size_int_values_and_lists():
    t = torch.sparse_coo_tensor([[0, 2], [1, 0]], [1, 2])
    g = gg.sparse_coo_tensor([[0, 2], [1, 0]], [1, 2])
    assert repr(g) == repr(t)
    assert tuple(g.shape) == (3, 2)


def test_dense_dims_repr_and_to_sparse():
    x = np.array([[[0., 1.], [0., 0.]], [[2., 0.], [3., 4.]]])
    for sd in (None, 1, 2):
        t = torch.tensor(x).to_sparse() if sd is None else torch.tensor(x).to_sparse(sd)
        g = gg.tensor(x).to_sparse() if sd is None else gg.tensor(x).to_sparse(sd)
        assert repr(g) == repr(t)
        np.testing.assert_array_equal(g.to_dense().numpy(), x)


def test_uncoalesced_indices_and_values_refuse_as_torch():
    t, g = _pair(UNC)
    for name in ("indices", "values"):
        with pytest.raises(RuntimeError) as te:
            getattr(t, name)()
        with pytest.raises(RuntimeError) as ge:
            getattr(g, name)()
        assert str(ge.value) == str(te.value)
    assert repr(g.coalesce()) == repr(t.coalesce())
    np.testing.assert_array_equal(g.coalesce().indices().numpy(), t.coalesce().indices().numpy())


def test_leaf_sparse_grad_has_the_input_pattern():
    for idx in (IDX, UNC):
        t, g = _pair(idx, requires_grad=True)
        xt, xg = torch.tensor(X), gg.tensor(X)
        torch.sparse.mm(t, xt).pow(2).sum().backward()
        gg.sparse.mm(g, xg).pow(2).sum().backward()
        assert g.grad.is_sparse
        np.testing.assert_allclose(g.grad.to_dense().numpy(), t.grad.to_dense().numpy(),
                                   rtol=1e-6)
        np.testing.assert_array_equal(g.grad._indices().numpy(), t.grad._indices().numpy())
        t.grad, g.grad = None, None
        t.to_dense().sum().backward()
        g.to_dense().sum().backward()
        np.testing.assert_allclose(g.grad.to_dense().numpy(), t.grad.to_dense().numpy())


def test_dense_operand_gradient_only():
    """The common GCN case: a constant adjacency, gradients to the features only."""
    t, g = _pair()
    xt = torch.tensor(X, requires_grad=True)
    xg = gg.tensor(X, requires_grad=True)
    torch.sparse.mm(t, xt).tanh().sum().backward()
    gg.sparse.mm(g, xg).tanh().sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


def test_double_backward_through_spmm():
    for m in (torch, gg):
        v = m.tensor(VALS, requires_grad=True)
        x = m.tensor(X, requires_grad=True)
        y = m.sparse.mm(coo(m, v), x).pow(2).sum()
        gx, gv = m.autograd.grad(y, (x, v), create_graph=True)
        # torch's gradient w.r.t. the values has no grad_fn; graphgrad's is checked by
        # gradgradcheck below
        gx.sum().backward()
        if m is torch:
            ref = (v.grad.numpy().copy(), x.grad.numpy().copy())
        else:
            np.testing.assert_allclose(v.grad.numpy(), ref[0], rtol=1e-6)
            np.testing.assert_allclose(x.grad.numpy(), ref[1], rtol=1e-6)


W = RNG.standard_normal((4, 4))


@pytest.mark.parametrize("name", ["mm", "softmax", "log_softmax", "softmax_neg", "sum", "add",
                                  "relu", "coalesce", "sparse_sparse", "dense_sparse",
                                  "mul_broadcast", "mul_sparse", "index_select", "tensor_sum",
                                  "spdiags", "select"])
def test_gradcheck_float64(name):
    w = gg.tensor(W)

    def build(v):
        return gg.sparse_coo_tensor(gg.tensor(UNC), v, (4, 4))

    fns = {
        "mm": lambda v, x: gg.sparse.mm(build(v), x),
        "softmax": lambda v, x: gg.sparse.softmax(build(v), 1).to_dense() * w,
        "log_softmax": lambda v, x: gg.sparse.log_softmax(build(v), 0).to_dense() * w,
        "softmax_neg": lambda v, x: gg.sparse.softmax(build(v), -1).to_dense() * w,
        "sum": lambda v, x: gg.sparse.sum(build(v) * 3, 0).to_dense(),
        "add": lambda v, x: (build(v) + build(v * v)).to_dense() @ x,
        "relu": lambda v, x: (build(v).relu() * (x @ x.t())).to_dense(),
        "coalesce": lambda v, x: build(v).coalesce().values() ** 2,
        "sparse_sparse": lambda v, x: gg.sparse.mm(build(v), build(v).t()).to_dense() * w,
        "dense_sparse": lambda v, x: x.t() @ build(v),
        "mul_broadcast": lambda v, x: (build(v) * x[:, :1]).to_dense() * w,
        "mul_sparse": lambda v, x: (build(v) * build(v.exp())).to_dense() * w,
        "index_select": lambda v, x: build(v).index_select(1, gg.tensor([2, 2, 0])).to_dense(),
        "tensor_sum": lambda v, x: build(v * v).sum(1).to_dense(),
        "select": lambda v, x: (build(v)[2] * x[:, 0]).to_dense() + build(v).select(1, 1)
        .to_dense(),
        "spdiags": lambda v, x: gg.sparse.spdiags(x.t(), gg.tensor([0, -1, 2]), (4, 4))
        .to_dense() * w,
    }
    v = gg.tensor(VALS, requires_grad=True)
    x = gg.tensor(X, requires_grad=True)
    assert gg.autograd.gradcheck(fns[name], (v, x))
    assert gg.autograd.gradgradcheck(fns[name], (v, x))


def test_central_difference_of_to_sparse_and_softmax():
    """Independent of both libraries' autograd: finite differences of the dense input."""
    base = RNG.standard_normal((3, 3))
    mask = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], dtype=float)

    def value(a):
        s = gg.tensor(a * mask).to_sparse()
        return float(gg.sparse.log_softmax(s, 0).to_dense().mul(gg.tensor(base)).sum())

    x = gg.tensor(base + 1, requires_grad=True)
    s = (x * gg.tensor(mask)).to_sparse()
    gg.sparse.log_softmax(s, 0).to_dense().mul(gg.tensor(base)).sum().backward()
    num = np.zeros_like(base)
    for i in range(3):
        for j in range(3):
            e = np.zeros_like(base)
            e[i, j] = 1e-6
            num[i, j] = (value(base + 1 + e) - value(base + 1 - e)) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-7)


def test_reused_pattern_and_read_only_indices():
    """The sort orders cached on a pattern serve every later product with it, both ways."""
    s = gg.sparse_coo_tensor(gg.tensor(UNC), gg.tensor(VALS), (4, 4))
    d = s.to_dense().numpy()
    for _ in range(2):
        x = gg.tensor(X, requires_grad=True)
        (gg.sparse.mm(s, x).sum() + (x.t() @ s).pow(2).sum()).backward()
        np.testing.assert_allclose(gg.sparse.mm(s, x).detach().numpy(), d @ X, rtol=1e-12)
        want = d.sum(0)[:, None] + 2 * d @ (X.T @ d).T
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10)
    with pytest.raises(RuntimeError):
        s._indices()[0, 0] = 3
    np.testing.assert_array_equal(s._indices().numpy(), UNC)



def test_summarized_repr_of_a_large_tensor():
    rng = np.random.default_rng(0)
    idx = np.unique(np.stack([rng.integers(0, 100, 1500), rng.integers(0, 100, 1500)]), axis=1)
    v = rng.standard_normal(idx.shape[1]).astype(np.float32)
    t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(v), (100, 100),
                                requires_grad=True)
    g = gg.sparse_coo_tensor(gg.tensor(idx), gg.tensor(v), (100, 100), requires_grad=True)
    assert repr(g) == repr(t)
    assert repr(g.detach().to_sparse_csr()) == repr(t.detach().to_sparse_csr())
