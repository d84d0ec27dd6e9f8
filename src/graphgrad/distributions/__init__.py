"""Probability distributions with torch.distributions' API: sampling (reparameterized where
torch's is), log_prob, entropy, moments, constraints and argument validation, transforms, and
KL divergences. Sampling uses graphgrad's generator, so seeds reproduce graphgrad's draws, not
torch's (see docs/compat.md)."""

from . import _kl_extra, _kl_lowrank, constraints, transforms  # noqa: F401 - _kl_*: KL pairs
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical
from .cauchy import Cauchy
from .constraint_registry import biject_to, transform_to
from .constraints import Constraint
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Binomial, Poisson
from .dirichlet import Beta, Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential, Laplace
from .fishersnedecor import FisherSnedecor
from .gamma import Chi2, Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half import HalfCauchy, HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .lkj_cholesky import LKJCholesky
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .pareto import Pareto
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .straight_through import OneHotCategoricalStraightThrough
from .studentt import StudentT
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
           "Categorical", "Cauchy", "Chi2", "ComposeTransform", "Constraint",
           "ContinuousBernoulli", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "Dirichlet", "Distribution", "ExpTransform", "Exponential", "ExponentialFamily",
           "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy",
           "HalfNormal", "Independent", "IndependentTransform", "InverseGamma", "Kumaraswamy",
           "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal",
           "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
           "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "Pareto", "Poisson", "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "VonMises",
           "Weibull", "Wishart", "biject_to", "constraints", "identity_transform",
           "kl_divergence", "register_kl", "transform_to", "transforms"]
