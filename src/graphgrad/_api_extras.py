"""Top-level names and Tensor attributes that torch programs touch on a CPU build, beyond the
op families: the device flags (``is_xpu``, ``is_mps``, ...), ``get_device_module``, the build
flags (``has_lapack``, ...), the ``sym_*`` helpers on plain Python numbers, the ``*_copy``
variants of view ops, ``nonzero_static``, ``empty_permuted`` and the methods torch keeps only to
raise (``lstsq``, ``solve``, ``symeig``, ``eig``)."""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from ._tensor import Tensor, wrap

__all__ = ["get_device_module", "has_lapack", "has_mkl", "has_openmp", "has_spectral",
           "init_num_threads", "is_vulkan_available", "is_distributed", "is_neg",
           "AcceleratorError", "OutOfMemoryError", "GradScaler", "sym_int", "sym_float",
           "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum", "sym_ite", "SymInt",
           "SymFloat", "SymBool", "nonzero_static", "empty_permuted", "norm_except_dim",
           "unsafe_split_with_sizes", "sym_constrain_range", "sym_constrain_range_for_size",
           "sym_fresh_size"]

# ``*_copy(...)`` is the view op ``*`` followed by a copy, so the result never aliases input.
_COPY_OF = ("alias", "as_strided", "detach", "diagonal", "expand", "permute", "select",
            "split", "split_with_sizes", "squeeze", "t", "transpose", "unbind", "unfold",
            "unsqueeze", "view", "view_as_complex", "view_as_real")


class AcceleratorError(RuntimeError):
    """``torch.AcceleratorError``: an accelerator failed (never raised here: there is none)."""


def _out_of_memory_error():
    from .cuda import OutOfMemoryError as err

    return err


OutOfMemoryError = _out_of_memory_error()


def _grad_scaler():
    from .amp import GradScaler as scaler

    return scaler


GradScaler = _grad_scaler()

has_lapack = True  # NumPy's linalg is LAPACK
has_spectral = True  # NumPy's pocketfft
has_openmp = False  # graphgrad's kernels are NumPy's (and numba's own pool under compile)


def _has_mkl():
    from .backends import mkl

    return bool(mkl.is_available())


has_mkl = _has_mkl()


def init_num_threads() -> None:
    """Nothing to initialise: NumPy's BLAS pool starts with the process."""


def is_vulkan_available() -> bool:
    return False


def _check_tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def is_distributed(input) -> bool:
    _check_tensor("is_distributed", input)
    return False


def is_neg(input) -> bool:
    """Whether ``input`` is a lazily negated view: graphgrad negates eagerly, so False."""
    _check_tensor("is_neg", input)
    return False


def get_device_module(device=None):
    """The module of a device type (``graphgrad.cpu`` for None or ``"cpu"``, ``graphgrad.cuda``
    for ``"cuda"``, ...), as torch's."""
    import graphgrad

    from ._device import device as _device

    if device is None:
        name = "cpu"
    elif isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = _device(device).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    mod = getattr(graphgrad, name, None)
    if mod is None or not hasattr(mod, "is_available"):
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.")
    return mod


# -- sym_* on plain Python numbers: graphgrad has no symbolic shapes ---------------------------
class _NoSymbolic:
    """torch's symbolic number classes; graphgrad traces with concrete shapes, so no value is
    ever one of these (isinstance checks are False) and making one raises."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"torch.{type(self).__name__}: graphgrad has no symbolic "
                                  "shapes (graphgrad.compile guards on concrete shapes)")


class SymInt(_NoSymbolic):
    pass


class SymFloat(_NoSymbolic):
    pass


class SymBool(_NoSymbolic):
    pass


def sym_int(a):
    return math.trunc(a) if isinstance(a, float) else builtins.int(a)


def sym_float(a):
    return builtins.float(a)


def sym_max(a, b):
    r = builtins.max(a, b)
    return builtins.float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_min(a, b):
    r = builtins.min(a, b)
    return builtins.float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_not(a):
    return not a


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(args):
    return builtins.sum(args)


def sym_ite(b, t, f):
    return t if b else f


def sym_constrain_range(size, min=None, max=None):  # noqa: A002 - torch's names
    """Checks a concrete size against ``[min, max]`` (graphgrad's sizes are never symbolic)."""
    lo = -math.inf if min is None else min
    hi = math.inf if max is None else max
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{min}, {max}].")


def sym_constrain_range_for_size(size, min=None, max=None):  # noqa: A002
    if min is not None or max is not None:
        sym_constrain_range(size, min, max)


def sym_fresh_size(expr):
    return expr


# -- small functions -----------------------------------------------------------------------------
def nonzero_static(input, *, size, fill_value=-1):
    """The first ``size`` rows of ``nonzero(input)``, padded with ``fill_value``: a result whose
    shape does not depend on the data."""
    _check_tensor("nonzero_static", input)
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    idx = np.argwhere(input._data)[:size]
    out = np.full((size, input._data.ndim), fill_value, dtype=np.int64)
    out[:idx.shape[0]] = idx
    return wrap(out, False, None)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """A zero-filled tensor of logical shape ``size`` whose memory is laid out in the dim order
    ``physical_layout`` (outermost first), as torch's strides show."""
    from .ops.creation import zeros

    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    base = zeros(tuple(size[d] for d in order), dtype=dtype, requires_grad=False)
    inverse = [order.index(d) for d in builtins.range(len(size))]
    out = base.permute(*inverse).detach()
    if requires_grad:
        out.requires_grad_(True)
    return out


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 - torch's name
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (``dim=-1``:
    the norm of all of ``v``); weight normalisation's norm."""
    from .ops.linalg_norms import vector_norm

    if dim == -1:
        return vector_norm(v, pow)
    dims = tuple(d for d in builtins.range(v.dim()) if d != dim)
    return vector_norm(v, pow, dims, keepdim=True)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return input.split_with_sizes(split_sizes, dim)


def _make_copy(name):
    def copy_variant(input, *args, **kwargs):
        import graphgrad

        fn = getattr(graphgrad, name, None) or getattr(Tensor, name)
        view = fn(input, *args, **kwargs)
        if isinstance(view, (tuple, list)):
            return type(view)(v.clone() for v in view)
        return view.clone()

    copy_variant.__name__ = copy_variant.__qualname__ = f"{name}_copy"
    copy_variant.__doc__ = f"``torch.{name}_copy``: ``torch.{name}`` without aliasing input."
    return copy_variant


def _alias(input):
    return input.view_as(input)


def _slice(input, dim=0, start=None, end=None, step=1):
    key = [builtins.slice(None)] * input.dim()
    key[dim] = builtins.slice(start, end, step)
    return input[tuple(key)]


# -- Tensor attributes ---------------------------------------------------------------------------
_MTIA = ("Torch not compiled with MTIA enabled. Ensure you have `import "
         "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
         "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")


def _module_to(kind):
    def to_device(self, device=None):
        # as torch's: each parameter and buffer moves, so a module with tensors raises there
        for t in list(self.parameters()) + list(self.buffers()):
            getattr(t, kind)()
        return self

    to_device.__name__ = kind
    return to_device


def _no_device(kind, exc=AssertionError, text=None):
    def to_device(self, device=None, non_blocking=False, memory_format=None):
        raise exc(text or f"Torch not compiled with {kind} enabled")

    to_device.__name__ = kind.lower()
    return to_device


_REMOVED = {
    "lstsq": "This function was deprecated since version 1.9 and is now removed. `torch.lstsq` "
             "is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
             "reversed arguments and does not return the QR decomposition in the returned tuple "
             "(although it returns other information about the problem).\n\nTo get the QR "
             "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
             "`torch.lstsq` stored the residuals of the solution in the last m - n columns of "
             "the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in "
             "the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
             "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be "
             "replaced with:\nX = torch.linalg.lstsq(A, B).solution",
    "solve": "This function was deprecated since version 1.9 and is now removed. `torch.solve` "
             "is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
             "arguments reversed and does not return the LU factorization.\n\nTo get the LU "
             "factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
             "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
             "torch.linalg.solve(A, B)",
    "symeig": "This function was deprecated since version 1.9 and is now removed. The default "
              "behavior has changed from using the upper triangular portion of the matrix by "
              "default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, "
              "upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if "
              "upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be "
              "replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    "eig": "This function was deprecated since version 1.9 and is now removed. "
           "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
           "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
           "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
           "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
           "torch.linalg.eig(A)",
}


def _removed(name):
    def removed(*args, **kwargs):
        raise RuntimeError(_REMOVED[name])

    removed.__name__ = name
    return removed


def _map2_(self, x, y, callable):  # noqa: A002 - torch's name
    """``self[i] = callable(self[i], x[i], y[i])`` elementwise, with broadcasting of x and y."""
    a = self._data
    xb = np.broadcast_to(x._data, a.shape)
    yb = np.broadcast_to(y._data, a.shape)
    out = np.array([callable(p, q, r) for p, q, r in zip(a.reshape(-1).tolist(),
                                                        xb.reshape(-1).tolist(),
                                                        yb.reshape(-1).tolist())])
    with _no_grad():
        self.copy_(wrap(out.reshape(a.shape).astype(a.dtype), False, None))
    return self


def _no_grad():
    from .autograd.grad_mode import no_grad

    return no_grad()


def _dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (by stride, stable for ties)."""
    strides = self.stride()
    return tuple(sorted(builtins.range(self.dim()), key=lambda d: -strides[d]))


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return self.detach().clone().resize_(*sizes)


def _resize_as(self, other):
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return self.detach().clone().resize_(other.shape)


def _clone_state(self):
    from .ops.random import Generator

    twin = Generator(self.device)
    twin.set_state(self.get_state())
    return twin


def _no_offset(self, *args):
    raise RuntimeError("CPU Generator does not use offset")


def _graphsafe(name):
    def method(self, *args):
        raise NotImplementedError(f"{name} is not supported in this Generator")

    method.__name__ = name
    return method


def _install(namespace):
    """Binds the Tensor attributes and the ``*_copy`` functions (called by graphgrad's
    ``__init__`` once every view op exists)."""
    from . import _dtype

    T = Tensor
    for flag in ("is_xpu", "is_mps", "is_ipu", "is_maia", "is_mtia", "is_vulkan", "is_xla"):
        if not hasattr(T, flag):
            setattr(T, flag, property(lambda self: False))
    T.xpu = _no_device("XPU")
    T.mtia = _no_device("MTIA", AssertionError, _MTIA)
    T.ipu = _no_device("IPU", RuntimeError, "PyTorch is not linked with support for ipu devices")
    from .nn import Module
    from .ops.random import Generator

    Generator.clone_state = _clone_state
    Generator.get_offset = Generator.set_offset = _no_offset
    for name in ("graphsafe_get_state", "graphsafe_set_state"):
        setattr(Generator, name, _graphsafe(name))
    for kind in ("xpu", "mtia", "ipu"):
        if not hasattr(Module, kind):
            setattr(Module, kind, _module_to(kind))
    T.is_neg = lambda self: False
    T.is_distributed = lambda self: False
    T.map2_ = _map2_
    T.cfloat = lambda self, memory_format=None: self.to(_dtype.complex64)
    T.cdouble = lambda self, memory_format=None: self.to(_dtype.complex128)
    T.const_data_ptr = lambda self: self.data_ptr()
    T.dim_order = _dim_order
    T.volatile = property(_volatile)
    T.nonzero_static = nonzero_static
    T.unsafe_split_with_sizes = unsafe_split_with_sizes
    T.is_set_to = lambda self, tensor: (self.data_ptr() == tensor.data_ptr()
                                        and self.shape == tensor.shape
                                        and self.stride() == tensor.stride())
    if hasattr(T, "resize_"):
        T.resize = _resize
        T.resize_as = _resize_as
    for name in _REMOVED:
        setattr(T, name, _removed(name))
        namespace[name] = _removed(name)
    for name in ("stft", "istft"):
        if name in namespace and not hasattr(T, name):
            setattr(T, name, namespace[name])
    namespace.setdefault("alias", _alias)
    namespace["legacy_contiguous_format"] = namespace["contiguous_format"]  # the same, as torch
    for name in ("addmv_", "resize_as_", "conj_physical_", "as_strided_"):  # torch.f_(t, ...)
        if name not in namespace and hasattr(T, name):
            namespace[name] = getattr(T, name)
    namespace["slice_copy"] = lambda input, dim=0, start=None, end=None, step=1: _slice(
        input, dim, start, end, step).clone()
    for name in _COPY_OF:
        if name in namespace or hasattr(T, name):
            namespace[f"{name}_copy"] = _make_copy(name)
