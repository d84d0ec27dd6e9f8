"""Stateless neural-network functions, as ``torch.nn.functional`` (activations, padding, ...).

The ops themselves live in the op table (``graphgrad.ops``); this module gives them torch's
``F.<name>`` spelling. Where torch's functional form takes ``inplace=``, ``inplace=True`` runs
the in-place form (``F.elu_``), which writes into ``input`` and returns it.
"""

from __future__ import annotations

from ..ops import activation as _act
from ..ops.activation import (
    celu_,
    elu_,
    gelu,
    hardtanh_,
    leaky_relu_,
    logsigmoid,
    relu_,
    selu_,
    softplus,
    softsign,
    tanhshrink,
)
from ..ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d, fold, unfold
from ..ops.elementwise import relu as _relu
from ..ops.elementwise import sigmoid, tanh
from ..ops.embedding import embedding
from ..ops.gather import one_hot
from ..ops.pooling import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
)
from ..ops.resample import adaptive_avg_pool1d, adaptive_avg_pool2d, interpolate
from ..ops.structure import pad
from ._functional.activation import (
    glu,
    hardshrink,
    log_softmax,
    prelu,
    rrelu,
    rrelu_,
    softmax,
    softmin,
    softshrink,
    threshold,
    threshold_,
)
from ._functional.attention import (
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from ._functional.distance import cosine_similarity, normalize, pairwise_distance
from ._functional.dropout import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from ._functional.embedding_bag import embedding_bag
from ._functional.linear import bilinear, linear
from ._functional.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    gaussian_nll_loss,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
)
from ._functional.loss_extra import (
    ctc_loss,
    multilabel_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._functional.margin_loss import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from ._functional.normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    rms_norm,
)
from ._functional.sampling import affine_grid, grid_sample, gumbel_softmax

__all__ = ["linear", "bilinear",
           "softmax", "log_softmax", "relu", "relu_", "sigmoid", "tanh", "elu", "elu_", "selu",
           "selu_", "celu", "celu_", "gelu", "silu", "mish", "hardtanh", "hardtanh_", "relu6",
           "leaky_relu", "leaky_relu_", "hardsigmoid", "hardswish", "softplus", "softsign",
           "tanhshrink", "logsigmoid", "one_hot", "pad",
           "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold",
           "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "interpolate"]
__all__ += ["batch_norm", "instance_norm", "layer_norm", "group_norm", "local_response_norm",
            "embedding", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
            "feature_alpha_dropout", "normalize", "cosine_similarity", "pairwise_distance",
            "rms_norm"]
__all__ += ["threshold", "threshold_", "rrelu", "rrelu_", "hardshrink", "softshrink", "glu",
            "prelu", "softmin"]
__all__ += ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
            "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
            "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss",
            "hinge_embedding_loss", "soft_margin_loss", "cosine_embedding_loss",
            "triplet_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss"]


def relu(input, inplace=False):
    return relu_(input) if inplace else _relu(input)


def elu(input, alpha=1.0, inplace=False):
    return (elu_ if inplace else _act.elu)(input, alpha)


def selu(input, inplace=False):
    return (selu_ if inplace else _act.selu)(input)


def celu(input, alpha=1.0, inplace=False):
    return (celu_ if inplace else _act.celu)(input, alpha)


def silu(input, inplace=False):
    return (_act.silu_ if inplace else _act.silu)(input)


def mish(input, inplace=False):
    return (_act.mish_ if inplace else _act.mish)(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return (hardtanh_ if inplace else _act.hardtanh)(input, min_val, max_val)


def relu6(input, inplace=False):
    """``hardtanh(input, 0, 6)``."""
    return hardtanh_(input, 0.0, 6.0) if inplace else _act.relu6(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return (leaky_relu_ if inplace else _act.leaky_relu)(input, negative_slope)


def hardsigmoid(input, inplace=False):
    return (_act.hardsigmoid_ if inplace else _act.hardsigmoid)(input)


def hardswish(input, inplace=False):
    return (_act.hardswish_ if inplace else _act.hardswish)(input)


__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]

# 3-d convolution and pooling, and the spatial composites (pixel shuffle, unpooling, ...)
from ..ops import pooling3d as _pooling3d  # noqa: E402
from ..ops.conv3d import conv3d, conv_transpose3d  # noqa: E402
from ..ops.pooling3d import *  # noqa: E402, F403 - listed in pooling3d.__all__
from ._functional import fractional_pool as _fractional_pool  # noqa: E402
from ._functional import spatial_extra as _spatial_extra  # noqa: E402
from ._functional.fractional_pool import *  # noqa: E402, F403
from ._functional.spatial_extra import *  # noqa: E402, F403 - listed in spatial_extra.__all__

__all__ += ["conv3d", "conv_transpose3d", *_pooling3d.__all__, *_spatial_extra.__all__,
            *_fractional_pool.__all__]
__all__ += ["embedding_bag"]
__all__ += ["gumbel_softmax", "affine_grid", "grid_sample"]
__all__ += ["ctc_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss"]
