"""torch's remaining top-level names against torch: the ATen-signature functional aliases,
detach/fill/range/frexp/gradient/histogramdd, the deprecated norms, low-rank SVD/PCA,
torch.multiprocessing, the extra samplers and the Tensor memory shims."""

import warnings

import numpy as np
import pytest
import torch
from tests.autograd._helpers import data, raises_like, same

import graphgrad as gg


def _t(m, shape, seed=0, rg=False, dtype=None):
    return m.tensor(data(shape, seed), requires_grad=rg, dtype=dtype)


def _grads(m, out, *leaves):
    """``out`` and the gradients of ``sum(out * w)`` with respect to ``leaves``."""
    outs = out if isinstance(out, tuple) else (out,)
    total = sum((o * m.tensor(data(tuple(o.shape), 50 + i))).sum() for i, o in enumerate(outs))
    total.backward()
    return out, [x.grad for x in leaves]


# -- functional aliases with ATen's positional signatures ----------------------------------
def test_batch_norm_alias():
    def prog(m):
        x, w, b = _t(m, (3, 4, 2), rg=True), _t(m, (4,), 1, True), _t(m, (4,), 2, True)
        rm, rv = m.zeros(4), m.ones(4)
        out = m.batch_norm(x, w, b, rm, rv, True, 0.3, 1e-5, False)
        return _grads(m, out, x, w, b), rm, rv, m.batch_norm(x, None, None, rm, rv, False,
                                                              0.1, 1e-3, True)
    same(prog)


def test_instance_layer_group_rms_norm_aliases():
    def prog(m):
        x, w, b = _t(m, (2, 4, 3), rg=True), _t(m, (4,), 1, True), _t(m, (4,), 2, True)
        a = m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False)
        c = m.group_norm(x, 2, w, b, 1e-5, True)
        lw = _t(m, (4, 3), 3, True)
        d = m.layer_norm(x, [4, 3], lw, None, 1e-5)
        e = m.layer_norm(x, (3,))
        f = m.rms_norm(x, [3], None, 1e-6)
        g = m.group_norm(x, 4)
        return _grads(m, (a, c, d, e, f, g), x, w, b, lw)
    same(prog)


def test_embedding_and_bilinear_aliases():
    def prog(m):
        w = _t(m, (6, 3), rg=True)
        idx = m.tensor([[0, 2], [5, 2]])
        a = m.embedding(w, idx)
        b = m.embedding(w, idx, 2)
        x1, x2 = _t(m, (4, 2), 1, True), _t(m, (4, 3), 2, True)
        bw, bb = _t(m, (5, 2, 3), 3, True), _t(m, (5,), 4, True)
        c = m.bilinear(x1, x2, bw, bb)
        return _grads(m, (a, b, c), w, x1, x2, bw, bb)
    same(prog)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("extra", ["", "psw", "last", "pad"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_bag_alias(mode, extra, dtype):
    def prog(m):
        w = _t(m, (10, 3), rg=True, dtype=getattr(m, dtype))
        i = m.tensor([1, 2, 4, 5, 4, 3, 2, 9])
        o = m.tensor([0, 4, 6, 8] if extra == "last" else [0, 4, 6])
        psw = _t(m, (8,), 3, dtype=w.dtype) if extra == "psw" and mode == 0 else None
        out = m.embedding_bag(w, i, o, False, mode, False, psw, extra == "last",
                              2 if extra == "pad" else None)
        with m.no_grad():
            forward_only = m.embedding_bag(w, i, o, False, mode, False, psw, extra == "last")
        return _grads(m, out[0], w), out[1:], forward_only[1:]
    same(prog)


def test_constant_pad_nd_and_convolution():
    def prog(m):
        x = _t(m, (1, 2, 5, 4), rg=True)
        p1 = m.constant_pad_nd(x, [1, 2, 0, 1], 3.5)
        p2 = m.constant_pad_nd(x, (1, 1))
        w, b = _t(m, (3, 2, 2, 3), 1, True), _t(m, (3,), 2, True)
        c = m.convolution(x, w, b, [1, 2], [1, 0], [1, 1], False, [0, 0], 1)
        wt = _t(m, (2, 3, 3, 2), 3, True)
        ct = m.convolution(x, wt, None, [2, 1], [0, 1], [1, 1], True, [1, 0], 1)
        x1 = _t(m, (2, 4, 7), 4, True)
        w1 = _t(m, (4, 2, 3), 5, True)
        c1 = m.convolution(x1, w1, None, [1], [1], [2], False, [0], 2)
        return _grads(m, (p1, p2, c, ct, c1), x, w, b, wt, x1, w1)
    same(prog)


def test_rnn_cells():
    def prog(m):
        x, h, c = _t(m, (3, 4), rg=True), _t(m, (3, 5), 1, True), _t(m, (3, 5), 2, True)
        outs = []
        for name, k in (("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1),
                        ("rnn_relu_cell", 1)):
            wi, wh = _t(m, (k * 5, 4), 3 + k, True), _t(m, (k * 5, 5), 4 + k, True)
            bi, bh = _t(m, (k * 5,), 5 + k), _t(m, (k * 5,), 6 + k)
            hx = (h, c) if name == "lstm_cell" else h
            outs.append(getattr(m, name)(x, hx, wi, wh, bi, bh))
            outs.append(getattr(m, name)(x, hx, wi, wh))
        flat = tuple(t for o in outs for t in (o if isinstance(o, tuple) else (o,)))
        return _grads(m, flat, x, h, c)
    same(prog)


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_dropout",
                                  "feature_alpha_dropout"])
def test_dropout_aliases(name):
    def prog(m):
        x = _t(m, (2, 3, 4))
        off = getattr(m, name)(x, 0.5, False)
        zero = getattr(m, name)(x, 0.0, True)
        inplace = _t(m, (2, 3, 4))
        same_obj = getattr(m, name + "_")(inplace, 0.4, False) is inplace
        return off, zero, same_obj
    same(prog)
    raises_like(lambda m: getattr(m, name)(_t(m, (3,)), 1.5, True), "between 0 and 1")


def test_dropout_masks():
    gg.manual_seed(0)
    x = gg.ones(200, 50)
    y = gg.dropout(x, 0.3, True).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.02
    f = gg.feature_dropout(gg.ones(40, 30, 5), 0.5, True).numpy()
    assert np.all(f.min(-1) == f.max(-1))  # whole channels
    z = gg.ones(50, 20)
    assert gg.dropout_(z, 0.5, True) is z and (z.numpy() == 0).any()
    raises_like(lambda m: m.feature_dropout(m.ones(3), 0.5, True), "at least 2 dimensions")
    a = gg.alpha_dropout(gg.randn(400, 100), 0.2, True).numpy()
    assert abs(a.mean()) < 0.05 and abs(a.std() - 1) < 0.05  # SELU's moments preserved


# -- small utilities ----------------------------------------------------------------------
def test_detach_fill_is_inference_get_device():
    def prog(m):
        x = _t(m, (2, 3), rg=True)
        d = m.detach(x)
        v = m.tensor(2.5, requires_grad=True)
        f = m.fill(x, v)
        f.sum().backward()
        return (d, d.requires_grad, m.fill(x, 3.0), m.fill(m.tensor([1, 2]), 2.7), v.grad,
                m.is_inference(x), m.get_device(x), m.fill(x, 1.0).requires_grad)
    same(prog)
    raises_like(lambda m: m.fill(m.ones(2), m.ones(2)), "0-dimension")
    raises_like(lambda m: m.detach(3), "must be Tensor")


def test_range_is_inclusive_and_warns():
    def prog(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = (m.range(1, 4), m.range(0, 1, 0.3), m.range(1.0, 2.5, 0.5),
                   m.range(0, 3, dtype=m.int64), m.range(5, 1, -2))
        return out, [x.category.__name__ for x in w]
    same(prog)
    raises_like(lambda m: m.range(0, 3, -1), "inconsistent with step sign")
    raises_like(lambda m: m.range(5), "end")


def test_anomaly_switches():
    try:
        for m in (torch, gg):
            assert m.is_anomaly_enabled() is False
            m.set_anomaly_enabled(True, False)
            assert m.is_anomaly_enabled() is True
            assert m.is_anomaly_check_nan_enabled() is False
            m.set_anomaly_enabled(False)
            assert m.is_anomaly_check_nan_enabled() is True
    finally:
        torch.set_anomaly_enabled(False)
        gg.set_anomaly_enabled(False)
    raises_like(lambda m: m.set_anomaly_enabled(1), "must be bool")


def test_frexp():
    def prog(m):
        x = m.tensor([8.0, -3.0, 0.5, 0.0, 1e-30, 7.25], requires_grad=True)
        r = m.frexp(x)
        r.mantissa.sum().backward()
        y = m.tensor([1.5, 2.0], dtype=m.float64).frexp()
        return r.mantissa, r.exponent, x.grad, tuple(y), type(r).__name__, repr(y)
    same(prog)
    raises_like(lambda m: m.frexp(m.tensor([1, 2])), "floating-point")


@pytest.mark.parametrize("kwargs", [{}, {"spacing": 2.0}, {"spacing": [0.5, 3]}, {"dim": 1},
                                    {"dim": -1, "spacing": [2.0]}, {"dim": (0, 1)},
                                    {"edge_order": 2}, {"edge_order": 2, "spacing": 0.5}])
def test_gradient(kwargs):
    def prog(m):
        x = _t(m, (4, 5), rg=True, dtype=m.float64)
        out = m.gradient(x, **kwargs)
        return _grads(m, out, x)
    same(prog)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates(edge_order):
    def prog(m):
        x = _t(m, (5, 3), rg=True, dtype=m.float64)
        c0 = m.tensor([0.0, 1.0, 3.0, 4.0, 7.0], dtype=m.float64)
        c1 = m.tensor([0.0, 0.5, 2.0], dtype=m.float64)
        out = m.gradient(x, spacing=(c0, c1), edge_order=edge_order)
        return _grads(m, out, x), m.gradient(m.tensor([1, 4, 9, 16]))
    same(prog)


def test_gradient_errors():
    raises_like(lambda m: m.gradient(m.ones(2, 4), edge_order=2), "at least edge_order+1")
    raises_like(lambda m: m.gradient(m.ones(4), edge_order=3), "edge_order=1 and")
    raises_like(lambda m: m.gradient(m.ones(4), spacing=[m.tensor(2.0)]), "one dimension")
    raises_like(lambda m: m.gradient(m.ones(4), spacing=[1.0, 2.0]), "since dim argument")
    raises_like(lambda m: m.gradient(m.ones(4, 3), spacing=[1.0, 2.0], dim=1), "same length")


def test_histogramdd():
    def prog(m):
        x = _t(m, (50, 2), 3)
        a = m.histogramdd(x, bins=[3, 4])
        b = m.histogramdd(x, 2, range=[-1.0, 1.0, -2.0, 2.0], density=True)
        w = _t(m, (50,), 4).abs()
        c = m.histogramdd(x, bins=[m.tensor([-1.0, 0.0, 2.0]), m.tensor([-3.0, 0.0, 0.5, 3.0])],
                          weight=w)
        d = m.histogramdd(_t(m, (4, 5, 3), 5), bins=2)
        e = m.histogramdd(x, bins=[m.tensor([-2.0, 0.0, 0.5, 3.0]), m.tensor([-1.0, 1.0])],
                          density=True, weight=w)
        f = m.histogramdd(m.zeros(0, 3), bins=3)
        d = (d, e, f)
        return ([tuple(r) for r in (a, b, c, *d)], type(a).__name__,
                [type(e).__name__ for e in a.bin_edges])
    same(prog)
    raises_like(lambda m: m.histogramdd(m.tensor([[1, 2]]), 2), "not implemented for 'Long'")


def test_deprecated_norms_and_matrix_rank():
    def prog(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x = _t(m, (2, 3, 3), rg=True)
            out = (m.frobenius_norm(x, (1, 2)), m.frobenius_norm(x, [0, 2], True),
                   m.nuclear_norm(x, (1, 2)), m.nuclear_norm(x[0], True), m.nuclear_norm(x[1]))
        return _grads(m, out, x), [x.category.__name__ for x in w]
    same(prog)
    raises_like(lambda m: m.matrix_rank(m.eye(3)), "deprecated since version 1.9")
    raises_like(lambda m: m.frobenius_norm(m.ones(2, 2)), "dim")


@pytest.mark.parametrize("shape,q", [((30, 12), 4), ((10, 25), 3), ((2, 15, 9), 3)])
def test_svd_lowrank_reconstructs_low_rank(shape, q):
    gg.manual_seed(0)
    rng = np.random.default_rng(0)
    *batch, m_, n_ = shape
    a = rng.standard_normal((*batch, m_, q)) @ rng.standard_normal((*batch, q, n_))
    for mod in (torch, gg):
        A = mod.tensor(a)
        U, S, V = mod.svd_lowrank(A, q=q)
        assert tuple(U.shape) == (*batch, m_, q) and tuple(V.shape) == (*batch, n_, q)
        rec = (U * S.unsqueeze(-2)) @ V.mT
        assert float((rec - A).abs().max()) < 1e-8
        np.testing.assert_allclose(S.numpy(), np.linalg.svd(a, compute_uv=False)[..., :q],
                                   rtol=1e-8)


def test_svd_lowrank_with_m_and_gradient():
    gg.manual_seed(1)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((20, 3)) @ rng.standard_normal((3, 8)) + 1.0
    A = gg.tensor(a, requires_grad=True)
    U, S, V = gg.svd_lowrank(A, q=3, M=gg.ones(1, 8, dtype=gg.float64))
    rec = (U * S) @ V.mT + 1.0
    assert float((rec - A).abs().max()) < 1e-8
    S.sum().backward()
    assert A.grad is not None and A.grad.shape == A.shape


def test_pca_lowrank_matches_torch_singular_values():
    gg.manual_seed(2)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((40, 4)) @ rng.standard_normal((4, 10)) + rng.standard_normal(10)
    Sg = gg.pca_lowrank(gg.tensor(a), q=4)[1]
    St = torch.pca_lowrank(torch.tensor(a), q=4)[1]
    np.testing.assert_allclose(Sg.numpy(), St.numpy(), rtol=1e-8)
    b = rng.standard_normal((40, 4)) @ rng.standard_normal((4, 10))
    Sg = gg.pca_lowrank(gg.tensor(b), q=4, center=False)[1]
    St = torch.pca_lowrank(torch.tensor(b), q=4, center=False)[1]
    np.testing.assert_allclose(Sg.numpy(), St.numpy(), rtol=1e-6)
    raises_like(lambda m: m.pca_lowrank(m.ones(3, 4), q=5), "must be non-negative")


# -- torch.multiprocessing ------------------------------------------------------------------
def _child(rank, q):
    q.put(rank * 10)


def test_multiprocessing_namespace():
    mp = gg.multiprocessing
    import torch.multiprocessing as tmp
    for name in ("Process", "Queue", "cpu_count", "get_start_method", "set_start_method",
                 "spawn", "get_context", "Pool", "set_sharing_strategy",
                 "get_sharing_strategy", "get_all_sharing_strategies", "Manager"):
        assert hasattr(tmp, name) and hasattr(mp, name), name
    assert mp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_descriptor")
    assert mp.get_sharing_strategy() == "file_descriptor"
    mp.set_sharing_strategy("file_system")
    assert mp.cpu_count() == tmp.cpu_count()
    ctx = mp.get_context("fork")
    q = ctx.SimpleQueue()
    mp.spawn(_child, args=(q,), nprocs=2, start_method="fork")
    assert sorted([q.get(), q.get()]) == [0, 10]


# -- samplers -------------------------------------------------------------------------------
def test_extra_samplers():
    gg.manual_seed(0)
    n = 40000
    c = gg.empty(n).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.1
    assert abs(np.median(np.abs(c - 1.0)) - 2.0) < 0.1  # the half-width is sigma
    g = gg.empty(n, dtype=gg.float64).geometric_(0.25).numpy()
    assert g.min() >= 1 and np.all(g == np.round(g)) and abs(g.mean() - 4.0) < 0.1
    ln = gg.empty(n).log_normal_(0.5, 0.3).numpy()
    assert abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.3) < 0.01
    p = gg.full((n,), 0.3)
    b = p.bernoulli().numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.01
    assert abs(gg.zeros(n).bernoulli(0.7).numpy().mean() - 0.7) < 0.01
    for m in (torch, gg):
        assert m.ones(3).geometric_(0.5).dtype == m.float32
        x = m.ones(3)
        assert x.cauchy_() is x and x.log_normal_() is x and x.geometric_(0.2) is x
    raises_like(lambda m: m.ones(3).geometric_(1.0), "expects p to be in (0, 1)")
    raises_like(lambda m: m.ones(3).log_normal_(1, 0), "expects std > 0.0")
    raises_like(lambda m: m.ones(3).cauchy_(1, 0), "expects sigma > 0.0")


# -- memory shims ---------------------------------------------------------------------------
def test_storage_aliasing():
    def prog(m):
        t = m.arange(6.0)
        v = t[2:].view(2, 2)
        u = m.arange(6.0)
        s = t.untyped_storage()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ts = t.storage()
            vs = v.storage()
        return (s == v.untyped_storage(), s == u.untyped_storage(), s is t.untyped_storage(),
                s.size(), s.nbytes(), s.element_size(), s.data_ptr() == t.data_ptr(),
                v.untyped_storage().data_ptr() == t.data_ptr(), ts.size(), len(ts),
                ts.element_size(), ts.dtype, ts.tolist(), vs.size(), str(s.device),
                ts.data_ptr() == t.data_ptr(), m.is_storage(s), m.is_storage(ts),
                m.is_storage(t))
    same(prog)


def test_pin_share_and_flags():
    def prog(m):
        t = m.ones(3)
        before = t.is_shared()
        r = t.share_memory_()
        return (t.is_pinned(), before, r is t, t.is_shared(), t[1:].is_shared(),
                m.ones(2).is_shared(), t.output_nr, (t * 2).output_nr, t.name)
    same(prog)
    raises_like(lambda m: m.ones(2).pin_memory(), "accelerator")


def test_resize():
    def prog(m):
        a = m.arange(6.0)
        b = a.resize_(2, 2)
        c = m.arange(6.0)
        v = c[:3]
        c.resize_(2)
        d = m.ones(2, 3).resize_((3, 2))
        e = m.arange(4.0).resize_as_(m.ones(2, 2))
        f = m.arange(3.0)
        f.resize_(3)
        return b is a, a, c, v, d.shape, e, f, m.arange(4.0).resize_(2, 5).reshape(-1)[:4]
    same(prog)
    raises_like(lambda m: m.ones(3, requires_grad=True).resize_(2), "require grad")
    raises_like(lambda m: m.ones(3, requires_grad=True).resize_as_(m.ones(2)), "require grad")
    raises_like(lambda m: m.ones(2).resize_(-1), "overflow")


def test_set_():
    def prog(m):
        y, z = m.ones(2), m.zeros(4)
        r = y.set_(z)
        z[0] = 5
        e = m.ones(2)
        e.set_()
        w = m.ones(2)
        w.set_(z.untyped_storage(), 1, (2,), (1,))
        s = m.ones(2)
        s.set_(z.untyped_storage())
        t2 = m.ones(1)
        t2.set_(m.arange(6.0).untyped_storage(), 0, (2, 2), (1, 2))
        return r is y, y, y.data_ptr() == z.data_ptr(), e, e.shape, w, s, t2
    same(prog)
    raises_like(lambda m: m.ones(3, requires_grad=True).set_(m.ones(2)), "leaf Variable")


def test_as_subclass():
    class TS(torch.Tensor):
        pass

    class GS(gg.Tensor):
        pass
    for m, cls in ((torch, TS), (gg, GS)):
        x = m.ones(2, requires_grad=True)
        s = x * 2
        w = s.as_subclass(cls)
        assert type(w) is cls and w.requires_grad and w.data_ptr() == s.data_ptr()
        (w * 3).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
    raises_like(lambda m: m.ones(2).as_subclass(int), "does not inherit from Tensor")
