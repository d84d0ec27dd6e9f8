"""The losses of nn/_functional/loss_extra.py against torch: CTC (its decomposition by
enumerating alignments, its true gradient through log_softmax by finite differences, torch's
refusal of a double backward, a larger batch), multilabel margin, triplet margin with a distance
function, and the ``torch.*`` spellings of losses with integer reductions. Op-level CTC samples
are in tests/opinfo/ctc.py; the modules are in moduleinfo_loss_extra.py.
"""

import itertools

import numpy as np
import pytest
import torch

import graphgrad as gg


def _close(t, g, tol=1e-6):
    assert str(t.dtype) == str(g.dtype)
    assert tuple(t.shape) == tuple(g.shape)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _log_softmax(x):
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


# -- CTC ------------------------------------------------------------------------------------------
def _brute_force_nll(lp, target, blank):
    """-log sum over every alignment (a label or blank per step) that collapses to ``target``."""
    T, C = lp.shape
    total = -np.inf
    for path in itertools.product(range(C), repeat=T):
        collapsed = [c for k, c in enumerate(path) if c != blank and (k == 0 or c != path[k - 1])]
        if collapsed == list(target):
            total = np.logaddexp(total, sum(lp[t, c] for t, c in enumerate(path)))
    return -total


@pytest.mark.parametrize("blank", [0, 2])
def test_ctc_decomposition(blank):
    rng = np.random.default_rng(0)
    T, C = 5, 3
    lp = _log_softmax(rng.standard_normal((T, 4, C)))
    labels = [c for c in range(C) if c != blank]
    targets = [[labels[0]], [labels[1], labels[1]], [labels[0], labels[1], labels[0]], []]
    lengths = [5, 4, 5, 3]
    padded = np.zeros((4, 3), dtype=np.int64) + labels[0]
    for b, t in enumerate(targets):
        padded[b, :len(t)] = t
    got = gg.nn.functional.ctc_loss(gg.tensor(lp), gg.tensor(padded), gg.tensor(lengths),
                                    gg.tensor([len(t) for t in targets]), blank=blank,
                                    reduction="none")
    want = [_brute_force_nll(lp[:lengths[b], b], targets[b], blank) for b in range(4)]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_ctc_true_gradient_through_log_softmax():
    rng = np.random.default_rng(1)
    x = gg.tensor(rng.standard_normal((5, 2, 4)), requires_grad=True)
    targets, il, tl = gg.tensor([[1, 3], [2, 2]]), gg.tensor([5, 4]), gg.tensor([2, 2])

    def fn(x):
        return gg.nn.functional.ctc_loss(x.log_softmax(2), targets, il, tl, reduction="none")

    assert gg.autograd.gradcheck(fn, (x,), eps=1e-6, atol=1e-6)


def test_ctc_double_backward_raises_as_torch():
    for m in (torch, gg):
        x = m.tensor(_log_softmax(np.ones((4, 1, 3))), requires_grad=True)
        loss = m.nn.functional.ctc_loss(x, m.tensor([[1]]), m.tensor([4]), m.tensor([1]),
                                        reduction="none")
        assert type(loss.grad_fn).__name__ == "CtcLossBackward0"
        (g,) = m.autograd.grad(loss, x, create_graph=True)
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not "
                                               "implemented"):
            g.sum().backward()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctc_large_batch(dtype):
    rng = np.random.default_rng(2)
    T, N, C, S = 30, 8, 10, 12
    x = rng.standard_normal((T, N, C)).astype(dtype)
    il = rng.integers(15, T + 1, N)
    tl = rng.integers(1, S + 1, N)
    targets = rng.integers(1, C, (N, S))
    res = []
    for m in (torch, gg):
        xt = m.tensor(x, requires_grad=True)
        loss = m.nn.functional.ctc_loss(xt.log_softmax(2), m.tensor(targets), m.tensor(il),
                                        m.tensor(tl), zero_infinity=True)
        loss.backward()
        res.append((loss, xt.grad))
    tol = 1e-4 if dtype == "float32" else 1e-9
    for t, g in zip(*res):
        _close(t, g, tol)


# -- multilabel margin ----------------------------------------------------------------------------
ML_CASES = [
    (np.array([[0.1, 0.2, 0.4, 0.8], [0.3, -0.5, 0.9, 0.0]]), np.array([[3, 0, -1, 1],
                                                                        [1, 2, 3, 0]])),
    (np.array([0.1, 0.2, 0.4, 0.8]), np.array([3, 0, -1, 1])),
    (np.array([[1.5, -0.2, 0.33], [0.1, 0.7, 2.0]]), np.array([[-1, 0, 1], [2, 1, 0]])),
]


@pytest.mark.parametrize("case", range(len(ML_CASES)))
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss(case, reduction):
    x, t = ML_CASES[case]
    res = []
    for m in (torch, gg):
        xt = m.tensor(x, requires_grad=True)
        loss = m.nn.functional.multilabel_margin_loss(xt, m.tensor(t), reduction=reduction)
        loss.sum().backward()
        res.append((loss, xt.grad))
    for t_, g in zip(*res):
        _close(t_, g)


def test_multilabel_margin_loss_legacy_and_errors():
    x, t = ML_CASES[0]
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        want = torch.nn.functional.multilabel_margin_loss(torch.tensor(x), torch.tensor(t),
                                                          size_average=False)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        got = gg.nn.functional.multilabel_margin_loss(gg.tensor(x), gg.tensor(t),
                                                      size_average=False)
    _close(want, got)
    bad = [(np.zeros((2, 4)), np.array([[3, 0, 5, 1], [1, 2, 3, 0]])),
           (np.zeros((2, 4)), np.zeros((2, 3), np.int64)),
           (np.zeros((2, 3, 4)), np.zeros((2, 3, 4), np.int64)),
           (np.zeros(4), np.zeros(4, np.int32))]
    for x, t in bad:
        raised = []
        for m in (torch, gg):
            with pytest.raises(RuntimeError) as info:
                m.nn.functional.multilabel_margin_loss(m.tensor(x), m.tensor(t))
            raised.append(str(info.value))
        assert raised[0] == raised[1]


# -- triplet margin with distance -----------------------------------------------------------------
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("distance", ["default", "l1"])
def test_triplet_margin_with_distance_loss(swap, distance):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((5, 3)) for _ in range(3)]
    res = []
    for m in (torch, gg):
        ts = [m.tensor(a, requires_grad=True) for a in arrays]
        fn = None if distance == "default" else (lambda a, b: (a - b).abs().sum(-1))
        loss = m.nn.functional.triplet_margin_with_distance_loss(
            *ts, distance_function=fn, margin=1.5, swap=swap, reduction="none")
        loss.sum().backward()
        res.append([loss] + [t.grad for t in ts])
    for t, g in zip(*res):
        _close(t, g)


def test_triplet_margin_with_distance_loss_errors():
    cases = [({"margin": 0.0}, (3, 3, 3), ValueError), ({"reduction": "x"}, (3, 3, 3), ValueError),
             ({}, (3, 3, 2), RuntimeError)]
    for kw, dims, kind in cases:
        raised = []
        for m in (torch, gg):
            xs = [m.zeros((2,) * d if d != 2 else (2, 2)) for d in dims]
            with pytest.raises(kind) as info:
                m.nn.functional.triplet_margin_with_distance_loss(*xs, **kw)
            raised.append(str(info.value))
        assert raised[0] == raised[1]
    for m in (torch, gg):
        with pytest.raises(ValueError, match="TripletMarginWithDistanceLoss: expected margin"):
            m.nn.TripletMarginWithDistanceLoss(margin=-1.0)


# -- torch.* spellings ----------------------------------------------------------------------------
def _calls():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    y = np.where(rng.random(4) < 0.5, -1.0, 1.0)
    sign = np.where(rng.random((4, 3)) < 0.5, -1.0, 1.0)
    probs = rng.uniform(0.1, 0.9, (4, 3))
    lp = _log_softmax(rng.standard_normal((5, 2, 4)))
    for red in (0, 1, 2):
        yield "cosine_embedding_loss", (a, b, y), {"margin": 0.1, "reduction": red}
        yield "hinge_embedding_loss", (a, sign), {"margin": 0.5, "reduction": red}
        yield "kl_div", (a, b), {"reduction": red, "log_target": True}
        yield "kl_div", (a, probs), {"reduction": red}
        yield "margin_ranking_loss", (a[:, 0], b[:, 0], y), {"margin": 0.2, "reduction": red}
        yield "poisson_nll_loss", (a, probs * 3, True, True, 1e-8, red), {}
        yield "poisson_nll_loss", (probs, probs * 3, False, False, 1e-8, red), {}
        yield "triplet_margin_loss", (a, b, a[::-1].copy(), 1.0, 2, 1e-6, True, red), {}
        yield "binary_cross_entropy_with_logits", (a, probs), {"reduction": red,
                                                              "pos_weight": None}
        yield "ctc_loss", (lp, np.array([[1, 2], [3, 3]]), (5, 4), (2, 2), 0, red, False), {}
    yield "pairwise_distance", (a, b, 1.0, 1e-6, True), {}
    yield "cosine_similarity", (a, b), {"dim": 0}


@pytest.mark.parametrize("k", range(len(list(_calls()))))
def test_torch_functions(k):
    name, args, kwargs = list(_calls())[k]
    res = []
    for m in (torch, gg):
        leaves = [m.tensor(x, requires_grad=x.dtype.kind == "f") if isinstance(x, np.ndarray)
                  else x for x in args]
        out = getattr(m, name)(*leaves, **kwargs)
        out.sum().backward()
        res.append([out] + [x.grad for x in leaves if isinstance(x, m.Tensor) and
                            x.requires_grad])
    for t, g in zip(*res):
        assert (t is None) == (g is None)
        if t is not None:
            _close(t, g, 1e-7)


def test_torch_functions_reject_string_reduction():
    for m in (torch, gg):
        with pytest.raises(TypeError, match=r"argument 'reduction' \(position 3\) must be int"):
            m.kl_div(m.zeros(2), m.zeros(2), "mean")
