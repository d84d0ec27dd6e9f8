"""``out=``: one wrapper, installed where the public namespaces are built, gives every
function torch gives ``out=`` (top level, ``linalg``, ``special``, ``fft``, ``nn.functional``)
torch's out semantics.

The function computes its result as usual, then the wrapper writes it into ``out`` and returns
``out`` (a tuple of tensors for multi-output functions, as the same named tuple). As torch:
``out`` must be a Tensor (a tuple/list of them); an ``out`` of another shape is resized (with
torch's deprecation warning when it had elements); the result is cast to ``out``'s dtype when
torch's rule allows it (no complex -> real, float -> integer, number -> bool), except for the
ops torch checks exactly (measured on torch 2.13: BLAS products, linalg, softmax, rounding and
sign, indices); factories take their dtype from ``out``; and with grad mode on, an argument or
``out`` that requires grad is refused. When ``out`` is not passed the wrapper only forwards the
call (one extra Python call on the top-level functions; operators and Tensor methods are not
wrapped).
"""

from __future__ import annotations

import functools
import sys
import warnings

from . import _dtype
from ._tensor import Tensor

# Functions whose torch 2.13 signature has ``out``, by namespace (from torch's
# _VariableFunctions.pyi, the docstrings' signature lines, and inspect for Python functions;
# tests/test_out.py checks this table against the installed torch).
OUT_NAMES = {
    "": """
        abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr alias_copy all amax
        amin aminmax angle any arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax
        argmin argsort as_strided_copy asin asinh atan atan2 atanh baddbmm batch_norm_elemt
        bernoulli bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift
        bitwise_xor bmm bucketize cat ccol_indices_copy ceil chain_matmul cholesky
        cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip col_indices_copy
        column_stack complex concat concatenate conj_physical copysign cos cosh cross
        crow_indices_copy cudnn_batch_norm cudnn_convolution cummax cummin cumprod cumsum deg2rad
        detach_copy diag diagonal_copy diff digamma div divide dot dstack empty eq erf erfc erfinv
        exp exp2 expand_copy expm1 eye fix float_power floor floor_divide fmax fmin fmod frac
        frexp frobenius_norm full gather gcd ge geqrf ger greater greater_equal gt hardshrink
        hash_tensor heaviside histc histogram histogramdd hspmm hstack hypot i0 igamma igammac
        index_add index_copy index_reduce index_select indices_copy inner inverse isin isneginf
        isposinf kron kthvalue lcm ldexp le lerp less less_equal lgamma linspace log log10 log1p
        log2 log_softmax logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or
        logical_xor logit logspace logsumexp lt lu_solve lu_unpack masked_select matmul
        matrix_power max maximum mean median min minimum mkldnn_adaptive_avg_pool2d mm mode msort
        mul multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum
        narrow_copy native_batch_norm ne neg negative nextafter nonzero nonzero_static norm normal
        not_equal nuclear_norm ones orgqr ormqr outer permute_copy polar polygamma pow prod qr
        quantile rad2deg rand randint randn randperm range reciprocal remainder renorm round
        row_indices_copy row_stack rsqrt saddmm scatter scatter_add scatter_reduce searchsorted
        select_copy sgn sigmoid sign signbit sin sinc sinh slice_copy slice_scatter slogdet
        softmax sort split_copy split_with_sizes_copy sqrt square squeeze_copy sspaddmm stack std
        std_mean sub subtract sum svd t_copy take take_along_dim tan tanh tensordot threshold topk
        transpose_copy triangular_solve tril triu true_divide trunc unbind_copy unfold_copy
        unsqueeze_copy values_copy var var_mean vdot view_as_complex_copy view_as_real_copy
        view_copy vstack where xlogy zeros""",
    "linalg": """
        cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh householder_product inv
        inv_ex ldl_factor ldl_factor_ex ldl_solve lu lu_factor lu_factor_ex lu_solve matmul
        matrix_norm matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex
        solve_triangular svd svdvals tensorinv tensorsolve vecdot vector_norm""",
    "special": """
        airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t
        chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc
        erfcx erfinv exp2 expit expm1 gammainc gammaincc gammaln hermite_polynomial_h
        hermite_polynomial_he i0 i0e i1 i1e laguerre_polynomial_l legendre_polynomial_p log1p
        log_ndtr logit logsumexp modified_bessel_i0 modified_bessel_i1 modified_bessel_k0
        modified_bessel_k1 multigammaln ndtr ndtri polygamma psi round scaled_modified_bessel_k0
        scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
        shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w sinc spherical_bessel_j0
        xlog1py xlogy zeta""",
    "fft": """
        fft fft2 fftfreq fftn hfft ifft ifft2 ifftn ihfft irfft irfft2 irfftn rfft rfft2 rfftfreq
        rfftn""",
    "nn.functional": """
        normalize""",
}

# Factories: the result's dtype comes from ``out`` unless ``dtype=`` is given (then both must
# match).
FACTORIES = frozenset("""empty eye ones zeros rand randn range arange full linspace logspace
    randint randperm""".split())

# Ops whose ``out`` must have the result's dtype exactly (torch checks them outside
# TensorIterator's casting): measured on torch 2.13 by calling each with a float64 out for
# float32 inputs.
EXACT = frozenset("""abs absolute addmm addmv addbmm baddbmm addr bmm mm mv matmul dot vdot
    inner isin alias_copy amax amin ceil conj_physical cross detach_copy diag
    diagonal_copy fix floor frac frobenius_norm hardshrink inverse lerp log_softmax softmax msort
    neg negative norm nuclear_norm round sgn sign slice_copy slice_scatter squeeze_copy t_copy
    take take_along_dim tensordot tril triu trunc unsqueeze_copy float_power heaviside histc
    logcumsumexp nan_to_num nanquantile quantile gather index_select masked_select
    linalg.cross linalg.det linalg.eigvalsh linalg.inv linalg.matmul linalg.matrix_norm
    linalg.multi_dot linalg.norm linalg.solve linalg.svdvals linalg.vecdot linalg.vector_norm
    linalg.cholesky linalg.solve_triangular linalg.lu_solve linalg.ldl_solve special.round
    """.split())

# Reductions with a ``dtype`` argument compute in out's dtype when ``dtype`` is not given
# (torch: ``sum(x, 0, out=long_tensor)`` sums x cast to int64), and check it exactly when it is.
DTYPE_FROM_OUT = frozenset("sum prod nansum cumsum cumprod".split())


def _bool_out(name, allow_uint8):
    def check(r, o, kwargs):
        if o == "bool" or (allow_uint8 and o == "uint8"):
            return None
        if allow_uint8:
            return f"{name} only supports bool tensor for result, got: {_SCALAR.get(o, o)}"
        return f"{name} does not support non-boolean outputs."
    return check


def _searchsorted_out(r, o, kwargs):
    if o == r:
        return None
    return ("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
            "Long(int64) depending on whether out_int32 flag is True, but we got output "
            f"tensor's dtype {_SCALAR.get(o, o)} and out_int32 flag is "
            f"{bool(kwargs.get('out_int32', False))}")


def _same_as_input(r, o, kwargs):
    if o == r:
        return None
    return (f"Expected the dtype for input and out to match, but got {_SCALAR.get(r, r)} for "
            f"input's dtype and {_SCALAR.get(o, o)} for out's dtype.")


def _floating_out(name):
    def check(r, o, kwargs):
        if o.startswith(("float", "bfloat", "complex")):
            return None
        return f"{name}(): Expected floating point type for result tensor, but got: " \
               f"{_SCALAR.get(o, o)}"
    return check


# Ops with their own out-dtype rule and message (measured on torch 2.13).
CHECKS = {"all": _bool_out("all", True), "any": _bool_out("any", True),
          "isneginf": _bool_out("isneginf", False), "isposinf": _bool_out("isposinf", False),
          "signbit": _bool_out("signbit", False), "searchsorted": _searchsorted_out,
          "bucketize": _searchsorted_out, "amax": _same_as_input, "amin": _same_as_input,
          "logsumexp": _floating_out("logsumexp"),
          "multinomial": lambda r, o, kw: None if o == "int64" else
          f"multinomial expects Long tensor out, got: {_SCALAR.get(o, o)}"}

# Ops whose int64 results are indices: their out must be int64 exactly.
INDEX_OPS = frozenset("""argmax argmin argsort sort topk kthvalue mode max min median nanmedian
    cummax cummin nonzero""".split())

_CPP = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
        "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
        "float16": "c10::Half", "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>",
        "complex128": "c10::complex<double>"}
_SCALAR = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
           "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "float16": "Half",
           "bfloat16": "BFloat16", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _np_name(t):
    return t._data.dtype.name


def _user_level():
    """The stack level of the first frame outside this file: the user's call."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


def _resize(name, out, shape):
    if out._view is not None:
        # torch resizes the view's storage, which its base shares (and may grow it): NumPy
        # cannot grow shared memory, so refuse rather than write somewhere else
        raise RuntimeError(f"{name}(): out= is a view of another tensor and has shape "
                           f"{list(out.shape)}, but the result has shape {list(shape)}; "
                           "graphgrad does not resize a view (torch resizes its storage, "
                           "deprecated): pass an out of the result's shape or a fresh tensor")
    if out.numel() != 0:
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(out.shape)}, which does not match the required output shape "
                      f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
                      "release outputs will not be resized unless they have zero elements. You "
                      "can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                      "elements with t.resize_(0).", UserWarning, stacklevel=_user_level())
    import numpy as np

    # new storage of the required shape; the copy below fills it and bumps the version
    out._data = np.zeros(tuple(shape), dtype=out._data.dtype)


def _write_one(name, qual, result, out, exact=False, kwargs=None):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    r, o = _np_name(result), _np_name(out)
    check = CHECKS.get(qual)
    if check is not None:
        message = check(r, o, kwargs or {})
        if message is not None:
            raise RuntimeError(message)
    elif r != o:
        if r == "int64" and name in INDEX_OPS:
            raise RuntimeError(f"Expected out tensor to have dtype long int, but got "
                               f"{_CPP.get(o, o)} instead")
        if exact or qual in EXACT:
            raise RuntimeError(f"Expected out tensor to have dtype {_CPP.get(r, r)}, but got "
                               f"{_CPP.get(o, o)} instead")
        if not _dtype.can_cast(result.dtype, out.dtype):
            raise RuntimeError(f"result type {_SCALAR.get(r, r)} can't be cast to the desired "
                               f"output type {_SCALAR.get(o, o)}")
    if out._data.shape != result._data.shape:
        _resize(name, out, result._data.shape)
    out.copy_(result)
    return out


def _requires_grad(result):
    if isinstance(result, Tensor):
        return result.requires_grad
    return isinstance(result, (tuple, list)) and any(_requires_grad(r) for r in result)


def _write(name, qual, result, out, exact=False, kwargs=None):
    if isinstance(result, Tensor):
        return _write_one(name, qual, result, out, exact, kwargs)
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != len(result):
        raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
    written = [_write(name, qual, r, o, exact, kwargs) for r, o in zip(result, out)]
    return type(result)(*written) if hasattr(result, "_fields") else tuple(written)


def _call(fn, name, qual, args, kwargs, out):
    from .autograd.grad_mode import is_grad_enabled
    from .ops import _dispatch

    if _dispatch._tracer is not None:
        # graphgrad.compile's replay would not redo the write into out (nor a resize): this
        # call breaks the graph and runs eagerly from here, visibly (compile's graph breaks)
        _dispatch._tracer.unsupported(f"{name}(out=...)")

    if name in FACTORIES and isinstance(out, Tensor):
        dtype = kwargs.get("dtype")
        if dtype is None:
            kwargs["dtype"] = out.dtype
        elif dtype != out.dtype:
            raise RuntimeError(f"dtype {_SCALAR.get(dtype.np.name, dtype)} does not match "
                               f"dtype of out parameter ({_SCALAR.get(_np_name(out))})")
    exact = False
    if qual in DTYPE_FROM_OUT and isinstance(out, Tensor):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype
        else:
            exact = True
    if qual == "logsumexp" and isinstance(out, Tensor) and out.is_floating_point() and args \
            and isinstance(args[0], Tensor) and args[0].is_floating_point():
        args = (args[0].to(out.dtype),) + tuple(args[1:])  # torch computes in out's dtype
    result = fn(*args, **kwargs)
    if is_grad_enabled():
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if _requires_grad(result) or any(isinstance(o, Tensor) and o.requires_grad
                                         for o in outs):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")
    return _write(name, qual, result, out, exact, kwargs)


def with_out(fn, name, qual=None):
    """``fn`` with torch's ``out=`` keyword (``qual``: the name with its namespace, as in
    ``EXACT``)."""
    qual = qual or name

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return _call(fn, name, qual, args, kwargs, out)

    call.__graphgrad_out__ = fn
    return call


def install(namespaces):
    """Wraps, in each namespace (a ``{"": graphgrad globals, "linalg": module, ...}`` entry),
    the functions of ``OUT_NAMES`` it defines. Returns the names wrapped per namespace."""
    wrapped = {}
    for key, names in OUT_NAMES.items():
        ns = namespaces.get(key)
        if ns is None:
            continue
        get = ns.get if isinstance(ns, dict) else (lambda n, ns=ns: getattr(ns, n, None))
        done = []
        for name in names.split():
            fn = get(name)
            if fn is None or isinstance(fn, type) or not callable(fn) or \
                    hasattr(fn, "__graphgrad_out__"):
                continue
            new = with_out(fn, name, f"{key}.{name}" if key else name)
            if isinstance(ns, dict):
                ns[name] = new
            else:
                setattr(ns, name, new)
            done.append(name)
        wrapped[key] = done
    return wrapped
