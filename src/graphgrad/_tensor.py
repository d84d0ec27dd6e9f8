"""Tensor: an n-dimensional array with a place in the autograd graph.

A Tensor holds its data as a backend array (``_data``), whether it requires grad (``_rg``), the
Node that made it (``grad_fn``, None for leaves) and its ``.grad``. Ops and most methods are
attached by the op-family modules in ``graphgrad.ops``, next to their definitions.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import _dtype, _meta
from ._device import CPU, check_device
from .autograd import cuts as _cuts
from .autograd import sites as _sites
from .autograd.grad_mode import state as _mode
from .autograd.graph import AccumulateGrad, OutputEdge, register_tensor_hook
from .diagnostics import ledger as ledger_module

__all__ = ["Tensor", "Size", "wrap"]


# torch's names for a dtype in the grad setter's error: C++ type names, then ScalarType names
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
              "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


class Size(tuple):
    """A tensor's shape, printed as torch prints it: ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


_new = object.__new__
_ledger = ledger_module.ledger
_track = ledger_module.track


def wrap(data, requires_grad, grad_fn):
    """Makes a Tensor around an ndarray without copying (the dispatcher's fast path)."""
    if data.nbytes >= _ledger.min_bytes:
        _track(data)
    t = _new(Tensor)
    t._data = data
    t._rg = requires_grad
    t._fn = grad_fn
    t._grad = None
    t._accum = None
    t._inf = _mode.inference
    t._extra = None
    t._vc = None  # the version cell, shared with views; created on first need
    t._view = None  # for a view: [base, chain of (op, params), creation, version seen]
    return t


def _refresh_view(t):
    """Replaced by graphgrad.ops.views.refresh once the op table is loaded."""


def version_cell(t):
    """The list holding ``t``'s version (and the site of its last in-place change), shared by
    ``t`` and its views."""
    cell = t._vc
    if cell is None:
        cell = t._vc = [0]
    return cell


def bump_version(t) -> None:
    """Counts an in-place write into ``t``'s storage and remembers the user's line that made
    it, for the error raised if a saved copy is used later (Note [Saved versions]). In-place
    writes are rare enough on hot paths for the frame walk to be affordable."""
    cell = version_cell(t)
    cell[0] += 1
    site = _sites.capture(2)
    if len(cell) == 1:
        cell.append(site)
    else:
        cell[1] = site


class Tensor:
    """A multi-dimensional array that records the ops applied to it.

    >>> import graphgrad as torch
    >>> w = torch.tensor(3.0, requires_grad=True)
    >>> loss = (2 * w - 10) ** 2
    >>> loss.backward()
    >>> w.grad
    tensor(-16.)
    """

    __slots__ = ("_data", "_rg", "_fn", "_grad", "_accum", "_inf", "_extra", "_vc", "_view",
                 "__weakref__")
    __array_priority__ = 1000  # so ndarray <op> Tensor defers to Tensor's reflected operators

    def __new__(cls, *args, **kwargs):
        # Legacy constructor: Tensor(data) or Tensor(*sizes) makes a default-float tensor.
        from .ops import creation

        if len(args) == 1 and not isinstance(args[0], int):
            return creation.tensor(args[0], dtype=_dtype.get_default_dtype())
        return creation.empty(*(args or (0,)), **kwargs)  # Tensor() is tensor([])

    # -- autograd attributes -------------------------------------------------------------
    @property
    def grad_fn(self):
        """The Node that made this tensor (None for a leaf)."""
        if self._view is not None:
            _refresh_view(self)
        fn = self._fn
        return fn._node if type(fn) is OutputEdge else fn  # output i of a custom Function

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._fn = node

    @property
    def _base(self):
        """The tensor whose storage this view shares (None if this is not a view)."""
        return None if self._view is None else self._view[0]

    def _is_view(self) -> bool:
        return self._view is not None

    @property
    def requires_grad(self) -> bool:
        if self._view is not None:
            _refresh_view(self)
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            msg = "you can only change requires_grad flags of leaf variables."
            if not value:
                msg += (" If you want to use a computed variable in a subgraph that doesn't "
                        "require differentiation use var_no_grad = var.detach().")
            raise RuntimeError(msg)
        self._set_requires_grad(bool(value))

    def _set_requires_grad(self, value: bool) -> None:
        if value and self._data.dtype.kind not in "fcV":  # V: bfloat16
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if value and self._inf and not _mode.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        if self._rg and not value:
            _cuts.note("requires_grad_false", self, 2)
        self._rg = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and self._data.dtype.kind not in "fcV":  # V: bfloat16
            # torch words the method's error differently from the setter's
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._set_requires_grad(bool(requires_grad))
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self.retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.",
                UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value._data.dtype != self._data.dtype:  # torch checks the dtype first
                have, want = value._data.dtype.name, self._data.dtype.name
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_CPP_NAMES.get(have, have)}' "
                    f"to a tensor with grad_dtype '{_SCALAR_NAMES.get(want, want)}'. The gradient "
                    "must match the tensor's grad_dtype (defaults to the tensor's dtype)")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size "
                                   f"'{list(value._data.shape)}' to a tensor of size "
                                   f"'{list(self._data.shape)}'. Please ensure that the gradient "
                                   "and the tensor are the same size")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return bool(self._extra and self._extra.get("retains_grad"))

    def retain_grad(self) -> None:
        """Keeps ``.grad`` for a non-leaf tensor after backward."""
        if self.grad_fn is None:
            if not self._rg:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self.retains_grad:
            return
        if self._extra is None:
            self._extra = {}
        self._extra["retains_grad"] = True
        self._fn._extra_dict()["retain"] = weakref.ref(self)

    def register_hook(self, hook):
        """Registers ``hook(grad)``, run when this tensor's gradient is computed; it may return
        a replacement. Returns a handle with ``remove()``.

        >>> import graphgrad as torch
        >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> (x * 3).sum().backward()
        >>> x.grad
        tensor([6., 6.])
        """
        return register_tensor_hook(self, "hooks", hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Registers ``hook(tensor)`` on a leaf, run after its ``.grad`` was accumulated."""
        return register_tensor_hook(self, "post_acc", hook)

    def _accumulator(self):
        """This leaf's AccumulateGrad node, shared by every op that uses the leaf."""
        acc = self._accum() if self._accum is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._accum = weakref.ref(acc)
        return acc

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Computes the gradient of this tensor w.r.t. graph leaves (see ``autograd.backward``)."""
        _engine.backward((self,), None if gradient is None else (gradient,), retain_graph,
                 create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing this one's data (and version counter), outside the graph."""
        if self._fn is not None or self._rg:
            _cuts.note("detach", self)  # See Note [Cut record] in autograd/cuts.py
        t = wrap(self._data, False, None)
        t._vc = version_cell(self)
        t._inf = self._inf  # shares storage: an inference tensor iff this one is
        return t

    def detach_(self) -> Tensor:
        if self._view is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._rg = False
        return self

    @property
    def data(self) -> Tensor:
        if self._fn is not None:
            _cuts.note("data", self)
        return wrap(self._data, False, None)

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data

    @property
    def _version(self) -> int:
        return 0 if self._vc is None else self._vc[0]

    def is_inference(self) -> bool:
        return self._inf

    # -- metadata --------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        from .ops._util import wrap_dim

        return self._data.shape[wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype._FROM_NP[self._data.dtype]

    @property
    def device(self):
        if _meta.arrays and _meta.is_meta(self):
            return _meta.META
        return CPU

    @property
    def is_meta(self) -> bool:
        return bool(_meta.arrays) and _meta.is_meta(self)

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind in "fV"  # V: bfloat16 (ml_dtypes)

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_contiguous(self, memory_format=None) -> bool:
        return self._data.flags.c_contiguous

    def stride(self, dim=None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def data_ptr(self) -> int:
        return self._data.ctypes.data

    def get_device(self) -> int:
        return -1

    # -- conversion ------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        if _meta.arrays:
            _meta.check_readable(self, "numpy")
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if force and self._fn is not None:
            _cuts.note("numpy", self)
        return self._data

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        if self._fn is not None:
            _cuts.note("item", self)
        if _meta.arrays:
            _meta.check_readable(self, "item")
        return self._data.reshape(()).item()

    def tolist(self):
        if _meta.arrays:
            _meta.check_readable(self, "tolist")
        if self._fn is not None:
            _cuts.note("tolist", self)
        return self._data.tolist()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        n = self._data.size
        if n != 1:
            qualifier = "no values" if n == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {qualifier} is ambiguous")
        if _meta.arrays:
            _meta.check_readable(self, "item")
        return bool(self._data.reshape(()))

    def __float__(self) -> float:
        return float(self._scalar_value())

    def __int__(self) -> int:
        return int(self._scalar_value())

    def _scalar_value(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if _meta.arrays:
            _meta.check_readable(self, "item")
        return self._data.reshape(()).item()

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        from ._tensor_str import format_tensor

        fn = self.grad_fn
        if _meta.arrays and _meta.is_meta(self):
            return _meta.format_meta(self, fn)
        return format_tensor(self._data, dtype_name=self._data.dtype.name,
                             requires_grad=self._rg,
                             grad_fn_name=None if fn is None else type(fn).__name__,
                             is_leaf=fn is None)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)  # str(self); a format spec is a TypeError

    def __reduce_ex__(self, protocol):
        from .ops.creation import _from_state

        return (_from_state, (self._data, self._rg))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        t = wrap(self._data.copy(), self._rg, None)
        if self._grad is not None:
            t._grad = wrap(self._grad._data.copy(), False, None)
        memo[id(self)] = t
        return t

    # -- dtype / device ---------------------------------------------------------------------
    def to(self, *args, **kwargs) -> Tensor:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; ``copy=``."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, (str,)) or type(a).__name__ == "device":
                device = a
            elif isinstance(a, bool):
                copy = a  # the positional non_blocking flag of to(dtype, non_blocking, copy)
            else:
                raise TypeError(f"to() received an invalid argument {a!r}")
        if _meta.arrays or device is not None:
            if str(device) == "meta":  # See _meta.py: shape and dtype, no data
                return _meta.to_meta(self if dtype is None else self.to(dtype))
            if device is not None and _meta.is_meta(self):
                _meta.check_readable(self, "copy")
        check_device(device)
        from .ops.elementwise import _to_dtype

        if dtype is None or _dtype.to_dtype(dtype).np == self._data.dtype:
            return self.clone() if copy else self
        return _to_dtype(self, _dtype.to_dtype(dtype))

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            return _TYPE_NAMES[self._data.dtype.name]
        if isinstance(dtype, str):
            if dtype not in _TYPE_FROM_NAME:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = _TYPE_FROM_NAME[dtype]
        elif isinstance(dtype, type):  # a legacy type: graphgrad.FloatTensor, ...
            dtype = dtype.dtype
        return self.to(dtype)

    def cpu(self) -> Tensor:
        if _meta.arrays:
            _meta.check_readable(self, "copy")
        return self

    def cuda(self, *args, **kwargs):
        check_device("cuda")

    def float(self) -> Tensor:
        return self.to(_dtype.float32)

    def double(self) -> Tensor:
        return self.to(_dtype.float64)

    def half(self) -> Tensor:
        return self.to(_dtype.float16)

    def bfloat16(self) -> Tensor:
        return self.to(_dtype.bfloat16)  # needs ml_dtypes (Note [bfloat16] in _dtype.py)

    def long(self) -> Tensor:
        return self.to(_dtype.int64)

    def int(self) -> Tensor:
        return self.to(_dtype.int32)

    def short(self) -> Tensor:
        return self.to(_dtype.int16)

    def char(self) -> Tensor:
        return self.to(_dtype.int8)

    def byte(self) -> Tensor:
        return self.to(_dtype.uint8)

    def bool(self) -> Tensor:
        return self.to(_dtype.bool)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    # -- factories on an existing tensor -------------------------------------------------
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        from .ops.creation import tensor

        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        from .ops.creation import zeros

        return zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        from .ops.creation import ones

        return ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        from .ops.creation import full

        return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        from .ops.creation import empty

        return empty(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


_TYPE_NAMES = {
    "float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "float16": "torch.HalfTensor",
    "int64": "torch.LongTensor", "int32": "torch.IntTensor", "int16": "torch.ShortTensor",
    "int8": "torch.CharTensor", "uint8": "torch.ByteTensor", "bool": "torch.BoolTensor",
    "bfloat16": "torch.BFloat16Tensor",
}
_TYPE_FROM_NAME = {v: _dtype._NAMES[k] for k, v in _TYPE_NAMES.items()}


from .autograd import engine as _engine  # noqa: E402 - the engine needs Tensor defined first
