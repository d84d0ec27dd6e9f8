"""torch.sparse: sparse COO tensors (and CSR basics) with autograd.

``graphgrad.sparse_coo_tensor`` / ``Tensor.to_sparse()`` make a sparse tensor (see
_tensor.py); ``mm``, ``addmm``, ``sum``, ``softmax``, ``log_softmax`` and ``spdiags`` are
torch.sparse's functions. Gradients reach dense operands and the values (Note [Sparse
values] in _ops.py). docs/sparse.md lists what is supported; every other op on a sparse tensor
raises NotImplementedError.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import _arith, _extras
from ._construct import (
    coalesce,
    sparse_coo_tensor,
    sparse_csr_tensor,
    spdiags,
    to_dense,
    to_sparse,
    to_sparse_csr,
)
from ._linalg import sparse_addmm, sparse_mm, spmm
from ._reduce import log_softmax, softmax, sparse_sum
from ._tensor import SparseTensor, sparse_bsc, sparse_bsr, sparse_csc, sparse_csr
from .semi_structured import (
    SparseSemiStructuredTensor,
    SparseSemiStructuredTensorCUSPARSELT,
    SparseSemiStructuredTensorCUTLASS,
    to_sparse_semi_structured,
)

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "spdiags",
           "check_sparse_tensor_invariants", "sampled_addmm", "spsolve", "as_sparse_gradcheck",
           "to_sparse_semi_structured",
           "SparseSemiStructuredTensor", "SparseSemiStructuredTensorCUSPARSELT",
           "SparseSemiStructuredTensorCUTLASS", "FloatTensor", "DoubleTensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "HalfTensor",
           "BFloat16Tensor", "sparse_coo_tensor", "sparse_csr_tensor", "spmm", "SparseTensor",
           "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]

mm = sparse_mm
addmm = sparse_addmm
sum = sparse_sum  # noqa: A001 - torch.sparse.sum


class check_sparse_tensor_invariants:
    """torch's switch for index checks; graphgrad always checks indices when a sparse tensor
    is made, so enabling it changes nothing and disabling it keeps the checks."""

    _enabled = True

    def __init__(self, enable=True):
        self.enable = enable

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn


def _missing(name, why):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"torch.sparse.{name} is not implemented in graphgrad: {why}")
    fn.__name__ = name
    return fn


sampled_addmm = _missing("sampled_addmm", "only mm, addmm, sum, softmax, log_softmax and "
                         "spdiags are (docs/sparse.md)")
spsolve = _missing("spsolve", "sparse linear solves need a sparse factorization; use "
                   "torch.linalg.solve on A.to_dense()")
as_sparse_gradcheck = _missing("as_sparse_gradcheck", "torch.autograd.gradcheck works on the "
                               "values of a sparse tensor directly")
def _legacy(name, dtype_name):
    """torch.sparse.FloatTensor(indices, values, size) and friends (the pre-1.0 spelling
    that GCN code such as pygcn still uses)."""
    def make(*args, **kwargs):
        from .. import _dtype

        dtype = _dtype.to_dtype(dtype_name)
        if len(args) == 3 or (len(args) == 2 and isinstance(args[0], Tensor)):
            return sparse_coo_tensor(*args, dtype=dtype, **kwargs)
        if all(isinstance(a, int) for a in args):
            empty = np.zeros((len(args), 0), dtype=np.int64)
            return sparse_coo_tensor(empty, np.zeros((0,), dtype=dtype.np), args, dtype=dtype)
        raise TypeError(f"torch.sparse.{name}: expected (indices, values, size) or sizes")
    make.__name__ = name
    return make


FloatTensor = _legacy("FloatTensor", "float32")
DoubleTensor = _legacy("DoubleTensor", "float64")
HalfTensor = _legacy("HalfTensor", "float16")
LongTensor = _legacy("LongTensor", "int64")
IntTensor = _legacy("IntTensor", "int32")
ShortTensor = _legacy("ShortTensor", "int16")
CharTensor = _legacy("CharTensor", "int8")
ByteTensor = _legacy("ByteTensor", "uint8")


def BFloat16Tensor(*args, **kwargs):  # noqa: N802 - torch's name
    raise NotImplementedError("torch.sparse.BFloat16Tensor: sparse bfloat16 is not implemented")


def _strided_only(name, message):
    def method(self, *args, **kwargs):
        raise RuntimeError(message)
    method.__name__ = name
    return method


def _install_dense_methods():
    """The sparse methods a dense tensor answers (torch's errors where it refuses)."""
    T = Tensor
    methods = {
        "to_sparse": to_sparse, "to_sparse_coo": lambda self: to_sparse(self),
        "to_sparse_csr": to_sparse_csr, "to_dense": to_dense, "coalesce": coalesce,
        "sparse_dim": lambda self: 0, "dense_dim": lambda self: self.ndim,
        "indices": _strided_only("indices", "indices expected sparse coordinate tensor layout "
                                 "but got Strided"),
        "_indices": _strided_only("_indices", "_indices expected sparse coordinate tensor "
                                  "layout but got Strided"),
        "values": _strided_only("values", "values expected sparse tensor layout but got "
                                "Strided"),
        "_values": _strided_only("_values", "_values expected sparse tensor layout but got "
                                 "Strided"),
        "is_coalesced": _strided_only("is_coalesced", "is_coalesced expected sparse coordinate "
                                      "tensor layout but got Strided"),
        "_nnz": _strided_only("_nnz", "_nnz expected sparse tensor layout but got Strided"),
        "crow_indices": _strided_only("crow_indices", "crow_indices expected sparse row "
                                      "compressed tensor layout but got Strided"),
        "col_indices": _strided_only("col_indices", "col_indices expected sparse row or block "
                                     "compressed tensor layout but got Strided"),
    }
    for name, fn in methods.items():
        if name not in T.__dict__:
            setattr(T, name, fn)
    if "is_sparse_csr" not in T.__dict__:
        T.is_sparse_csr = property(lambda self: False)


_arith.install()
_extras.install()
_install_dense_methods()
