"""graphgrad: a PyTorch-compatible deep-learning framework on NumPy.

``import graphgrad as torch`` gives torch's names: tensors, ops, autograd and grad modes.
"""

from __future__ import annotations

import numpy as _np

from . import autograd, ops
from ._device import device
from ._dtype import (
    bool,
    can_cast,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from ._tensor import Size, Tensor
from ._tensor_str import get_printoptions, set_printoptions
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops import EXPORTING_FAMILIES as _families
from .ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from .ops.creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    ones,
    ones_like,
    scalar_tensor,
    tensor,
    zeros,
    zeros_like,
)
from .ops.elementwise import (
    abs,
    absolute,
    add,
    allclose,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    ceil,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    cos,
    div,
    divide,
    eq,
    equal,
    erf,
    exp,
    exp2,
    expm1,
    fix,
    floor,
    floor_divide,
    ge,
    greater,
    greater_equal,
    gt,
    isclose,
    isfinite,
    isinf,
    isnan,
    le,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mul,
    multiply,
    ne,
    neg,
    negative,
    not_equal,
    pow,
    reciprocal,
    relu,
    remainder,
    round,
    rsqrt,
    rsub,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    sub,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
    where,
)
from .ops.indexing import nonzero
from .ops.linalg import bmm, dot, ger, inner, matmul, mm, mv, outer
from .ops.movement import (
    broadcast_shapes,
    cat,
    chunk,
    clone,
    concat,
    concatenate,
    flatten,
    flip,
    hstack,
    narrow,
    permute,
    reshape,
    select,
    split,
    squeeze,
    stack,
    swapaxes,
    swapdims,
    t,
    transpose,
    unbind,
    unflatten,
    unsqueeze,
    vstack,
)
from .ops.nn import log_softmax, softmax
from .ops.pooling import avg_pool1d, max_pool1d, max_pool1d_with_indices, max_pool2d
from .ops.random import (
    Generator,
    bernoulli,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)
from .ops.reduce import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    return_types,
    std,
    sum,
    var,
)
from .ops.resample import adaptive_avg_pool1d

for _family in _families:
    for _name in _family.__all__:
        globals()[_name] = getattr(_family, _name)
del _family, _families

# After the ops they re-export: nn, optim, data loading (torch.utils.data), checkpoints, and
# the memory ledger with the retention detector.
from . import (  # noqa: E402
    compiler,  # noqa: E402
    distributed,
    linalg,
    memory,
    nn,
    onnx,
    optim,
    utils,
    viz,
)
from .compiler import compile  # noqa: E402
from .linalg import det, inverse, logdet, matrix_power, pinverse  # noqa: E402
from .linalg import svd_legacy as svd  # noqa: E402
from .linalg import torch_cholesky as cholesky  # noqa: E402
from .linalg import torch_qr as qr  # noqa: E402
from .linalg import torch_slogdet as slogdet  # noqa: E402
from .serialization import load, save  # noqa: E402

__version__ = "0.1.0"

# NOTE: torch computes log(0), 1/0 and overflow silently (as IEEE results); NumPy would warn on
# every such op. graphgrad follows torch, so these floating-point warnings are off in NumPy's
# error state for the importing thread.
_np.seterr(divide="ignore", invalid="ignore", over="ignore")
