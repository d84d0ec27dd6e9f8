"""torch.distributions parity: each case builds the same distribution in torch and graphgrad
from the same float64 parameters and compares log_prob, cdf/icdf, entropy, moments, the
gradients of log_prob with respect to the parameters, and KL divergences. Sampling draws from
graphgrad's own generator, so samples are checked by their statistics and support."""

from __future__ import annotations

import _parity as parity
import numpy as np
import pytest
import torch
from _parity import default_validation  # noqa: F401 - the fixture

import graphgrad as gg

R = np.random.default_rng(0)
POS = R.uniform(0.5, 2.0, (3,))
POS2 = R.uniform(0.5, 2.0, (3,))
REAL = R.normal(size=(3,))
PROB = R.uniform(0.1, 0.9, (3,))
SIMPLEX = R.dirichlet(np.ones(4), size=2)
A = R.normal(size=(3, 3))
COV = A @ A.T + 3 * np.eye(3)

# name: (constructor taking (m, params), params, values in the support, has_cdf, has_icdf)
CASES = {
    "Normal": (lambda m, p: m.distributions.Normal(p[0], p[1]), [REAL, POS],
               R.normal(size=(5, 3)), True, True),
    "Normal_scalar": (lambda m, p: m.distributions.Normal(0.5, 2.0), [],
                      R.normal(size=(4,)), True, True),
    "Uniform": (lambda m, p: m.distributions.Uniform(p[0], p[0] + p[1]), [REAL, POS],
                REAL + 0.4 * POS, True, True),
    "Exponential": (lambda m, p: m.distributions.Exponential(p[0]), [POS],
                    R.uniform(0, 3, (4, 3)), True, True),
    "Laplace": (lambda m, p: m.distributions.Laplace(p[0], p[1]), [REAL, POS],
                R.normal(size=(4, 3)), True, True),
    "Bernoulli_probs": (lambda m, p: m.distributions.Bernoulli(probs=p[0]), [PROB],
                        R.integers(0, 2, (4, 3)).astype(float), False, False),
    "Bernoulli_logits": (lambda m, p: m.distributions.Bernoulli(logits=p[0]), [REAL],
                         R.integers(0, 2, (4, 3)).astype(float), False, False),
    "Categorical_probs": (lambda m, p: m.distributions.Categorical(probs=p[0]), [SIMPLEX],
                          R.integers(0, 4, (5, 2)), False, False),
    "Categorical_logits": (lambda m, p: m.distributions.Categorical(logits=p[0]),
                           [np.log(SIMPLEX) + 1.3], R.integers(0, 4, (2,)), False, False),
    "OneHotCategorical": (lambda m, p: m.distributions.OneHotCategorical(probs=p[0]),
                          [SIMPLEX], np.eye(4)[R.integers(0, 4, (3, 2))], False, False),
    "Gamma": (lambda m, p: m.distributions.Gamma(p[0], p[1]), [POS, POS2],
              R.uniform(0.1, 3, (4, 3)), False, False),
    "Chi2": (lambda m, p: m.distributions.Chi2(p[0]), [POS + 1],
             R.uniform(0.1, 3, (4, 3)), False, False),
    "Beta": (lambda m, p: m.distributions.Beta(p[0], p[1]), [POS, POS2],
             R.uniform(0.05, 0.95, (4, 3)), False, False),
    "Dirichlet": (lambda m, p: m.distributions.Dirichlet(p[0]), [POS],
                  R.dirichlet(np.ones(3), size=4), False, False),
    "Poisson": (lambda m, p: m.distributions.Poisson(p[0]), [POS * 3],
                R.integers(0, 6, (4, 3)).astype(float), False, False),
    "Binomial_probs": (lambda m, p: m.distributions.Binomial(5, probs=p[0]), [PROB],
                       R.integers(0, 6, (4, 3)).astype(float), False, False),
    "Binomial_logits": (lambda m, p: m.distributions.Binomial(7, logits=p[0]), [REAL],
                        R.integers(0, 8, (4, 3)).astype(float), False, False),
    "MultivariateNormal_cov": (
        lambda m, p: m.distributions.MultivariateNormal(p[0], covariance_matrix=p[1]),
        [REAL, COV], R.normal(size=(4, 3)), False, False),
    "MultivariateNormal_tril": (
        lambda m, p: m.distributions.MultivariateNormal(p[0], scale_tril=p[1]),
        [REAL, np.linalg.cholesky(COV)], R.normal(size=(2, 3)), False, False),
    "MultivariateNormal_precision": (
        lambda m, p: m.distributions.MultivariateNormal(p[0], precision_matrix=p[1]),
        [REAL, np.linalg.inv(COV)], R.normal(size=(3,)), False, False),
    "Independent_Normal": (
        lambda m, p: m.distributions.Independent(m.distributions.Normal(p[0], p[1]), 1),
        [REAL, POS], R.normal(size=(4, 3)), False, False),
    "LogNormal": (lambda m, p: m.distributions.LogNormal(p[0], p[1]), [REAL, POS],
                  R.uniform(0.1, 4, (4, 3)), True, True),
    "Transformed_affine_sigmoid": (
        lambda m, p: m.distributions.TransformedDistribution(
            m.distributions.Normal(p[0], p[1]),
            [m.distributions.transforms.AffineTransform(0.5, 2.0),
             m.distributions.transforms.SigmoidTransform()]),
        [REAL, POS], R.uniform(0.1, 0.9, (4, 3)), True, False),
}


def _build(m, name):
    ctor, params, *_ = CASES[name]
    leaves = [m.tensor(p, dtype=m.float64, requires_grad=True) for p in params]
    return ctor(m, leaves), leaves



@pytest.mark.parametrize("name", CASES)
def test_log_prob_and_gradients_match_torch(name):
    parity.check_log_prob(_build, name, CASES[name][2])


@pytest.mark.parametrize("name", CASES)
def test_moments_entropy_and_shapes_match_torch(name):
    parity.check_moments(_build, name)


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[3]])
def test_cdf_and_icdf_match_torch(name):
    parity.check_cdf_icdf(_build, name, CASES[name][2], CASES[name][4])


@pytest.mark.parametrize("name", CASES)
def test_samples_lie_in_the_support_with_the_right_shape(name):
    parity.check_samples(_build, name, 2000)


@pytest.mark.parametrize("name", [n for n in CASES
                                  if _build(torch, n)[0].has_rsample and CASES[n][1]])
def test_rsample_is_differentiable_and_reparameterized(name):
    parity.check_rsample(_build, name)


def test_normal_rsample_gradient_is_the_reparameterization():
    loc = gg.tensor([0.5, -1.0], requires_grad=True)
    scale = gg.tensor([2.0, 0.5], requires_grad=True)
    gg.manual_seed(3)
    s = gg.distributions.Normal(loc, scale).rsample()
    s.sum().backward()
    eps = (s - loc) / scale
    np.testing.assert_allclose(loc.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.detach().numpy(), rtol=1e-6)


def test_gamma_rsample_gradient_matches_torchs_implicit_gradient():
    from graphgrad.distributions._gamma_sampler import standard_gamma_grad
    alpha = np.array([0.3, 0.9, 2.0, 7.5, 40.0])
    x = np.array([0.05, 0.7, 1.6, 9.0, 35.0])
    expected = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(standard_gamma_grad(alpha, x), expected, rtol=2e-3)


KL_PAIRS = [("Normal", "Normal_scalar"), ("Bernoulli_probs", "Bernoulli_logits"),
            ("Categorical_probs", "Categorical_logits"), ("Exponential", "Exponential"),
            ("Laplace", "Laplace"), ("Gamma", "Gamma"), ("Beta", "Beta"),
            ("Dirichlet", "Dirichlet"), ("Poisson", "Poisson"),
            ("MultivariateNormal_cov", "MultivariateNormal_tril"),
            ("Independent_Normal", "Independent_Normal"), ("LogNormal", "LogNormal"),
            ("Binomial_probs", "Binomial_probs"), ("OneHotCategorical", "OneHotCategorical")]


@pytest.mark.parametrize("p,q", KL_PAIRS, ids=[f"{p}-{q}" for p, q in KL_PAIRS])
def test_kl_divergence_matches_torch(p, q):
    parity.check_kl(_build, p, q)


def test_kl_of_unregistered_pair_raises_not_implemented():
    for m in (torch, gg):
        with pytest.raises(NotImplementedError):
            m.distributions.kl_divergence(m.distributions.Poisson(1.0),
                                          m.distributions.Normal(0.0, 1.0))


def test_register_kl_takes_the_most_specific_pair():
    class MyNormal(gg.distributions.Normal):
        pass

    @gg.distributions.register_kl(MyNormal, gg.distributions.Normal)
    def _mine(p, q):
        return gg.tensor(42.0)

    assert float(gg.distributions.kl_divergence(MyNormal(0.0, 1.0),
                                                gg.distributions.Normal(0.0, 1.0))) == 42.0
    assert float(gg.distributions.kl_divergence(gg.distributions.Normal(0.0, 1.0),
                                                gg.distributions.Normal(0.0, 1.0))) == 0.0


ERRORS = {
    "negative_scale": lambda m: m.distributions.Normal(m.zeros(2), -m.ones(2)),
    "both_probs_logits": lambda m: m.distributions.Bernoulli(probs=m.tensor(0.3),
                                                             logits=m.tensor(0.1)),
    "categorical_scalar": lambda m: m.distributions.Categorical(probs=m.tensor(1.0)),
    "outside_support": lambda m: m.distributions.Categorical(m.ones(3)).log_prob(
        m.tensor(5)),
    "event_shape": lambda m: m.distributions.MultivariateNormal(
        m.zeros(3), m.eye(3)).log_prob(m.zeros(2)),
    "mvn_two_params": lambda m: m.distributions.MultivariateNormal(
        m.zeros(2), covariance_matrix=m.eye(2), scale_tril=m.eye(2)),
    "uniform_low_high": lambda m: m.distributions.Uniform(1.0, 0.0),
    "independent_ndims": lambda m: m.distributions.Independent(
        m.distributions.Normal(m.zeros(3), 1.0), 2),
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
    "Normal": lambda m: m.distributions.Normal(m.zeros(2), 1.0),
    "scalar": lambda m: m.distributions.Normal(0.0, 1.0),
    "Categorical": lambda m: m.distributions.Categorical(m.ones(3)),
    "Independent": lambda m: m.distributions.Independent(
        m.distributions.Normal(m.zeros(3), m.ones(3)), 1),
    "support": lambda m: m.distributions.Uniform(0.0, 2.0).support,
    "constraint": lambda m: m.distributions.Binomial(3, m.tensor(0.3)).support,
    "real_vector": lambda m: m.distributions.constraints.real_vector,
    "Beta": lambda m: m.distributions.Beta(1.0, 2.0),
    "LogNormal": lambda m: m.distributions.LogNormal(0.0, 1.0),
    "OneHotCategorical": lambda m: m.distributions.OneHotCategorical(m.ones(3)),
}


@pytest.mark.parametrize("name", REPRS)
def test_repr_matches_torch(name):
    assert repr(REPRS[name](gg)) == repr(REPRS[name](torch))


def test_expand_matches_torch():
    for name in ("Normal", "Bernoulli_logits", "Categorical_probs", "Gamma", "Dirichlet",
                 "MultivariateNormal_cov", "LogNormal", "Independent_Normal"):
        parity.check_expand(_build, name)


def test_enumerate_support_matches_torch():
    for name in ("Bernoulli_probs", "Categorical_probs", "Binomial_probs",
                 "OneHotCategorical"):
        t, g = _build(torch, name)[0], _build(gg, name)[0]
        for expand in (True, False):
            parity.close(g.enumerate_support(expand), t.enumerate_support(expand))


def test_poisson_and_binomial_samplers_match_torchs_moments():
    rate = np.array([0.5, 3.0, 20.0])
    count, prob = np.array([1.0, 10.0, 50.0]), np.array([0.2, 0.5, 0.9])
    gg.manual_seed(0)
    for m_fn, t_fn, args, mean, var in (
            (gg.poisson, torch.poisson, (rate,), rate, rate),
            (gg.binomial, torch.binomial, (count, prob), count * prob,
             count * prob * (1 - prob))):
        ours = m_fn(*[gg.tensor(np.tile(a, (4000, 1))) for a in args])
        theirs = t_fn(*[torch.tensor(np.tile(a, (4000, 1))) for a in args])
        assert ours.dtype == gg.float64 and theirs.dtype == torch.float64
        assert not ours.requires_grad
        assert (ours.numpy() % 1 == 0).all() and (ours.numpy() >= 0).all()
        np.testing.assert_array_less(np.abs(ours.numpy().mean(0) - mean),
                                     5 * np.sqrt(var / 4000) + 1e-12)
