"""CSR basics against torch 2.13, and the refusals: any op without a sparse implementation
raises NotImplementedError instead of computing on a dense view."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _sparse_harness import compare

import graphgrad as gg

DENSE = np.array([[0., 1., 2.], [3., 0., 0.], [0., 0., 4.]])
W = np.random.default_rng(3).standard_normal((3, 2))


def csr(m, v):
    return m.sparse_csr_tensor(m.tensor([0, 2, 3, 4]), m.tensor([1, 2, 0, 2]), v, (3, 3))


CSR_CASES = {
    "to_sparse_csr_mm": lambda m, x, w: m.mm((x * (x != 0)).to_sparse_csr(), w),
    "csr_at": lambda m, x, w: (x * (x != 0)).to_sparse_csr() @ w,
    "csr_sparse_mm": lambda m, x, w: m.sparse.mm((x * (x != 0)).to_sparse_csr(), w),
    "csr_to_dense": lambda m, x, w: (x * (x != 0)).to_sparse_csr().to_dense() * 2,
    "csr_tensor_mm": lambda m, x, w: m.mm(csr(m, x[x != 0]), w),
    "csr_scalar": lambda m, x, w: (csr(m, x[x != 0]) * 3).to_dense(),
    "csr_to_coo": lambda m, x, w: csr(m, x[x != 0]).to_sparse(),
}


@pytest.mark.parametrize("name", sorted(CSR_CASES))
def test_csr_against_torch(name):
    compare(CSR_CASES[name], (DENSE, W))


def test_csr_repr_and_indices():
    t = torch.tensor(DENSE, requires_grad=True).to_sparse_csr()
    g = gg.tensor(DENSE, requires_grad=True).to_sparse_csr()
    assert repr(g) == repr(t)
    assert g.layout is gg.sparse_csr and g.is_sparse_csr and not g.is_sparse
    for name in ("crow_indices", "col_indices"):
        np.testing.assert_array_equal(getattr(g, name)().numpy(), getattr(t, name)().numpy())
    np.testing.assert_array_equal(g.values().detach().numpy(), t.values().detach().numpy())
    assert (g._nnz(), g.sparse_dim(), g.dense_dim()) == (t._nnz(), t.sparse_dim(),
                                                        t.dense_dim())
    tc = torch.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1., 2., 3.])
    gc = gg.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1., 2., 3.])
    assert repr(gc) == repr(tc)
    assert repr(gg.zeros(2, 2).to_sparse(layout=gg.sparse_csr)) == repr(
        torch.zeros(2, 2).to_sparse(layout=torch.sparse_csr))


def _both(fn):
    """The exception types torch and graphgrad raise for ``fn(module)``."""
    kinds = []
    for m in (torch, gg):
        try:
            fn(m)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            kinds.append(type(e))
        else:
            kinds.append(None)
    return kinds


def _s(m):
    return m.sparse_coo_tensor(m.tensor([[0, 1], [1, 0]]), m.tensor([1., 2.]), (2, 2))


REFUSED = {  # ops torch refuses on sparse tensors too (NotImplementedError or RuntimeError)
    "exp": lambda m: _s(m).exp(),
    "view": lambda m: _s(m).view(4),
    "torch_exp": lambda m: m.exp(_s(m)),
    "sparse_plus_dense": lambda m: _s(m) + m.ones(2, 2),
    "numpy": lambda m: _s(m).numpy(),
    "item": lambda m: _s(m).item(),
    "bool": lambda m: bool(_s(m)),
    "values_uncoalesced": lambda m: _s(m).values(),
    "dense_indices": lambda m: m.ones(2).indices(),
    "csr_indices": lambda m: m.ones(2, 2).to_sparse_csr().indices(),
    "csr_coalesce": lambda m: m.ones(2, 2).to_sparse_csr().coalesce(),
    "nnz_mismatch": lambda m: m.sparse_coo_tensor(m.tensor([[0, 1]]), m.tensor([1.]), (2,)),
    "size_rank": lambda m: m.sparse_coo_tensor(m.tensor([[0, 1]]), m.tensor([1., 2.]),
                                               (2, 2)),
    "mm_shapes": lambda m: m.sparse.mm(_s(m), m.ones(3, 2)),
    "mm_dtypes": lambda m: m.sparse.mm(_s(m), m.ones(2, 2, dtype=m.float64)),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_like_torch(name):
    t, g = _both(REFUSED[name])
    assert t is not None and g is not None
    assert g is t or (issubclass(g, NotImplementedError) and t is NotImplementedError) or (
        issubclass(g, (RuntimeError, NotImplementedError))
        and issubclass(t, (RuntimeError, NotImplementedError))), (t, g)


def test_same_error_messages():
    for fn in (REFUSED["sparse_plus_dense"], REFUSED["values_uncoalesced"],
               REFUSED["dense_indices"], REFUSED["nnz_mismatch"], REFUSED["size_rank"],
               REFUSED["mm_dtypes"], REFUSED["numpy"]):
        msgs = []
        for m in (torch, gg):
            with pytest.raises(Exception) as e:
                fn(m)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("fn", [
    lambda s: s.exp(), lambda s: s.reshape(4), lambda s: s[0, 1], lambda s: s[:1],
    lambda s: s.sum(0, keepdim=True),
    lambda s: s + 1, lambda s: s.mean(), lambda s: gg.cat([s, s]), lambda s: s / s,
    lambda s: s.tolist(), lambda s: s.new_zeros(2), lambda s: s.contiguous().add_(1),
    lambda s: s.backward(), lambda s: s.t().to_sparse_csr().t(), lambda s: s.unsqueeze(0),
    lambda s: gg.where(s > 0, s, s), lambda s: s.to_sparse_csr().sum(),
])
def test_refuses_instead_of_a_dense_view(fn):
    s = _s(gg)
    with pytest.raises(NotImplementedError, match="sparse"):
        fn(s)


def test_refusal_names_the_op_and_the_layout():
    with pytest.raises(NotImplementedError, match=r"'exp'.*sparse tensors.*sparse_coo.*"
                                                  r"size=\(2, 2\)"):
        gg.exp(_s(gg))


def test_indices_are_checked():
    with pytest.raises(RuntimeError, match="found negative index"):
        gg.sparse_coo_tensor([[0, -1]], [1., 2.], (3,))
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        gg.sparse_coo_tensor([[0, 3]], [1., 2.], (3,))
    with pytest.raises(RuntimeError, match="not sorted and unique"):
        gg.sparse_coo_tensor([[1, 0]], [1., 2.], (3,), is_coalesced=True)


def test_dense_tensor_answers_sparse_queries():
    for m in (torch, gg):
        x = m.ones(2, 3)
        assert not x.is_sparse and not x.is_sparse_csr and str(x.layout) == "torch.strided"
        assert (x.sparse_dim(), x.dense_dim()) == (0, 2)
        assert x.to_dense() is x


def test_to_dtype_detach_clone_and_leaf_grad_reset():
    t, g = (_s(m).double().requires_grad_() for m in (torch, gg))
    assert repr(g) == repr(t)
    assert repr(g.detach()) == repr(t.detach()) and repr(g.clone()) == repr(t.clone())
    for m, s in ((torch, t), (gg, g)):
        m.sparse.mm(s, m.ones(2, 1, dtype=m.float64)).sum().backward()
    assert repr(g.grad) == repr(t.grad)
    g.grad = None
    assert g.grad is None


def test_linear_with_a_sparse_input_is_the_sparse_product():
    for m in (torch, gg):
        out = m.nn.functional.linear(_s(m), m.tensor(W.astype(np.float32)))
        if m is torch:
            want = out.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-6)


def test_compile_refuses_sparse_visibly():
    def f(x):
        s = gg.sparse_coo_tensor(gg.tensor([[0, 1], [1, 0]]), x, (2, 2))
        return gg.sparse.mm(s, gg.ones(2, 2)).sum()

    x = gg.tensor([1., 2.])
    eager = f(x).item()
    compiled = gg.compile(f)
    with pytest.warns(UserWarning, match="graph break.*sparse tensors"):
        assert compiled(x).item() == eager
    assert compiled(gg.tensor([3., 4.])).item() == f(gg.tensor([3., 4.])).item()


def test_deepcopy_type_rsub_and_autograd_grad():
    import copy

    for m in (torch, gg):
        s = m.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], (2, 2), requires_grad=True)
        got = (repr(copy.deepcopy(s)), s.type(), (m.ones(2, 2) - s).detach().numpy())
        if m is torch:
            want = got
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])
    s = _s(gg).requires_grad_()
    with pytest.raises(NotImplementedError, match="sparse"):
        gg.autograd.grad(gg.sparse.mm(s, gg.ones(2, 1)).sum(), s)


def test_sparse_buffer_follows_module_casts():
    class M(gg.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("adj", _s(gg))

    m = M().double()
    assert m.adj.is_sparse and m.adj.dtype == gg.float64 and m.adj.data.is_sparse


@pytest.mark.parametrize("call", [
    lambda: gg.smm(_s(gg), gg.ones(2, 2)), lambda: gg.hspmm(_s(gg), gg.ones(2, 2)),
    lambda: gg.sspaddmm(_s(gg), _s(gg), gg.ones(2, 2)),
    lambda: gg.sparse_csc_tensor([0, 1], [0], [1.]), lambda: gg.ones(2, 2).to_sparse_csc(),
    lambda: gg.sparse.to_sparse_semi_structured(gg.ones(2, 2)),
    lambda: gg.sparse.semi_structured.SparseSemiStructuredTensorCUTLASS(),
    lambda: _s(gg).sparse_resize_((3, 3), 2, 0),
    lambda: gg.sparse_compressed_tensor([0, 1], [0], [1.], layout=gg.sparse_csc),
])
def test_missing_sparse_names_raise_naming_what_is_missing(call):
    with pytest.raises(NotImplementedError, match="not implemented|not available"):
        call()


def test_compressed_tensor_and_copies():
    t = torch.sparse_compressed_tensor(torch.tensor([0, 1, 2]), torch.tensor([1, 0]),
                                       torch.tensor([1., 2.]), (2, 2), layout=torch.sparse_csr)
    g = gg.sparse_compressed_tensor(gg.tensor([0, 1, 2]), gg.tensor([1, 0]),
                                    gg.tensor([1., 2.]), (2, 2), layout=gg.sparse_csr)
    assert repr(g) == repr(t)
    np.testing.assert_array_equal(gg.crow_indices_copy(g).numpy(), [0, 1, 2])
    for m in (torch, gg):
        with pytest.raises(RuntimeError, match="ccol_indices expected sparse"):
            m.ones(2, 2).ccol_indices()

