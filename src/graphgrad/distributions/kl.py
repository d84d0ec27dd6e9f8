"""kl_divergence(p, q) and register_kl: closed forms chosen by the pair of types, the most
specific registered pair winning, as in torch.distributions.kl."""

from __future__ import annotations

import math

import graphgrad as torch

from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical
from .counts import Binomial, Poisson
from .dirichlet import Beta, Dirichlet
from .exponential import Exponential, Laplace
from .gamma import Gamma
from .independent import Independent
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .transformed_distribution import LogNormal
from .uniform import Uniform
from .utils import sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for instances of these types."""
    if not (isinstance(type_p, type) and isinstance(type_q, type)):
        raise TypeError(f"Expected type_p and type_q to be Distribution subclasses but got "
                        f"{type_p} and {type_q}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn
    return decorator


def _dispatch(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return None
    # the most specific: smallest MRO distances, p first then q (torch's order)
    def rank(pair):
        return type_p.__mro__.index(pair[0]), type_q.__mro__.index(pair[1])
    return _KL_REGISTRY[min(matches, key=rank)]


def kl_divergence(p, q):
    key = type(p), type(q)
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch(*key)
    fn = _KL_MEMOIZE[key]
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fn(p, q)


def _infinite_like(t):
    return torch.full_like(t, math.inf)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    softplus = torch.nn.functional.softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = torch.where(q.probs == 0, math.inf, t1)
    t1 = torch.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = torch.where(q.probs == 1, math.inf, t2)
    t2 = torch.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return torch.where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = torch.where((q.probs == 0).expand_as(t), math.inf, t)
    t = torch.where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + loc_abs_diff / q.scale
            + scale_ratio * torch.exp(-loc_abs_diff / p.scale) - 1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * torch.log(p.rate / q.rate)
    t2 = torch.lgamma(q.concentration) - torch.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * torch.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return torch.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    half_term1 = q._half_log_det() - p._half_log_det()
    combined_batch_shape = torch.broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                                                  p._unbroadcasted_scale_tril.shape[:-2])
    n = p.event_shape[0]
    q_scale_tril = q._unbroadcasted_scale_tril.expand(combined_batch_shape + (n, n))
    p_scale_tril = p._unbroadcasted_scale_tril.expand(combined_batch_shape + (n, n))
    term2 = torch.linalg.solve_triangular(q_scale_tril, p_scale_tril, upper=False)
    term2 = term2.pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
