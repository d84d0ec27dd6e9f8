"""torch's remaining sparse names: sparse_mask and dsmm work; the CSC/BSR/BSC layouts, hybrid
products (smm, hspmm, sspaddmm, ...) and in-place resizes raise NotImplementedError naming what
is missing; the ``*_copy`` spellings copy what the method returns."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import _ops
from ._construct import sparse_csr_tensor, to_dense
from ._linalg import spmm
from ._tensor import SparseTensor, linear_index, make_coo, sparse_csr

__all__ = ["sparse_mask", "dsmm", "smm", "hsmm", "hspmm", "saddmm", "sspaddmm",
           "sparse_compressed_tensor", "sparse_csc_tensor", "sparse_bsr_tensor",
           "sparse_bsc_tensor", "indices_copy", "values_copy", "crow_indices_copy",
           "col_indices_copy", "ccol_indices_copy", "row_indices_copy", "resize_as_sparse_",
           "install"]


def sparse_mask(self, mask):
    """``self`` read at the stored positions of sparse ``mask`` (its pattern and coalesced
    flag); the gradient flows back to ``self`` at those positions."""
    if not isinstance(mask, SparseTensor) or not mask.is_sparse:
        raise RuntimeError("sparse_mask: expected mask to be a sparse COO tensor")
    if tuple(self.shape) != mask._ssize:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask._ssize)}")
    dense = to_dense(self) if isinstance(self, SparseTensor) else self
    sd = mask.sparse_dim()
    lin = linear_index(mask._sidx, mask._ssize[:sd])
    flat = (int(np.prod(mask._ssize[:sd], dtype=np.int64)),) + mask._ssize[sd:]
    vals = _ops.gather(lin, dense, flat, node="SparseMaskBackward0")
    return make_coo(mask._sidx, vals, mask._ssize, mask._scoal)


def dsmm(input, mat2):
    """torch.dsmm: sparse @ dense with a dense result (torch.spmm)."""
    return spmm(input, mat2)


def _missing(name, why):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"{name} is not implemented in graphgrad: {why}")
    fn.__name__ = name.rsplit(".", 1)[-1]
    return fn


_HYBRID = ("it returns a sparse (or hybrid sparse) product; use torch.sparse.mm or torch.spmm, "
           "whose result is dense")
smm = _missing("torch.smm", _HYBRID)
hsmm = _missing("torch.hsmm", _HYBRID)
hspmm = _missing("torch.hspmm", _HYBRID)
saddmm = _missing("torch.saddmm", _HYBRID)
sspaddmm = _missing("torch.sspaddmm", _HYBRID)
_LAYOUTS = "only the COO and CSR layouts are (docs/sparse.md)"
sparse_csc_tensor = _missing("torch.sparse_csc_tensor", _LAYOUTS)
sparse_bsr_tensor = _missing("torch.sparse_bsr_tensor", _LAYOUTS)
sparse_bsc_tensor = _missing("torch.sparse_bsc_tensor", _LAYOUTS)
resize_as_sparse_ = _missing("torch.resize_as_sparse_", "sparse tensors have no in-place ops")


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None):
    """torch.sparse_compressed_tensor for ``layout=torch.sparse_csr`` (the other compressed
    layouts raise)."""
    if layout is not sparse_csr:
        raise NotImplementedError(f"torch.sparse_compressed_tensor: layout={layout} is not "
                                  f"implemented; {_LAYOUTS}")
    return sparse_csr_tensor(compressed_indices, plain_indices, values, size, dtype=dtype,
                             device=device, requires_grad=requires_grad)


def _copy_of(method):
    def fn(input):
        return getattr(input, method)().clone()
    fn.__name__ = f"{method}_copy"
    return fn


indices_copy = _copy_of("indices")
values_copy = _copy_of("values")
crow_indices_copy = _copy_of("crow_indices")
col_indices_copy = _copy_of("col_indices")
ccol_indices_copy = _copy_of("ccol_indices")
row_indices_copy = _copy_of("row_indices")


def _csc_only(name):
    def method(self, *args, **kwargs):
        lay = ("Strided" if not isinstance(self, SparseTensor) else
               "Sparse" if self.is_sparse else "SparseCsr")
        raise RuntimeError(f"{name} expected sparse column or block compressed tensor layout "
                           f"but got {lay}")
    method.__name__ = name
    return method


def install():
    """Tensor methods (dense and sparse tensors answer alike)."""
    methods = {"sparse_mask": sparse_mask, "ccol_indices": _csc_only("ccol_indices"),
               "row_indices": _csc_only("row_indices"), "smm": smm, "sspaddmm": sspaddmm}
    for name in ("to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc"):
        methods[name] = _missing(f"Tensor.{name}", _LAYOUTS)
    for name in ("resize_as_sparse_", "sparse_resize_", "sparse_resize_and_clear_"):
        methods[name] = _missing(f"Tensor.{name}", "sparse tensors have no in-place ops")
    for name, fn in methods.items():
        if name not in Tensor.__dict__:  # never replace another module's method
            setattr(Tensor, name, fn)
        setattr(SparseTensor, name, fn)
