"""graphgrad: a PyTorch-compatible deep-learning framework on NumPy.

``import graphgrad as torch`` gives torch's names: tensors, ops, autograd and grad modes.
"""

from __future__ import annotations

import numpy as _np

from . import autograd, ops
from ._device import device
from ._dtype import (
    bfloat16,
    bool,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
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
from .ops.conv3d import conv3d, conv_transpose3d
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
from .ops.pooling3d import adaptive_max_pool1d_with_indices as adaptive_max_pool1d
from .ops.pooling3d import max_pool3d
from .ops.random import (
    Generator,
    bernoulli,
    binomial,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    normal,
    poisson,
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
from . import (  # noqa: E402  # noqa: E402
    compiler,  # noqa: E402
    distributed,
    distributions,
    fft,
    func,
    linalg,
    memory,
    nn,
    onnx,
    optim,
    profiler,
    signal,
    special,
    utils,
    viz,
)
from .compiler import compile  # noqa: E402
from .func import vmap  # noqa: E402
from .linalg import det, inverse, logdet, matrix_exp, matrix_power, pinverse  # noqa: E402
from .linalg import svd_legacy as svd  # noqa: E402
from .linalg import torch_cholesky as cholesky  # noqa: E402
from .linalg import torch_qr as qr  # noqa: E402
from .linalg import torch_slogdet as slogdet  # noqa: E402
from .nn._functional.loss_extra import TORCH_FUNCTIONS as _torch_losses  # noqa: E402
from .nn._functional.spatial_extra import (  # noqa: E402
    channel_shuffle,
    native_channel_shuffle,
    pdist,
    pixel_shuffle,
    pixel_unshuffle,
)
from .ops.complex import (  # noqa: E402
    angle,
    complex,
    conj,
    conj_physical,
    imag,
    is_conj,
    polar,
    real,
    resolve_conj,
    resolve_neg,
    view_as_complex,
    view_as_real,
)
from .ops.linalg_extra import (  # noqa: E402
    chain_matmul,
    cholesky_inverse,
    cholesky_solve,
    triangular_solve,
)
from .ops.linalg_householder import geqrf, orgqr, ormqr  # noqa: E402
from .ops.linalg_lu import lu_unpack  # noqa: E402
from .ops.linalg_lu import torch_lu as lu  # noqa: E402
from .ops.linalg_lu import torch_lu_solve as lu_solve  # noqa: E402
from .ops.spectral import istft, stft  # noqa: E402
from .ops.windows import (  # noqa: E402
    bartlett_window,
    blackman_window,
    hamming_window,
    hann_window,
    kaiser_window,
)
from .serialization import load, save  # noqa: E402
from .sparse import (  # noqa: E402 - also binds torch.sparse
    sparse_bsc,
    sparse_bsr,
    sparse_coo_tensor,
    sparse_csc,
    sparse_csr,
    sparse_csr_tensor,
    spmm,
)
from .sparse._extras import (  # noqa: E402
    ccol_indices_copy,
    col_indices_copy,
    crow_indices_copy,
    dsmm,
    hsmm,
    hspmm,
    indices_copy,
    resize_as_sparse_,
    row_indices_copy,
    saddmm,
    smm,
    sparse_bsc_tensor,
    sparse_bsr_tensor,
    sparse_compressed_tensor,
    sparse_csc_tensor,
    sspaddmm,
    values_copy,
)

globals().update(_torch_losses)

# torch's top-level namespaces and switches for scripts written against a CPU torch build
# (see docs/compat.md): cuda/backends answer as a CPU-only build, jit and amp are shims.
from . import (  # noqa: E402 - accelerator, mps, xpu, version: CPU-build answers
    accelerator,
    amp,
    backends,
    cpu,
    cuda,
    futures,
    hub,
    jit,
    mps,
    random,
    testing,
    torch_version,
    types,
    version,
    xpu,
)
from ._asarray import asarray, empty_strided, from_dlpack, frombuffer  # noqa: E402
from ._constants import e, inf, nan, newaxis, pi  # noqa: E402
from ._finfo import finfo, iinfo  # noqa: E402
from ._flags import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_default_device,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    set_default_device,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_warn_always,
    use_deterministic_algorithms,
)
from ._legacy_types import (  # noqa: E402
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
)
from ._queries import (  # noqa: E402
    is_complex,
    is_floating_point,
    is_storage,
    is_tensor,
    numel,
    typename,
)
from ._threads import (  # noqa: E402
    get_num_interop_threads,
    get_num_threads,
    set_num_interop_threads,
    set_num_threads,
)
from .amp.autocast_mode import (  # noqa: E402
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .futures import Future  # noqa: E402
from .random import thread_safe_generator  # noqa: E402
from .torch_version import TorchVersion as _TorchVersion  # noqa: E402

__version__ = _TorchVersion("0.1.0")  # compares as a version, as torch.__version__

# torch's remaining top-level names: ATen-signature functional aliases, small utilities,
# gradient, low-rank SVD/PCA, storages and extra samplers.
from . import _random_fills, _storage, multiprocessing  # noqa: E402, F401
from ._api_extras import *  # noqa: E402, F403 - get_device_module, sym_*, has_*, ...
from ._api_extras import _install as _install_extras  # noqa: E402
from ._functional_aliases import *  # noqa: E402, F403 - torch.dropout, torch.batch_norm, ...
from ._gradient import gradient  # noqa: E402
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402
from ._storage import TypedStorage, UntypedStorage  # noqa: E402
from ._toplevel_misc import *  # noqa: E402, F403 - detach, fill, range, frexp, histogramdd, ...

_install_extras(globals())  # Tensor.is_xpu/is_mps/..., the *_copy view variants
del _install_extras
# torch's deprecated positional overloads (x.add_(2, y), torch.addmm(beta, M, a, b), ...) and
# out= on every function torch gives it, each wrapped once here.
from ._deprecated_overloads import install as _install_deprecated  # noqa: E402
from ._out import install as _install_out  # noqa: E402

_install_deprecated(globals())
del _install_deprecated

_install_out({"": globals(), "linalg": linalg, "special": special, "fft": fft,
              "nn.functional": nn.functional})
del _install_out
from . import functional, storage  # noqa: E402, F401 - torch.functional, torch.storage

# NOTE: torch computes log(0), 1/0 and overflow silently (as IEEE results); NumPy would warn on
# every such op. graphgrad follows torch, so these floating-point warnings are off in NumPy's
# error state for the importing thread.
_np.seterr(divide="ignore", invalid="ignore", over="ignore")
