"""torch.distributions parity for the second set of families (StudentT, Cauchy, Half*,
Gumbel, Weibull, Pareto, Kumaraswamy, ContinuousBernoulli, VonMises, LogisticNormal,
FisherSnedecor, Geometric, NegativeBinomial, Multinomial, LowRankMultivariateNormal, the
relaxed ones, MixtureSameFamily), the structured transforms, biject_to/transform_to and the
cross-family KL pairs: each built in torch and graphgrad from the same float64 parameters."""

from __future__ import annotations

import math

import _parity as parity
import numpy as np
import pytest
import torch
from _parity import default_validation  # noqa: F401 - the fixture

import graphgrad as gg

R = np.random.default_rng(1)
POS = R.uniform(0.5, 2.0, (3,))
POS2 = R.uniform(0.5, 2.0, (3,))
REAL = R.normal(size=(3,))
PROB = R.uniform(0.1, 0.9, (3,))
SIMPLEX = R.dirichlet(np.ones(4), size=2)
W = R.normal(size=(3, 2))
TEMP = np.array(0.7)


def _corr_cholesky(shape, n):
    lower = np.tril(R.normal(size=shape + (n, n)))
    lower[..., np.arange(n), np.arange(n)] = np.abs(lower[..., np.arange(n), np.arange(n)]) + 0.1
    return lower / np.linalg.norm(lower, axis=-1, keepdims=True)


def _spd(shape, n):
    a = R.normal(size=shape + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


CORR_CHOL = _corr_cholesky((4, 3), 3)
SPD = _spd((), 3)
SPD_VALUES = _spd((4, 2), 3)


def _d(m):
    return m.distributions


# name: (constructor taking (m, params), params, values in the support, has_cdf, has_icdf,
#        tolerance of log_prob/moments)
CASES = {
    "StudentT": (lambda m, p: _d(m).StudentT(p[0], p[1], p[2]), [POS + 2.5, REAL, POS],
                 R.normal(size=(4, 3)), False, False, 1e-7),
    "StudentT_heavy": (lambda m, p: _d(m).StudentT(p[0]), [np.array([0.8, 1.5, 3.0])],
                       R.normal(size=(4, 3)), False, False, 1e-7),
    "StudentT_scalar": (lambda m, p: _d(m).StudentT(3.0, 0.5, 2.0), [],
                        R.normal(size=(4,)), False, False, 1e-7),
    "Cauchy": (lambda m, p: _d(m).Cauchy(p[0], p[1]), [REAL, POS], R.normal(size=(4, 3)),
               True, True, 1e-7),
    "HalfNormal": (lambda m, p: _d(m).HalfNormal(p[0]), [POS], R.uniform(0, 3, (4, 3)),
                   True, True, 1e-7),
    "HalfCauchy": (lambda m, p: _d(m).HalfCauchy(p[0]), [POS], R.uniform(0, 3, (4, 3)),
                   True, True, 1e-7),
    "Gumbel": (lambda m, p: _d(m).Gumbel(p[0], p[1]), [REAL, POS], R.normal(size=(4, 3)),
               True, True, 1e-7),
    "Gumbel_scalar": (lambda m, p: _d(m).Gumbel(0.5, 2.0), [], R.normal(size=(4,)),
                      True, True, 1e-7),
    "Weibull": (lambda m, p: _d(m).Weibull(p[0], p[1]), [POS, POS2 + 0.5],
                R.uniform(0.1, 3, (4, 3)), True, True, 1e-7),
    "Pareto": (lambda m, p: _d(m).Pareto(p[0], p[1]), [POS, POS2 + 2],
               R.uniform(2.1, 5, (4, 3)), True, True, 1e-7),
    "Kumaraswamy": (lambda m, p: _d(m).Kumaraswamy(p[0], p[1]), [POS, POS2],
                    R.uniform(0.05, 0.95, (4, 3)), True, True, 1e-7),
    "ContinuousBernoulli_probs": (
        lambda m, p: _d(m).ContinuousBernoulli(probs=p[0]), [np.array([0.2, 0.4995, 0.8])],
        R.uniform(0.05, 0.95, (4, 3)), True, True, 1e-7),
    "ContinuousBernoulli_logits": (
        lambda m, p: _d(m).ContinuousBernoulli(logits=p[0]), [REAL],
        R.uniform(0.05, 0.95, (4, 3)), True, True, 1e-7),
    # torch's log I0 is a 1e-7-accurate polynomial; ours is graphgrad.special.i0e
    "VonMises": (lambda m, p: _d(m).VonMises(p[0], p[1]), [REAL, POS * 2],
                 R.uniform(-math.pi, math.pi, (4, 3)), False, False, 1e-6),
    "LogisticNormal": (lambda m, p: _d(m).LogisticNormal(p[0], p[1]), [REAL, POS],
                       R.dirichlet(np.ones(4), size=5), False, False, 1e-7),
    "FisherSnedecor": (lambda m, p: _d(m).FisherSnedecor(p[0], p[1]), [POS + 4, POS2 + 5],
                       R.uniform(0.1, 3, (4, 3)), False, False, 1e-7),
    "Geometric_probs": (lambda m, p: _d(m).Geometric(probs=p[0]), [PROB],
                        R.integers(0, 6, (4, 3)).astype(float), False, False, 1e-7),
    "Geometric_logits": (lambda m, p: _d(m).Geometric(logits=p[0]), [REAL],
                         R.integers(0, 6, (4, 3)).astype(float), False, False, 1e-7),
    "NegativeBinomial_probs": (
        lambda m, p: _d(m).NegativeBinomial(p[0], probs=p[1]), [POS * 3, PROB],
        R.integers(0, 8, (4, 3)).astype(float), False, False, 1e-7),
    "NegativeBinomial_logits": (
        lambda m, p: _d(m).NegativeBinomial(4.0, logits=p[0]), [REAL],
        R.integers(0, 8, (4, 3)).astype(float), False, False, 1e-7),
    "Multinomial": (lambda m, p: _d(m).Multinomial(5, probs=p[0]), [SIMPLEX],
                    R.multinomial(5, [0.25] * 4, size=(3, 2)).astype(float), False, False,
                    1e-7),
    "Multinomial_logits": (lambda m, p: _d(m).Multinomial(3, logits=p[0]), [np.log(SIMPLEX)],
                           R.multinomial(3, [0.25] * 4, size=(2,)).astype(float), False,
                           False, 1e-7),
    "LowRankMultivariateNormal": (
        lambda m, p: _d(m).LowRankMultivariateNormal(p[0], p[1], p[2]), [REAL, W, POS],
        R.normal(size=(4, 3)), False, False, 1e-7),
    "LogitRelaxedBernoulli": (
        lambda m, p: _d(m).relaxed_bernoulli.LogitRelaxedBernoulli(p[0], logits=p[1]), [TEMP, REAL],
        R.normal(size=(4, 3)), False, False, 1e-7),
    "RelaxedBernoulli": (lambda m, p: _d(m).RelaxedBernoulli(p[0], probs=p[1]), [TEMP, PROB],
                         R.uniform(0.05, 0.95, (4, 3)), False, False, 1e-7),
    "ExpRelaxedCategorical": (
        lambda m, p: _d(m).relaxed_categorical.ExpRelaxedCategorical(p[0], probs=p[1]),
        [TEMP, SIMPLEX],
        np.log(R.dirichlet(np.ones(4), size=(3, 2))), False, False, 1e-7),
    "RelaxedOneHotCategorical": (
        lambda m, p: _d(m).RelaxedOneHotCategorical(p[0], logits=p[1]), [TEMP, SIMPLEX],
        R.dirichlet(np.ones(4), size=(3, 2)), False, False, 1e-7),
    "MixtureSameFamily_Normal": (
        lambda m, p: _d(m).MixtureSameFamily(_d(m).Categorical(probs=p[0]),
                                             _d(m).Normal(p[1], p[2])),
        [SIMPLEX[0], R.normal(size=4), R.uniform(0.5, 2, 4)], R.normal(size=(5,)), True,
        False, 1e-7),
    "MixtureSameFamily_Independent": (
        lambda m, p: _d(m).MixtureSameFamily(
            _d(m).Categorical(probs=p[0]),
            _d(m).Independent(_d(m).Normal(p[1], p[2]), 1)),
        [SIMPLEX, R.normal(size=(2, 4, 3)), R.uniform(0.5, 2, (2, 4, 3))],
        R.normal(size=(5, 2, 3)), False, False, 1e-7),
    "InverseGamma": (lambda m, p: _d(m).InverseGamma(p[0], p[1]), [POS + 2, POS2],
                     R.uniform(0.1, 3, (4, 3)), False, False, 1e-7),
    # float32: torch's GeneralizedPareto compares concentration with a float32 zero
    "GeneralizedPareto": (lambda m, p: _d(m).GeneralizedPareto(p[0].float(), p[1].float(),
                                                               p[2].float()),
                          [REAL, POS, np.array([0.0, 0.2, -0.2])],
                          REAL + R.uniform(0.05, 1.5, (4, 3)), True, True, 1e-5),
    "OneHotCategoricalStraightThrough": (
        lambda m, p: _d(m).OneHotCategoricalStraightThrough(probs=p[0]), [SIMPLEX],
        np.eye(4)[R.integers(0, 4, (3, 2))], False, False, 1e-7),
    "LKJCholesky": (lambda m, p: _d(m).LKJCholesky(3, p[0]), [POS], CORR_CHOL, False, False,
                    1e-7),
    "Wishart_cov": (lambda m, p: _d(m).Wishart(p[0], covariance_matrix=p[1]),
                    [POS[:2] + 3, SPD], SPD_VALUES, False, False, 1e-7),
    # tril(): torch's cholesky_solve gives the unused upper triangle a gradient too
    "Wishart_tril": (lambda m, p: _d(m).Wishart(p[0], scale_tril=p[1].tril()),
                     [POS[:2] + 3, np.linalg.cholesky(SPD)], SPD_VALUES, False, False, 1e-7),
    "Wishart_precision": (lambda m, p: _d(m).Wishart(p[0], precision_matrix=p[1]),
                          [POS[:2] + 3, np.linalg.inv(SPD)], SPD_VALUES, False, False, 1e-7),
}

# partners of the cross-family KL pairs (the first set's families)
PARTNERS = {
    "Normal": (lambda m, p: _d(m).Normal(p[0], p[1]), [REAL * 0.3 + 0.5, POS], None),
    "Uniform01": (lambda m, p: _d(m).Uniform(p[0] * 0, p[0] * 0 + 1), [POS], None),
    "Uniform_pos": (lambda m, p: _d(m).Uniform(p[0], p[0] + p[1]), [POS, POS2], None),
    "Uniform_wide": (lambda m, p: _d(m).Uniform(p[0] - 3, p[0] + 3), [REAL], None),
    "Exponential": (lambda m, p: _d(m).Exponential(p[0]), [POS], None),
    "Gamma": (lambda m, p: _d(m).Gamma(p[0], p[1]), [POS + 0.5, POS2], None),
    "Beta": (lambda m, p: _d(m).Beta(p[0], p[1]), [POS, POS2], None),
    "Laplace": (lambda m, p: _d(m).Laplace(p[0], p[1]), [REAL, POS], None),
    "Bernoulli": (lambda m, p: _d(m).Bernoulli(probs=p[0]), [PROB], None),
    "Poisson": (lambda m, p: _d(m).Poisson(p[0]), [POS], None),
    "Binomial": (lambda m, p: _d(m).Binomial(4, probs=p[0]), [PROB], None),
    "MultivariateNormal": (lambda m, p: _d(m).MultivariateNormal(
        p[0], scale_tril=p[1]), [REAL[::-1].copy(), np.tril(W @ W.T) + np.eye(3)], None),
    "Gumbel2": (lambda m, p: _d(m).Gumbel(p[0], p[1]), [REAL[::-1].copy(), POS2], None),
    "Pareto2": (lambda m, p: _d(m).Pareto(p[0], p[1]), [POS * 0.5, POS + 1.5], None),
    "LowRank2": (lambda m, p: _d(m).LowRankMultivariateNormal(p[0], p[1], p[2]),
                 [REAL[::-1].copy(), W[:, :1], POS2], None),
    "Geometric2": (lambda m, p: _d(m).Geometric(probs=p[0]), [PROB[::-1].copy()], None),
    "Cauchy2": (lambda m, p: _d(m).Cauchy(p[0], p[1]), [REAL[::-1].copy(), POS2], None),
    "HalfNormal2": (lambda m, p: _d(m).HalfNormal(p[0]), [POS2], None),
    "CB2": (lambda m, p: _d(m).ContinuousBernoulli(probs=p[0]), [PROB[::-1].copy()], None),
}


def _build(m, name):
    ctor, params = (CASES.get(name) or PARTNERS[name])[:2]
    leaves = [m.tensor(p, dtype=m.float64, requires_grad=True) for p in params]
    return ctor(m, leaves), leaves


_np, _close = parity.to_np, parity.close


@pytest.mark.parametrize("name", CASES)
def test_log_prob_and_gradients_match_torch(name):
    parity.check_log_prob(_build, name, CASES[name][2], CASES[name][5])


@pytest.mark.parametrize("name", CASES)
def test_moments_entropy_and_shapes_match_torch(name):
    parity.check_moments(_build, name, CASES[name][5])


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[3]])
def test_cdf_and_icdf_match_torch(name):
    parity.check_cdf_icdf(_build, name, CASES[name][2], CASES[name][4])


@pytest.mark.parametrize("name", CASES)
def test_samples_lie_in_the_support_with_the_right_shape(name):
    # VonMises is circular: see test_von_mises_samples_have_the_circular_mean
    parity.check_samples(_build, name, 4000, check_mean=name != "VonMises")


def test_von_mises_samples_have_the_circular_mean():
    loc, kappa = np.array([0.3, -2.9, 3.0]), np.array([0.5, 2.0, 30.0])
    gg.manual_seed(0)
    s = gg.distributions.VonMises(gg.tensor(loc), gg.tensor(kappa)).sample((20000,)).numpy()
    assert (s >= -math.pi).all() and (s < math.pi).all()
    t = torch.distributions.VonMises(torch.tensor(loc), torch.tensor(kappa))
    resultant = 1 - t.variance.numpy()  # I1(kappa) / I0(kappa) = E cos(x - loc)
    np.testing.assert_allclose(np.cos(s - loc).mean(0), resultant, atol=0.02)
    np.testing.assert_allclose(np.sin(s - loc).mean(0), 0, atol=0.02)


@pytest.mark.parametrize("name", [n for n in CASES
                                  if _build(torch, n)[0].has_rsample and CASES[n][1]])
def test_rsample_is_differentiable_and_reparameterized(name):
    parity.check_rsample(_build, name)


def test_expand_matches_torch():
    for name in CASES:
        parity.check_expand(_build, name, CASES[name][5])


KL_PAIRS = [
    # same family
    ("Gumbel", "Gumbel2"), ("Pareto", "Pareto2"), ("Geometric_probs", "Geometric2"),
    ("Cauchy", "Cauchy2"), ("HalfNormal", "HalfNormal2"),
    ("ContinuousBernoulli_probs", "CB2"), ("ContinuousBernoulli_logits", "CB2"),
    ("LowRankMultivariateNormal", "LowRank2"),
    ("LowRankMultivariateNormal", "MultivariateNormal"),
    ("MultivariateNormal", "LowRankMultivariateNormal"), ("LogNormal_t", "LogNormal_t"),
    # finite cross-family pairs
    ("Normal", "Laplace"), ("Laplace", "Normal"), ("Normal", "Gumbel"), ("Gumbel", "Normal"),
    ("Exponential", "Gamma"), ("Gamma", "Exponential"), ("Exponential", "Gumbel"),
    ("Exponential", "Normal"), ("Gamma", "Gumbel"), ("Gamma", "Normal"),
    ("Beta", "Uniform01"), ("Beta", "Exponential"), ("Beta", "Gamma"), ("Beta", "Normal"),
    ("Beta", "CB2"), ("Bernoulli", "Poisson"), ("Uniform_pos", "Normal"),
    ("Uniform_pos", "Gumbel"), ("Uniform_pos", "Exponential"), ("Uniform_pos", "Gamma"),
    ("Uniform01", "Beta"), ("Uniform01", "CB2"), ("Uniform_pos", "Pareto2"),
    ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"),
    ("ContinuousBernoulli_probs", "Exponential"), ("ContinuousBernoulli_probs", "Normal"),
    ("ContinuousBernoulli_probs", "Uniform_wide"),
    # infinite: q's support misses part of p's
    ("Normal", "Exponential"), ("Normal", "Uniform_pos"), ("Gumbel", "Gamma"),
    ("Exponential", "Pareto2"), ("Laplace", "Beta"), ("Gamma", "Uniform01"),
    ("Pareto", "Uniform_pos"), ("Poisson", "Binomial"), ("Poisson", "Bernoulli"),
    ("Beta", "Pareto2"), ("ContinuousBernoulli_probs", "Pareto2"),
    ("Uniform_wide", "Exponential"),
    # Bregman divergence of the log normaliser
    ("Wishart_cov", "Wishart2"),
]
PARTNERS["Wishart2"] = (lambda m, p: _d(m).Wishart(p[0], scale_tril=p[1].tril()),
                       [POS2[:2] + 4, np.linalg.cholesky(_spd((), 3))], None)
PARTNERS["LogNormal_t"] = (lambda m, p: _d(m).LogNormal(p[0], p[1]), [REAL, POS], None)


@pytest.mark.parametrize("p,q", KL_PAIRS, ids=[f"{p}-{q}" for p, q in KL_PAIRS])
def test_kl_divergence_matches_torch(p, q):
    parity.check_kl(_build, p, q)


def test_kl_transformed_distributions_compare_their_transforms():
    for m in (torch, gg):
        d = m.distributions
        base = d.Normal(m.zeros(2, dtype=m.float64), m.ones(2, dtype=m.float64))
        p = d.TransformedDistribution(base, [d.transforms.ExpTransform()])
        q = d.TransformedDistribution(d.Normal(m.ones(2, dtype=m.float64), 2.0),
                                      [d.transforms.ExpTransform()])
        expected = torch.distributions.kl_divergence(
            torch.distributions.Normal(torch.zeros(2, dtype=torch.float64), 1.0),
            torch.distributions.Normal(torch.ones(2, dtype=torch.float64), 2.0))
        _close(d.kl_divergence(p, q), expected)
        with pytest.raises(NotImplementedError):
            d.kl_divergence(p, d.TransformedDistribution(base, [d.transforms.TanhTransform()]))


def _t(m):
    return m.distributions.transforms


X3 = R.normal(size=(2, 3))
SQ = R.normal(size=(2, 3, 3))

# name: (transform builder, input in the domain, has log_abs_det_jacobian)
TRANSFORMS = {
    "Softmax": (lambda m: _t(m).SoftmaxTransform(), X3, False),
    "StickBreaking": (lambda m: _t(m).StickBreakingTransform(), X3, True),
    "LowerCholesky": (lambda m: _t(m).LowerCholeskyTransform(), SQ, False),
    "PositiveDefinite": (lambda m: _t(m).PositiveDefiniteTransform(), SQ, False),
    "CorrCholesky": (lambda m: _t(m).CorrCholeskyTransform(), X3, True),
    "CorrCholesky_6": (lambda m: _t(m).CorrCholeskyTransform(), R.normal(size=(6,)), True),
    "Reshape": (lambda m: _t(m).ReshapeTransform((2, 3), (3, 2)), R.normal(size=(4, 2, 3)),
                True),
    "Independent": (lambda m: _t(m).IndependentTransform(_t(m).ExpTransform(), 1), X3, True),
    "Cat": (lambda m: _t(m).CatTransform([_t(m).ExpTransform(), _t(m).AffineTransform(
        1.0, 3.0), _t(m).SigmoidTransform()], dim=1, lengths=[1, 1, 1]), X3, True),
    "Cat_event": (lambda m: _t(m).CatTransform([
        _t(m).IndependentTransform(_t(m).ExpTransform(), 1), _t(m).AffineTransform(1.0, 3.0)],
        dim=-1, lengths=[2, 1]), X3, True),
    "Stack": (lambda m: _t(m).StackTransform([_t(m).ExpTransform(), _t(m).TanhTransform(),
                                              _t(m).SoftplusTransform()], dim=1), X3, True),
    "CumulativeDistribution": (lambda m: _t(m).CumulativeDistributionTransform(
        m.distributions.Normal(0.5, 2.0)), X3, True),
    "Compose_event": (lambda m: _t(m).ComposeTransform([_t(m).ExpTransform(),
                                                        _t(m).StickBreakingTransform()]),
                      X3, True),
    "Inverse_StickBreaking": (lambda m: _t(m).StickBreakingTransform().inv,
                              R.dirichlet(np.ones(4), size=2), True),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_match_torch(name):
    build, x_np, has_ladj = TRANSFORMS[name]
    out = {}
    for m in (torch, gg):
        t = build(m)
        x = m.tensor(x_np, dtype=m.float64, requires_grad=True)
        y = t(x)
        x_back = t.inv(y)
        total = y.sum()
        ladj = None
        if has_ladj:
            ladj = t.log_abs_det_jacobian(x, y)
            total = total + ladj.sum()
        (grad,) = m.autograd.grad(total, [x])
        out[m] = (t, y, x_back, ladj, grad)
    (tt, ty, tx, tl, tg), (gt, gy, gx, gl, g_grad) = out[torch], out[gg]
    _close(gy, ty)
    _close(gx, tx, rtol=1e-6)
    if has_ladj:
        _close(gl, tl)
    _close(g_grad, tg, rtol=1e-6)
    assert gt.bijective == tt.bijective
    assert gt.domain.event_dim == tt.domain.event_dim
    assert gt.codomain.event_dim == tt.codomain.event_dim
    assert type(gt.codomain).__name__ == type(tt.codomain).__name__
    shape = tuple(x_np.shape)
    assert tuple(gt.forward_shape(shape)) == tuple(tt.forward_shape(shape))
    assert tuple(gt.inverse_shape(tuple(ty.shape))) == tuple(tt.inverse_shape(tuple(ty.shape)))
    try:
        torch_check = tt.codomain.check(ty)
    except RuntimeError:  # torch's Cat constraint cannot join checks of mixed event dims
        with pytest.raises(RuntimeError):
            gt.codomain.check(gy)
        return
    np.testing.assert_array_equal(_np(gt.codomain.check(gy)), _np(torch_check))


def test_transform_equality_and_with_cache_match_torch():
    for m in (torch, gg):
        t = _t(m)
        assert t.ExpTransform() == t.ExpTransform()
        assert t.StickBreakingTransform() == t.StickBreakingTransform()
        assert t.AffineTransform(1.0, 2.0) == t.AffineTransform(1.0, 2.0)
        assert t.AffineTransform(1.0, 2.0) != t.AffineTransform(1.0, 3.0)
        assert t.ExpTransform().inv == t.ExpTransform().inv
        assert t.ComposeTransform([t.ExpTransform()]) == t.ComposeTransform([t.ExpTransform()])
        cached = t.ExpTransform().with_cache(1)
        x = m.ones(2)
        y = cached(x)
        assert cached(x) is y and cached.inv(y) is x
        with pytest.raises(ValueError):
            t.ReshapeTransform((2, 3), (4,))
        with pytest.raises(ValueError):
            t.ExpTransform(cache_size=2)


def _c(m):
    return m.distributions.constraints


CONSTRAINTS = {
    "real": (lambda m: _c(m).real, X3),
    "real_vector": (lambda m: _c(m).real_vector, X3),
    "positive": (lambda m: _c(m).positive, X3),
    "nonnegative": (lambda m: _c(m).nonnegative, X3),
    "greater_than": (lambda m: _c(m).greater_than(1.5), X3),
    "greater_than_eq": (lambda m: _c(m).greater_than_eq(-1.5), X3),
    "less_than": (lambda m: _c(m).less_than(2.0), X3),
    "interval": (lambda m: _c(m).interval(-1.0, 3.0), X3),
    "unit_interval": (lambda m: _c(m).unit_interval, X3),
    "half_open_interval": (lambda m: _c(m).half_open_interval(0.0, 2.0), X3),
    "independent_positive": (lambda m: _c(m).independent(_c(m).positive, 1), X3),
    "simplex": (lambda m: _c(m).simplex, X3),
    "lower_cholesky": (lambda m: _c(m).lower_cholesky, SQ),
    "positive_definite": (lambda m: _c(m).positive_definite, SQ),
    "corr_cholesky": (lambda m: _c(m).corr_cholesky, X3),
    "cat": (lambda m: _c(m).cat([_c(m).positive, _c(m).real, _c(m).unit_interval], 1,
                                [1, 1, 1]), X3),
    "stack": (lambda m: _c(m).stack([_c(m).positive, _c(m).real, _c(m).unit_interval], 1),
              X3),
}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", CONSTRAINTS)
def test_biject_to_and_transform_to_match_torch(registry, name):
    build, x_np = CONSTRAINTS[name]
    out = {}
    for m in (torch, gg):
        try:
            t = getattr(m.distributions, registry)(build(m))
        except NotImplementedError:
            out[m] = None
            continue
        x = m.tensor(x_np, dtype=m.float64)
        y = t(x)
        out[m] = (t, y)
        assert bool(build(m).check(y).all())
    if out[torch] is None:
        assert out[gg] is None
        return
    (tt, ty), (gt, gy) = out[torch], out[gg]
    assert repr(gt) == repr(tt)
    _close(gy, ty)
    _close(gt.inv(gy), tt.inv(ty), rtol=1e-6)


def test_a_registered_transform_is_used():
    class MyConstraint(gg.distributions.constraints.Constraint):
        pass

    @gg.distributions.biject_to.register(MyConstraint)
    def _mine(constraint):
        return gg.distributions.transforms.ExpTransform()

    assert isinstance(gg.distributions.biject_to(MyConstraint()),
                      gg.distributions.transforms.ExpTransform)
    with pytest.raises(NotImplementedError):
        gg.distributions.transform_to(MyConstraint())
    with pytest.raises(TypeError):
        gg.distributions.biject_to.register(int, _mine)


CONSTRAINT_CHECKS = {
    "multinomial": (lambda m: _c(m).multinomial(5), np.array([[1., 2., 2.], [3., 3., 0.],
                                                              [-1., 1., 1.]])),
    "lower_triangular": (lambda m: _c(m).lower_triangular, np.stack([np.tril(SQ[0]), SQ[1]])),
    "square": (lambda m: _c(m).square, SQ),
    "symmetric": (lambda m: _c(m).symmetric, np.stack([SQ[0] + SQ[0].T, SQ[1]])),
    "positive_semidefinite": (lambda m: _c(m).positive_semidefinite,
                              np.stack([SQ[0] @ SQ[0].T, SQ[1] + SQ[1].T])),
    "corr_cholesky": (lambda m: _c(m).corr_cholesky, np.stack([np.eye(3), np.tril(SQ[0])])),
    "mixture": (lambda m: _c(m).MixtureSameFamilyConstraint(_c(m).positive), X3),
}


@pytest.mark.parametrize("name", CONSTRAINT_CHECKS)
def test_constraint_checks_and_reprs_match_torch(name):
    build, value = CONSTRAINT_CHECKS[name]
    ours, theirs = build(gg), build(torch)
    np.testing.assert_array_equal(_np(ours.check(gg.tensor(value))),
                                  _np(theirs.check(torch.tensor(value))))
    assert repr(ours) == repr(theirs)
    assert ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete


ERRORS = {
    "studentt_df": lambda m: _d(m).StudentT(-m.ones(2)),
    "halfnormal_scale": lambda m: _d(m).HalfNormal(-m.ones(2)),
    "pareto_support": lambda m: _d(m).Pareto(2.0, 1.0).log_prob(m.tensor(1.0)),
    "geometric_zero": lambda m: _d(m).Geometric(probs=m.tensor([0.0, 0.5])),
    "cb_both": lambda m: _d(m).ContinuousBernoulli(probs=m.tensor(0.3), logits=m.tensor(0.1)),
    "cb_invalid": lambda m: _d(m).ContinuousBernoulli(probs=m.tensor(1.5),
                                                      validate_args=True),
    "multinomial_count": lambda m: _d(m).Multinomial(m.tensor(3), probs=m.ones(3)),
    "multinomial_support": lambda m: _d(m).Multinomial(2, probs=m.ones(3)).log_prob(
        m.tensor([2.0, 1.0, 0.0])),
    "lowrank_factor": lambda m: _d(m).LowRankMultivariateNormal(m.zeros(3), m.ones(2, 1),
                                                                m.ones(3)),
    "lowrank_diag": lambda m: _d(m).LowRankMultivariateNormal(m.zeros(3), m.ones(3, 1),
                                                              m.ones(2)),
    "mixture_type": lambda m: _d(m).MixtureSameFamily(_d(m).Normal(0.0, 1.0),
                                                      _d(m).Normal(m.zeros(3), 1.0)),
    "mixture_count": lambda m: _d(m).MixtureSameFamily(_d(m).Categorical(m.ones(2)),
                                                       _d(m).Normal(m.zeros(3), 1.0)),
    "nb_probs": lambda m: _d(m).NegativeBinomial(2.0, probs=m.tensor(1.0)),
    "von_mises_kappa": lambda m: _d(m).VonMises(0.0, -1.0),
    "relaxed_simplex": lambda m: _d(m).RelaxedOneHotCategorical(
        m.tensor(0.5), probs=m.ones(3)).log_prob(m.tensor([0.5, 0.6, 0.1])),
}


@pytest.mark.usefixtures("default_validation")
@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    with pytest.raises(Exception) as expected:
        ERRORS[name](torch)
    with pytest.raises(type(expected.value)) as ours:
        ERRORS[name](gg)
    first = str(expected.value).split(":")[0].split("(")[0]
    assert str(ours.value).startswith(first)


REPRS = {
    "StudentT": lambda m: _d(m).StudentT(3.0),
    "HalfNormal": lambda m: _d(m).HalfNormal(m.ones(2)),
    "Gumbel": lambda m: _d(m).Gumbel(0.0, 1.0),
    "Pareto": lambda m: _d(m).Pareto(m.ones(2), 1.0),
    "LowRank": lambda m: _d(m).LowRankMultivariateNormal(m.zeros(3), m.ones(3, 1), m.ones(3)),
    "Mixture": lambda m: _d(m).MixtureSameFamily(_d(m).Categorical(m.ones(3)),
                                                 _d(m).Normal(m.zeros(3), 1.0)),
    "Mixture_support": lambda m: _d(m).MixtureSameFamily(_d(m).Categorical(m.ones(3)),
                                                         _d(m).Normal(m.zeros(3), 1.0)).support,
    "Multinomial_support": lambda m: _d(m).Multinomial(3, m.ones(2)).support,
    "Pareto_support": lambda m: _d(m).Pareto(2.0, 1.0).support,
    "IndependentTransform": lambda m: _t(m).IndependentTransform(_t(m).ExpTransform(), 1),
    "Inverse": lambda m: _t(m).ExpTransform().inv,
    "biject_real_vector": lambda m: _d(m).biject_to(_c(m).real_vector),
}


@pytest.mark.parametrize("name", REPRS)
def test_repr_matches_torch(name):
    assert repr(REPRS[name](gg)) == repr(REPRS[name](torch))


def test_multinomial_samples_count_total_count_draws():
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    gg.manual_seed(0)
    s = gg.distributions.Multinomial(10, probs=gg.tensor(probs)).sample((3000,)).numpy()
    expected = torch.distributions.Multinomial(10, probs=torch.tensor(probs)).sample()
    assert str(s.dtype) == str(expected.dtype).replace("torch.", "")
    assert (s.sum(-1) == 10).all() and (s >= 0).all()
    np.testing.assert_array_less(np.abs(s.mean(0) - 10 * probs),
                                 5 * np.sqrt(10 * probs * (1 - probs) / 3000))
