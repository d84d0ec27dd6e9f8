"""The loss functions of nn.functional against torch: a table of (loss, kwargs, inputs) cases
compares the value, the input gradients (float64 and float32) and the second derivatives; then
errors (type and message), warnings, the fused BCE against its decomposition, and the loss
modules' constructor arguments. Module forward/repr/state_dict parity is in moduleinfo_loss.py.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch

import graphgrad as gg

TOL = {np.float64: (1e-7, 1e-9), np.float32: (2e-5, 1e-5)}
GRAD_TOL = {np.float64: (1e-7, 1e-9), np.float32: (1e-4, 1e-5)}


@dataclass
class Case:
    """``F.<fn>(*make(rng, dtype), **kwargs)``; the positional args listed in ``diff`` require
    grad. Arrays inside ``kwargs`` (class weights) become tensors without grad. ``gradgrad``:
    compare second derivatives (False where torch's double backward uses another formula)."""

    fn: str
    make: Callable
    kwargs: dict = field(default_factory=dict)
    diff: tuple = (0,)
    gradgrad: bool = True
    id: str = ""


# -- input makers ----------------------------------------------------------------------------
def reg(shape, tshape=None):
    return lambda r, d: [r.standard_normal(shape).astype(d),
                         r.standard_normal(tshape or shape).astype(d)]


def classes(shape, n_classes, tshape, ignore=(), ignore_value=-100):
    """Logits of ``shape`` and int64 targets of ``tshape``; the flat positions in ``ignore``
    hold ``ignore_value``."""
    def make(r, d):
        t = r.integers(0, n_classes, tshape).astype(np.int64)
        t.reshape(-1)[list(ignore)] = ignore_value
        return [r.standard_normal(shape).astype(d), t]
    return make


def soft_targets(shape, cdim=1):
    def make(r, d):
        p = np.exp(r.standard_normal(shape))
        return [r.standard_normal(shape).astype(d), (p / p.sum(cdim, keepdims=True)).astype(d)]
    return make


def probs(shape, binary=False):
    def make(r, d):
        t = (r.random(shape) < 0.5) * 1.0 if binary else r.uniform(0.02, 0.98, shape)
        return [r.uniform(0.02, 0.98, shape).astype(d), t.astype(d)]
    return make


def log_probs(shape, log_target=False):
    def make(r, d):
        x = r.standard_normal(shape)
        x = x - np.log(np.exp(x).sum(-1, keepdims=True))
        t = np.exp(r.standard_normal(shape))
        t = t / t.sum(-1, keepdims=True)
        return [x.astype(d), (np.log(t) if log_target else t).astype(d)]
    return make


def signs(*shapes, tshape):
    def make(r, d):
        t = np.where(r.random(tshape) < 0.5, -1.0, 1.0).astype(d)
        return [r.standard_normal(s).astype(d) for s in shapes] + [t]
    return make


W5 = np.array([0.5, 2.0, 1.0, 0.25, 1.5])
W3 = np.array([0.5, 2.0, 1.25])
BIG_LOGITS = np.array([[-50.0, 30.0, 0.5], [45.0, -0.3, -60.0]])
EDGE_PROBS = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.3]])
EDGE_TARGETS = np.array([[1.0, 0.0, 0.2], [1.0, 0.0, 1.0]])


def fixed(*arrays):
    return lambda r, d: [a.astype(d) if a.dtype.kind == "f" else a for a in arrays]


def with_weight(make, shape):
    """Appends a positive weight array to ``make``'s args (weight as a kwarg needs a name)."""
    return lambda r, d: make(r, d) + [r.uniform(0.2, 2.0, shape).astype(d)]


CASES = [
    Case("mse_loss", reg((4, 5)), diff=(0, 1)),
    Case("mse_loss", reg((4, 5)), {"reduction": "sum"}, id="sum"),
    Case("mse_loss", reg((2, 3, 4)), {"reduction": "none"}, id="none"),
    Case("l1_loss", reg((4, 5)), diff=(0, 1)),
    Case("l1_loss", reg((4, 5)), {"reduction": "none"}, id="none"),
    Case("smooth_l1_loss", reg((6, 5)), diff=(0, 1)),
    Case("smooth_l1_loss", reg((6, 5)), {"beta": 0.5, "reduction": "sum"}, id="beta"),
    Case("smooth_l1_loss", reg((6, 5)), {"beta": 0.0}, id="beta0"),
    Case("huber_loss", reg((6, 5)), diff=(0, 1)),
    Case("huber_loss", reg((6, 5)), {"delta": 0.3, "reduction": "none"}, id="delta"),
    Case("nll_loss", classes((4, 5), 5, (4,))),
    Case("nll_loss", classes((4, 5), 5, (4,)), {"weight": W5}, id="weight"),
    Case("nll_loss", classes((6, 5), 5, (6,), ignore=(1, 4)), {"weight": W5}, id="weight_ignore"),
    Case("nll_loss", classes((6, 5), 5, (6,), ignore=(1, 4), ignore_value=3),
         {"ignore_index": 3, "reduction": "sum"}, id="ignore_index_sum"),
    Case("nll_loss", classes((6, 5), 5, (6,), ignore=(0,)), {"reduction": "none"}, id="none"),
    Case("nll_loss", classes((5,), 5, ()), id="unbatched"),
    Case("nll_loss", classes((2, 5, 3), 5, (2, 3), ignore=(2,)), {"weight": W5}, id="3d"),
    Case("nll_loss", classes((2, 3, 2, 3), 3, (2, 2, 3)), {"weight": W3, "reduction": "none"},
         id="4d"),
    Case("nll_loss", classes((2, 3, 2, 2, 2), 3, (2, 2, 2, 2)), id="5d"),
    Case("nll_loss", classes((3, 5), 5, (3,), ignore=(0, 1, 2)), id="all_ignored"),
    Case("cross_entropy", classes((4, 5), 5, (4,))),
    Case("cross_entropy", classes((4, 5), 5, (4,)), {"reduction": "none"}, id="none"),
    Case("cross_entropy", classes((4, 5), 5, (4,)), {"weight": W5, "reduction": "sum"},
         id="weight_sum"),
    Case("cross_entropy", classes((6, 5), 5, (6,), ignore=(2,)), {"weight": W5},
         id="weight_ignore"),
    Case("cross_entropy", classes((6, 5), 5, (6,), ignore=(2, 3)), {"label_smoothing": 0.1},
         id="smoothing"),
    Case("cross_entropy", classes((6, 5), 5, (6,), ignore=(2, 3)),
         {"label_smoothing": 0.3, "weight": W5}, id="smoothing_weight"),
    Case("cross_entropy", classes((6, 5), 5, (6,), ignore=(0,)),
         {"label_smoothing": 0.3, "weight": W5, "reduction": "none"}, id="smoothing_none"),
    Case("cross_entropy", classes((6, 5), 5, (6,), ignore=(0,)),
         {"label_smoothing": 0.2, "reduction": "sum"}, id="smoothing_sum"),
    Case("cross_entropy", classes((5,), 5, ()), id="unbatched"),
    Case("cross_entropy", classes((5,), 5, ()), {"label_smoothing": 0.2, "weight": W5},
         id="unbatched_smoothing"),
    Case("cross_entropy", classes((2, 3, 4, 2), 3, (2, 4, 2), ignore=(0, 5)),
         {"weight": W3, "label_smoothing": 0.15}, id="spatial"),
    Case("cross_entropy", classes((2, 3, 4), 3, (2, 4)), {"reduction": "none"}, id="3d_none"),
    Case("cross_entropy", soft_targets((4, 5)), diff=(0, 1), id="probs"),
    Case("cross_entropy", soft_targets((4, 5)), {"label_smoothing": 0.2, "weight": W5},
         diff=(0, 1), id="probs_smoothing_weight"),
    Case("cross_entropy", soft_targets((2, 3, 4)), {"reduction": "none", "weight": W3},
         id="probs_3d_none"),
    Case("cross_entropy", soft_targets((5,), 0), {"reduction": "sum"}, id="probs_unbatched"),
    Case("binary_cross_entropy", probs((4, 3)), diff=(0, 1)),
    Case("binary_cross_entropy", probs((4, 3), binary=True), {"weight": W3}, id="weight"),
    Case("binary_cross_entropy", probs((4, 3)), {"reduction": "none"}, diff=(0, 1), id="none"),
    Case("binary_cross_entropy", fixed(EDGE_PROBS, EDGE_TARGETS), {"reduction": "sum"},
         gradgrad=False, id="saturated"),
    Case("binary_cross_entropy_with_logits", probs((4, 3)), diff=(0, 1)),
    Case("binary_cross_entropy_with_logits", probs((4, 3)),
         {"pos_weight": W3, "weight": W3[::-1].copy()}, diff=(0, 1), id="pos_weight"),
    Case("binary_cross_entropy_with_logits", probs((2, 4, 3)),
         {"pos_weight": np.array([[0.5], [2.0], [1.0], [3.0]]), "reduction": "none"},
         id="pos_weight_broadcast"),
    Case("binary_cross_entropy_with_logits", fixed(BIG_LOGITS, EDGE_TARGETS[:, ::-1].copy()),
         {"pos_weight": W3}, id="large_logits"),
    Case("kl_div", log_probs((4, 5)), {"reduction": "batchmean"}, diff=(0, 1)),
    Case("kl_div", log_probs((4, 5)), {"reduction": "sum"}, id="sum"),
    Case("kl_div", log_probs((4, 5)), {"reduction": "none"}, diff=(0, 1), id="none"),
    Case("kl_div", log_probs((4, 5), True), {"reduction": "batchmean", "log_target": True},
         diff=(0, 1), id="log_target"),
    Case("kl_div", fixed(np.array([-1.0, -0.5, -2.0]), np.array([0.0, 0.4, 0.6])),
         {"reduction": "sum"}, id="zero_target"),
    Case("poisson_nll_loss", lambda r, d: [r.standard_normal((4, 3)).astype(d),
                                           r.integers(0, 5, (4, 3)).astype(d)], diff=(0, 1)),
    Case("poisson_nll_loss", lambda r, d: [r.uniform(0.1, 3, (4, 3)).astype(d),
                                           r.integers(0, 5, (4, 3)).astype(d)],
         {"log_input": False, "full": True, "reduction": "none"}, diff=(0, 1), id="full"),
    Case("gaussian_nll_loss", lambda r, d: reg((4, 3))(r, d) + [r.uniform(0.1, 2, (4, 3))
                                                                .astype(d)],
         {"full": True}, diff=(0, 1, 2)),
    Case("gaussian_nll_loss", lambda r, d: reg((4, 3))(r, d) + [r.uniform(0.1, 2, (4,))
                                                                .astype(d)],
         {"reduction": "sum"}, diff=(0, 2), id="homoscedastic"),
    Case("gaussian_nll_loss", lambda r, d: reg((4, 3))(r, d) + [0.7], {"reduction": "none"},
         id="float_var"),
    Case("gaussian_nll_loss", fixed(np.array([0.5, -1.0]), np.array([0.0, 0.0]),
                                    np.array([1e-9, 0.5])), {"eps": 1e-3}, diff=(0, 2),
         id="clamped_var"),
    Case("margin_ranking_loss", signs((6,), (6,), tshape=(6,)), {"margin": 0.3},
         diff=(0, 1, 2)),
    Case("hinge_embedding_loss", signs((3, 4), tshape=(3, 4)), {"margin": 1.5}),
    Case("hinge_embedding_loss", signs((3, 4), tshape=(3, 4)), {"reduction": "none"}, id="none"),
    Case("soft_margin_loss", signs((3, 4), tshape=(3, 4))),
    Case("cosine_embedding_loss", signs((4, 3), (4, 3), tshape=(4,)), {"margin": 0.1},
         diff=(0, 1)),
    Case("cosine_embedding_loss", signs((3,), (3,), tshape=()), diff=(0, 1), id="unbatched"),
    Case("triplet_margin_loss", lambda r, d: [r.standard_normal((4, 3)).astype(d)
                                              for _ in range(3)], diff=(0, 1, 2)),
    Case("triplet_margin_loss", lambda r, d: [r.standard_normal((4, 3)).astype(d)
                                              for _ in range(3)],
         {"p": 1, "swap": True, "margin": 2.0, "reduction": "none"}, diff=(0, 1, 2), id="swap"),
    Case("multilabel_soft_margin_loss", probs((4, 3), binary=True), {"weight": W3}),
    # torch has no double backward for multi_margin_loss
    Case("multi_margin_loss", classes((4, 5), 5, (4,)), gradgrad=False),
    Case("multi_margin_loss", classes((4, 5), 5, (4,)),
         {"p": 2, "margin": 0.5, "weight": W5, "reduction": "none"}, gradgrad=False,
         id="p2_weight"),
    Case("multi_margin_loss", classes((5,), 5, ()), {"reduction": "sum"}, gradgrad=False,
         id="unbatched"),
]


def _case_id(c):
    return c.fn + (f"-{c.id}" if c.id else "")


def _args(m, case, dtype, requires_grad=True):
    arrays = case.make(np.random.default_rng(7), dtype)
    args = [m.tensor(a, requires_grad=requires_grad and i in case.diff)
            if isinstance(a, np.ndarray) else a for i, a in enumerate(arrays)]
    kwargs = {k: m.tensor(v.astype(dtype)) if isinstance(v, np.ndarray) else v
              for k, v in case.kwargs.items()}
    return args, kwargs


def _run(m, case, dtype):
    args, kwargs = _args(m, case, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = getattr(m.nn.functional, case.fn)(*args, **kwargs)
    return args, out


def _np(t):
    return t.detach().numpy()


def _close(got, want, tol, what):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=tol[0], atol=tol[1], equal_nan=True, err_msg=what)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_value_and_grad(case, dtype):
    t_args, t_out = _run(torch, case, dtype)
    g_args, g_out = _run(gg, case, dtype)
    assert str(g_out.dtype) == str(t_out.dtype)
    assert tuple(g_out.shape) == tuple(t_out.shape)
    _close(_np(g_out), _np(t_out), TOL[dtype], "loss")
    up = np.random.default_rng(3).uniform(0.5, 1.5, tuple(t_out.shape)).astype(dtype)
    t_out.backward(torch.tensor(up))
    g_out.backward(gg.tensor(up))
    for i in case.diff:
        assert (g_args[i].grad is None) == (t_args[i].grad is None), f"grad presence of arg {i}"
        if t_args[i].grad is not None:
            assert str(g_args[i].grad.dtype) == str(t_args[i].grad.dtype)
            _close(_np(g_args[i].grad), _np(t_args[i].grad), GRAD_TOL[dtype], f"grad of arg {i}")


def _second(m, case):
    """Grads of ``<w2, d<w1, out**2>/dx>`` (first grads taken with create_graph=True)."""
    args, out = _run(m, case, np.float64)
    diff = [args[i] for i in case.diff]
    rng = np.random.default_rng(5)
    w1 = m.tensor(rng.uniform(0.5, 1.5, tuple(out.shape)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = m.autograd.grad((out * out * w1).sum(), diff, create_graph=True,
                                allow_unused=True)
    live = [(g, x) for g, x in zip(first, diff) if g is not None and g.requires_grad]
    if live:
        total = sum((g * m.tensor(rng.uniform(0.5, 1.5, tuple(g.shape)))).sum() for g, _ in live)
        total.backward()
    return [x.grad for x in diff]


@pytest.mark.parametrize("case", [c for c in CASES if c.gradgrad], ids=_case_id)
def test_second_derivative(case):
    for i, (a, b) in enumerate(zip(_second(gg, case), _second(torch, case))):
        if a is None or b is None:  # torch may give none where graphgrad gives zeros
            present = a if b is None else b
            assert present is None or not np.any(_np(present)), f"arg {i}: grad on one side"
            continue
        _close(_np(a), _np(b), GRAD_TOL[np.float64], f"second derivative, arg {i}")


# -- errors --------------------------------------------------------------------------------------
def _x(m, *shape):
    return m.tensor(np.random.default_rng(0).standard_normal(shape))


def _long(m, *values):
    return m.tensor(np.array(values, dtype=np.int64))


ERRORS = {
    "nll_oob": lambda m: m.nn.functional.nll_loss(_x(m, 3, 5), _long(m, 1, 5, 0)),
    "nll_negative": lambda m: m.nn.functional.nll_loss(_x(m, 3, 5), _long(m, 1, -1, 0)),
    "nll_oob_spatial": lambda m: m.nn.functional.nll_loss(_x(m, 2, 5, 3),
                                                          _long(m, [1, 5, 0], [0, 0, 0])),
    "ce_oob": lambda m: m.nn.functional.cross_entropy(_x(m, 3, 5), _long(m, 1, 7, 0)),
    "nll_float_target": lambda m: m.nn.functional.nll_loss(_x(m, 3, 5), _x(m, 3)),
    "ce_float_target_shape": lambda m: m.nn.functional.cross_entropy(_x(m, 3, 5), _x(m, 3)),
    "ce_int32_target": lambda m: m.nn.functional.cross_entropy(
        _x(m, 3, 5), m.tensor(np.array([1, 2, 0], dtype=np.int32))),
    "nll_batch": lambda m: m.nn.functional.nll_loss(_x(m, 3, 5), _long(m, 1, 2)),
    "nll_0d_input": lambda m: m.nn.functional.nll_loss(_x(m), _long(m, 1)[0]),
    "nll_multi_target": lambda m: m.nn.functional.nll_loss(
        _x(m, 3, 5), m.tensor(np.zeros((3, 2), np.int64))),
    "nll_spatial_shape": lambda m: m.nn.functional.nll_loss(
        _x(m, 2, 5, 3), m.tensor(np.zeros((2, 4), np.int64))),
    "nll_2d_spatial_shape": lambda m: m.nn.functional.nll_loss(
        _x(m, 2, 5, 3, 2), m.tensor(np.zeros((2, 4, 2), np.int64))),
    "nll_1d_target_size": lambda m: m.nn.functional.nll_loss(_x(m, 5), _long(m, 1, 2)),
    "nll_weight_shape": lambda m: m.nn.functional.nll_loss(_x(m, 3, 5), _long(m, 1, 2, 0),
                                                           weight=_x(m, 4)),
    "nll_weight_dtype": lambda m: m.nn.functional.nll_loss(_x(m, 3, 5), _long(m, 1, 2, 0),
                                                           weight=_x(m, 5).float()),
    "nll_weight_grad": lambda m: m.nn.functional.nll_loss(
        _x(m, 3, 5), _long(m, 1, 2, 0), weight=_x(m, 5).requires_grad_()),
    "nll_reduction": lambda m: m.nn.functional.nll_loss(_x(m, 3, 5), _long(m, 1, 2, 0),
                                                        reduction="avg"),
    "ce_int_input": lambda m: m.nn.functional.cross_entropy(
        m.tensor(np.ones((3, 5), np.int64)), _long(m, 1, 2, 0)),
    "ce_probs_ignore_index": lambda m: m.nn.functional.cross_entropy(_x(m, 3, 5), _x(m, 3, 5),
                                                                     ignore_index=1),
    "ce_probs_long": lambda m: m.nn.functional.cross_entropy(
        _x(m, 3, 5), m.tensor(np.zeros((3, 5), np.int64))),
    "ce_smoothing_range": lambda m: m.nn.functional.cross_entropy(
        _x(m, 3, 5), _long(m, 1, 2, 0), label_smoothing=1.5),
    "ce_probs_smoothing_range": lambda m: m.nn.functional.cross_entropy(
        _x(m, 3, 5), _x(m, 3, 5), label_smoothing=1.5),
    "ce_probs_weight_shape": lambda m: m.nn.functional.cross_entropy(_x(m, 3, 5), _x(m, 3, 5),
                                                                     weight=_x(m, 4)),
    "mse_shape": lambda m: m.nn.functional.mse_loss(_x(m, 3, 2), _x(m, 3)),
    "mse_long": lambda m: m.nn.functional.mse_loss(_long(m, 1, 2), _long(m, 1, 2)),
    "mse_reduction": lambda m: m.nn.functional.mse_loss(_x(m, 3), _x(m, 3), reduction="x"),
    "mse_weight_shape": lambda m: m.nn.functional.mse_loss(_x(m, 3), _x(m, 3), weight=_x(m, 2)),
    "l1_weight_reduction": lambda m: m.nn.functional.l1_loss(_x(m, 3), _x(m, 3), weight=_x(m, 3),
                                                             reduction="x"),
    "smooth_l1_beta": lambda m: m.nn.functional.smooth_l1_loss(_x(m, 3), _x(m, 3), beta=-1.0),
    "huber_delta": lambda m: m.nn.functional.huber_loss(_x(m, 3), _x(m, 3), delta=0.0),
    "bce_input_range": lambda m: m.nn.functional.binary_cross_entropy(
        m.tensor([1.5, 0.5]), m.tensor([1.0, 0.0])),
    "bce_target_range": lambda m: m.nn.functional.binary_cross_entropy(
        m.tensor([0.5, 0.5]), m.tensor([1.5, 0.0])),
    "bce_size": lambda m: m.nn.functional.binary_cross_entropy(m.tensor([0.5]),
                                                               m.tensor([[1.0]])),
    "bce_long_target": lambda m: m.nn.functional.binary_cross_entropy(m.tensor([0.5]),
                                                                      _long(m, 1)),
    "bce_dtype": lambda m: m.nn.functional.binary_cross_entropy(
        m.tensor([0.5], dtype=m.float64), m.tensor([1.0])),
    "bce_weight_grad": lambda m: m.nn.functional.binary_cross_entropy(
        m.tensor([0.5]), m.tensor([1.0]), weight=m.tensor([2.0], requires_grad=True)),
    "bce_logits_size": lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.tensor([0.5]), m.tensor([[1.0]])),
    "bce_logits_long": lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.tensor([0.5]), _long(m, 1)),
    "bce_logits_pos_weight_grows": lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        _x(m, 2, 3), _x(m, 2, 3), pos_weight=m.ones(2, 1, 3)),
    "kl_reduction": lambda m: m.nn.functional.kl_div(_x(m, 3), _x(m, 3), reduction="x"),
    "soft_margin_target_grad": lambda m: m.nn.functional.soft_margin_loss(
        _x(m, 3), _x(m, 3).requires_grad_()),
    "margin_ranking_dims": lambda m: m.nn.functional.margin_ranking_loss(_x(m, 3), _x(m, 3),
                                                                         _x(m, 3, 1)),
    "cosine_target_dim": lambda m: m.nn.functional.cosine_embedding_loss(_x(m, 3, 4),
                                                                         _x(m, 3, 4),
                                                                         _x(m, 3, 1)),
    "cosine_input_dim": lambda m: m.nn.functional.cosine_embedding_loss(_x(m, 3), _x(m, 3),
                                                                        _x(m, 3)),
    "triplet_margin": lambda m: m.nn.functional.triplet_margin_loss(_x(m, 3), _x(m, 3),
                                                                    _x(m, 3), margin=0),
    "triplet_dims": lambda m: m.nn.functional.triplet_margin_loss(_x(m, 3, 2), _x(m, 3),
                                                                  _x(m, 3)),
    "gaussian_negative_var": lambda m: m.nn.functional.gaussian_nll_loss(
        _x(m, 3), _x(m, 3), m.tensor([-1.0, 1.0, 1.0])),
    "gaussian_var_size": lambda m: m.nn.functional.gaussian_nll_loss(_x(m, 3, 2), _x(m, 3, 2),
                                                                     m.ones(2, 2)),
    "gaussian_reduction": lambda m: m.nn.functional.gaussian_nll_loss(_x(m, 3), _x(m, 3),
                                                                      m.ones(3), reduction="x"),
    "poisson_reduction": lambda m: m.nn.functional.poisson_nll_loss(_x(m, 3), _x(m, 3),
                                                                    reduction="x"),
    "multilabel_soft_margin_reduction": lambda m: m.nn.functional.multilabel_soft_margin_loss(
        _x(m, 3, 2), _x(m, 3, 2), reduction="x"),
    "multi_margin_p": lambda m: m.nn.functional.multi_margin_loss(_x(m, 3, 5), _long(m, 1, 2, 0),
                                                                  p=3),
}
# torch's message comes from a code path worded differently; the type must still match
_TYPE_ONLY = {"mse_shape", "bce_logits_pos_weight_grows", "bce_logits_long", "nll_0d_input",
              "multi_margin_p"}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_matches_torch(name):
    with pytest.raises(Exception) as t_err:
        ERRORS[name](torch)
    with pytest.raises(Exception) as g_err:
        ERRORS[name](gg)
    assert g_err.type is t_err.type, f"{g_err.type.__name__}: {g_err.value}"
    if name not in _TYPE_ONLY:
        assert str(g_err.value) == str(t_err.value)


# -- warnings ------------------------------------------------------------------------------------
WARNS = {
    "mse_size": lambda m: m.nn.functional.mse_loss(_x(m, 3, 1), _x(m, 3)),
    "l1_size": lambda m: m.nn.functional.l1_loss(_x(m, 3, 1), _x(m, 3)),
    "huber_size": lambda m: m.nn.functional.huber_loss(_x(m, 3, 1), _x(m, 3)),
    "kl_mean": lambda m: m.nn.functional.kl_div(_x(m, 3), _x(m, 3)),
    "legacy": lambda m: m.nn.functional.nll_loss(_x(m, 3, 5), _long(m, 1, 2, 0),
                                                 size_average=False),
    "legacy_kl": lambda m: m.nn.functional.kl_div(_x(m, 3), _x(m, 3), reduce=False),
    "elementwise_mean": lambda m: m.nn.functional.mse_loss(_x(m, 3), _x(m, 3),
                                                           reduction="elementwise_mean"),
    "none_for_equal_sizes": lambda m: m.nn.functional.mse_loss(_x(m, 3), _x(m, 3)),
}


@pytest.mark.parametrize("name", list(WARNS))
def test_warnings_match_torch(name):
    found = []
    for m in (torch, gg):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = WARNS[name](m)
        found.append(([(w.category, str(w.message)) for w in caught], _np(out)))
    (t_warn, t_val), (g_warn, g_val) = found
    assert g_warn == t_warn
    _close(g_val, t_val, TOL[np.float64], "value")


# -- the fused BCE against its decomposition -----------------------------------------------------
def test_bce_primitive_matches_its_decomposition():
    """ops/loss.py's decomposition, away from the clamp at 0 and 1: values, first and second
    derivatives (input and target)."""
    rng = np.random.default_rng(11)
    x0, t0 = rng.uniform(0.05, 0.95, (3, 4)), rng.uniform(0, 1, (3, 4))
    w = gg.tensor(rng.uniform(0.5, 1.5, (3, 4)))
    results = []
    for fused in (True, False):
        x, t = gg.tensor(x0, requires_grad=True), gg.tensor(t0, requires_grad=True)
        if fused:
            out = gg.nn.functional.binary_cross_entropy(x, t, reduction="none")
        else:
            out = -(t * x.log().clamp(min=-100) + (1 - t) * (-x).log1p().clamp(min=-100))
        gx, gt = gg.autograd.grad((out * w).sum(), (x, t), create_graph=True)
        (gx * gx + gt * gt).sum().backward()
        results.append([_np(out), _np(gx), _np(gt), _np(x.grad), _np(t.grad)])
    for a, b in zip(*results):
        _close(a, b, (1e-10, 1e-12), "fused vs composite")


# -- modules -------------------------------------------------------------------------------------
LEGACY = [(None, None), (True, None), (False, None), (None, False), (False, True),
          (True, False)]


@pytest.mark.parametrize("size_average, reduce", LEGACY)
@pytest.mark.parametrize("name", ["MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
                                  "BCEWithLogitsLoss", "KLDivLoss", "SmoothL1Loss",
                                  "PoissonNLLLoss", "MarginRankingLoss", "TripletMarginLoss"])
def test_module_legacy_reduction(name, size_average, reduce):
    for m in (torch, gg):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mod = getattr(m.nn, name)(size_average=size_average, reduce=reduce)
        if m is torch:
            want, t_warn = mod.reduction, [str(w.message) for w in caught]
    assert mod.reduction == want
    assert [str(w.message) for w in caught] == t_warn


@pytest.mark.parametrize("build", [
    lambda m: m.nn.HuberLoss(delta="1"),
    lambda m: m.nn.TripletMarginLoss(margin=0.0),
    lambda m: m.nn.MultiMarginLoss(p=3),
    lambda m: m.nn.MultiMarginLoss(weight=m.ones(2, 2)),
], ids=["huber_delta", "triplet_margin", "multi_margin_p", "multi_margin_weight"])
def test_module_constructor_errors(build):
    with pytest.raises(Exception) as t_err:
        build(torch)
    with pytest.raises(Exception) as g_err:
        build(gg)
    assert g_err.type is t_err.type
    assert str(g_err.value).replace("graphgrad", "torch") == str(t_err.value)


def test_module_buffers_and_attributes():
    """Weights are buffers (in state_dict, moved by .to), absent ones are None; the
    attributes are torch's."""
    for m in (torch, gg):
        ce = m.nn.CrossEntropyLoss(weight=m.ones(3), ignore_index=2, label_smoothing=0.1)
        bce = m.nn.BCEWithLogitsLoss(pos_weight=m.ones(3)).to(m.float64)
        plain = m.nn.NLLLoss()
        got = (list(ce.state_dict()), ce.ignore_index, ce.label_smoothing, ce.reduction,
               [n for n, _ in bce.named_buffers()], str(bce.pos_weight.dtype), bce.weight,
               plain.weight, list(plain.state_dict()), repr(ce), repr(bce))
        if m is torch:
            want = got
    assert got == want


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("call", [
    lambda F, x, t, c: F.mse_loss(x, t),
    lambda F, x, t, c: F.smooth_l1_loss(x, t, beta=0.5),
    lambda F, x, t, c: F.huber_loss(x, t),
    lambda F, x, t, c: F.binary_cross_entropy(x.sigmoid(), t.sigmoid()),
    lambda F, x, t, c: F.binary_cross_entropy(x.sigmoid(), t.sigmoid(), weight=t.abs()),
    lambda F, x, t, c: F.binary_cross_entropy_with_logits(x, t.sigmoid(), pos_weight=t[0].abs()),
    lambda F, x, t, c: F.nll_loss(x.log_softmax(1), c),
    lambda F, x, t, c: F.nll_loss(x[0].log_softmax(0), c[0]),
    lambda F, x, t, c: F.cross_entropy(x, c, ignore_index=1),
    lambda F, x, t, c: F.cross_entropy(x[:, :, None, None], c[:, None, None]),
    lambda F, x, t, c: F.cross_entropy(x[:, :, None], c[:, None]),
])
def test_loss_grad_fn_prints_torch_name(call, reduction):
    """``print(loss)`` shows torch's fused node name (NllLossBackward0, MseLossBackward0...)."""
    rng = np.random.default_rng(0)
    x, t, c = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), np.array([0, 2, 1, 1])
    names = []
    for m in (torch, gg):
        F = m.nn.functional
        xs = m.tensor(x, requires_grad=True)
        loss = call(_Reducing(F, reduction), xs, m.tensor(t), m.tensor(c))
        names.append(loss.grad_fn.name())
    assert names[1] == names[0]


class _Reducing:
    """``F`` whose functions all get ``reduction=``."""

    def __init__(self, F, reduction):
        self.F, self.reduction = F, reduction

    def __getattr__(self, name):
        fn = getattr(self.F, name)
        return lambda *a, **k: fn(*a, reduction=self.reduction, **k)
