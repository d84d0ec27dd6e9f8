"""SparseTensor: a Tensor in COO or CSR layout, stored as indices plus a values tensor.

A sparse tensor keeps ``_sidx`` (an int64 ``(sparse_dim, nnz)`` array; for CSR the expanded row
indices and the column indices), ``_svals`` (a dense Tensor of shape ``(nnz, *dense_dims)``,
its place in the autograd graph: Note [Sparse values] in _ops.py), ``_ssize`` and whether it
is coalesced. Its ``requires_grad``, ``grad_fn`` and ``grad`` are those of the values.

Every dense op reads ``Tensor._data``; here ``_data`` is a property that raises
NotImplementedError naming the op the user called, so an op without a sparse implementation
refuses instead of computing on a wrong dense view.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from .. import _dtype
from .._device import CPU, check_device
from .._tensor import Size, Tensor, wrap
from ..ops.tensor_extras import layout, sparse_coo

__all__ = ["SparseTensor", "make_coo", "make_csr", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "refuse"]

sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_new = object.__new__


_GENERIC = {"fn", "f", "method", "wrapper", "inner", "<lambda>", "op", "call"}


def _api_name():
    """The op the user called: the record the dispatcher was running, else the outermost
    frame inside the package with a telling name."""
    f = sys._getframe(2)
    names = []
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        op = f.f_locals.get("op")
        if op is not None and type(op).__name__ == "OpDef":
            return op.name
        names.append(f.f_code.co_name)
        f = f.f_back
    for name in reversed(names):
        if name not in _GENERIC:
            return name
    return names[-1] if names else "_data"


def refuse(t, name=None):
    """The NotImplementedError for op ``name`` on sparse tensor ``t``."""
    name = name or _api_name()
    return NotImplementedError(
        f"Could not run '{name}' with arguments from the 'SparseCPU' backend: {name} is not "
        f"implemented for sparse tensors (layout={t._slayout}, size={tuple(t._ssize)}); convert "
        "with .to_dense() first, or use a torch.sparse function")


def _values_prop(name):
    def get(self):
        return getattr(self._svals, name)

    def set_(self, value):
        setattr(self._svals, name, value)
    return property(get, set_)


class SparseTensor(Tensor):
    """A sparse COO (or CSR) tensor; see the module docstring."""

    __slots__ = ("_sidx", "_svals", "_ssize", "_scoal", "_slayout", "_scrow", "_splan")

    # -- what the dense machinery reads ------------------------------------------------------
    @property
    def _data(self):
        raise refuse(self)

    _fn = _values_prop("_fn")
    _rg = _values_prop("_rg")

    # -- autograd -----------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._svals.requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        self._svals.requires_grad = value

    def requires_grad_(self, requires_grad: bool = True):
        self._svals.requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        g = self._svals._grad
        if g is None:
            return None
        return _grad_of(self, g)

    @grad.setter
    def grad(self, value) -> None:
        if value is None:
            self._svals._grad = None
            return
        if not isinstance(value, SparseTensor) or value._ssize != self._ssize:
            raise RuntimeError("assigned grad to a sparse tensor must be a sparse tensor of the "
                               f"same size {tuple(self._ssize)}")
        if (value._sidx.shape != self._sidx.shape or not np.array_equal(value._sidx, self._sidx)):
            raise NotImplementedError("assigning a sparse grad with another sparsity pattern than "
                                      "the tensor's is not implemented")
        self._svals._grad = value._svals.detach()

    def _accumulator(self):
        return self._svals._accumulator()  # a sparse leaf's gradient accumulates in its values

    def backward(self, *args, **kwargs):
        raise refuse(self, "backward")

    def register_hook(self, hook):
        raise refuse(self, "register_hook")

    def retain_grad(self):
        raise refuse(self, "retain_grad")

    def detach(self):
        return _like(self, self._svals.detach())

    @property
    def data(self):
        return _like(self, self._svals.detach())

    @data.setter
    def data(self, value):
        raise refuse(self, "data assignment")

    def new(self, *args, **kwargs):
        raise refuse(self, "new")

    new_zeros = new_ones = new_full = new_empty = new

    def detach_(self):
        self._svals.detach_()
        return self

    # -- metadata ----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._ssize)

    def size(self, dim=None):
        if dim is None:
            return Size(self._ssize)
        from ..ops._util import wrap_dim

        return self._ssize[wrap_dim(dim, len(self._ssize))]

    @property
    def dtype(self):
        return self._svals.dtype

    @property
    def device(self):
        return CPU

    @property
    def ndim(self) -> int:
        return len(self._ssize)

    def dim(self) -> int:
        return len(self._ssize)

    ndimension = dim

    def numel(self) -> int:
        return int(np.prod(self._ssize, dtype=np.int64))

    nelement = numel

    def __len__(self) -> int:
        if not self._ssize:
            raise TypeError("len() of a 0-d tensor")
        return self._ssize[0]

    def element_size(self) -> int:
        return self._svals.element_size()

    def is_floating_point(self) -> bool:
        return self._svals.is_floating_point()

    def is_complex(self) -> bool:
        return self._svals.is_complex()

    @property
    def layout(self):
        return self._slayout

    @property
    def is_sparse(self) -> bool:
        return self._slayout is sparse_coo

    @property
    def is_sparse_csr(self) -> bool:
        return self._slayout is sparse_csr

    def sparse_dim(self) -> int:
        return self._sidx.shape[0]

    def dense_dim(self) -> int:
        return len(self._ssize) - self._sidx.shape[0]

    def _nnz(self) -> int:
        return self._sidx.shape[1]

    def is_coalesced(self) -> bool:
        self._coo_only("is_coalesced")
        return self._scoal

    def _coo_only(self, name):
        if self._slayout is not sparse_coo:
            raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got "
                               f"{_LAYOUT_NAMES[self._slayout]}")

    def _indices(self):
        self._coo_only("_indices")
        return wrap(self._sidx, False, None)

    def indices(self):
        self._coo_only("indices")
        if not self._scoal:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return wrap(self._sidx, False, None)

    def _values(self):
        return self._svals.detach()

    def values(self):
        from ._ops import alias

        if self._slayout is sparse_coo and not self._scoal:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return alias(self._svals, "ValuesBackward0")

    def crow_indices(self):
        if self._slayout is not sparse_csr:
            raise RuntimeError(f"crow_indices expected sparse row compressed tensor layout but "
                               f"got {_LAYOUT_NAMES[self._slayout]}")
        return wrap(self._scrow, False, None)

    def col_indices(self):
        if self._slayout is not sparse_csr:
            raise RuntimeError(f"col_indices expected sparse row compressed tensor layout but "
                               f"got {_LAYOUT_NAMES[self._slayout]}")
        return wrap(self._sidx[1], False, None)

    # -- conversion ----------------------------------------------------------------------------
    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def tolist(self):
        raise refuse(self, "tolist")

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to "
                               "Scalar")
        return self.to_dense().item()

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.to_dense())

    def __iter__(self):
        raise refuse(self, "__iter__")

    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device)``, ``to(other)``: the values are converted."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, str) or type(a).__name__ == "device":
                device = a
            elif isinstance(a, bool):
                copy = a
            else:
                raise TypeError(f"to() received an invalid argument {a!r}")
        check_device(device)
        if dtype is None or _dtype.to_dtype(dtype) == self.dtype:
            return self.clone() if copy else self
        return _like(self, self._svals.to(dtype))

    def cpu(self):
        return self

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            from .._tensor import _TYPE_NAMES

            name = _TYPE_NAMES.get(self._svals._data.dtype.name, "torch.Tensor")
            return name.replace("torch.", "torch.sparse.", 1)
        if isinstance(dtype, str) or isinstance(dtype, type):
            raise refuse(self, "type(str or legacy type)")
        return self.to(dtype)

    def clone(self, *, memory_format=None):
        return _like(self, self._svals.clone())

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        vals = self._svals.detach().clone().requires_grad_(self.requires_grad)
        t = _like(self, vals)
        t._sidx = self._sidx.copy()
        t._sidx.flags.writeable = False
        memo[id(self)] = t
        return t

    def __reduce_ex__(self, protocol):
        raise refuse(self, "pickling/torch.save")

    def __repr__(self) -> str:
        from ._str import sparse_repr

        return sparse_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        return object.__format__(self, spec)

    __hash__ = Tensor.__hash__


_LAYOUT_NAMES = {sparse_coo: "Sparse", sparse_csr: "SparseCsr"}


def _init(t, idx, vals, size, coalesced, lay):
    # Read-only: _indices() hands out this array, and the cached sort orders (_splan) and the
    # coalesced flag describe it; an in-place change must raise, not leave them stale.
    idx.flags.writeable = False
    t._sidx = idx
    t._svals = vals
    t._ssize = tuple(int(s) for s in size)
    t._scoal = bool(coalesced)
    t._slayout = lay
    t._scrow = None
    t._splan = None  # cached sort orders of the index rows (_linalg.py), shared with _like
    t._grad = None
    t._accum = None
    t._inf = False
    t._extra = None
    t._vc = None
    t._view = None
    return t


def make_coo(idx, vals, size, coalesced):
    """A COO tensor around an int64 index array and a values Tensor (no checks, no copies)."""
    return _init(_new(SparseTensor), idx, vals, size, coalesced, sparse_coo)


def make_csr(crow, col, vals, size):
    """A CSR tensor; its row indices are expanded once for the kernels."""
    rows = np.repeat(np.arange(len(crow) - 1, dtype=np.int64), np.diff(crow))
    t = _init(_new(SparseTensor), np.stack([rows, col]), vals, size, False, sparse_csr)
    crow.flags.writeable = False
    t._scrow = crow
    return t


def _like(t, vals):
    """A sparse tensor with ``t``'s pattern and new values."""
    out = _init(_new(SparseTensor), t._sidx, vals, t._ssize, t._scoal, t._slayout)
    out._scrow = t._scrow
    out._splan = t._splan
    return out


def linear_index(idx, sizes):
    """Row-major linear positions of index columns over ``sizes`` (one row per sparse dim)."""
    lin = np.zeros(idx.shape[1], dtype=np.int64)
    for d, s in enumerate(sizes):
        lin = lin * int(s) + idx[d]
    return lin


def _grad_of(t, g):
    """The sparse ``.grad`` of a leaf: its values' gradient on its pattern, read once per
    position when the leaf repeats an index (torch's gradient is coalesced)."""
    idx = t._sidx
    if not t._scoal and t._slayout is sparse_coo and idx.shape[1] > 1:
        lin = linear_index(idx, t._ssize[:idx.shape[0]])
        uniq, first = np.unique(lin, return_index=True)
        if len(uniq) != len(lin):
            vals = wrap(g._data[first], False, None)
            return make_coo(np.ascontiguousarray(idx[:, first]), vals, t._ssize, False)
    out = _like(t, g)
    out._svals = g
    return out
