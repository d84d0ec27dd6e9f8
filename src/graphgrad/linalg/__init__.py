"""graphgrad.linalg: torch.linalg's functions, differentiable, on batches of matrices (..., m, n).

Factorizations live in ops/linalg_decomp.py, linear systems in ops/linalg_solve.py, norms in
ops/linalg_norms.py, products in linalg/_products.py. This module also gives the older torch
spellings (torch.det, torch.svd, Tensor.inverse, ...) that :mod:`graphgrad` re-exports.

>>> import graphgrad as torch
>>> torch.linalg.det(torch.tensor([[2.0, 1.0], [1.0, 3.0]]))
tensor(5.)
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.linalg import matmul
from ..ops.linalg_decomp import (
    cholesky,
    cholesky_ex,
    eigh,
    eigvalsh,
    qr,
    svd,
    svd_legacy,
    svdvals,
)
from ..ops.linalg_extra import eig, eigvals, tensorinv, tensorsolve, vander
from ..ops.linalg_householder import householder_product
from ..ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve
from ..ops.linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve, solve_ex
from ..ops.linalg_matrix_exp import matrix_exp
from ..ops.linalg_norms import cond, matrix_norm, matrix_rank, norm, vector_norm
from ..ops.linalg_solve import (
    _SLOGDET_OLD,
    LinAlgError,
    det,
    inv,
    inv_ex,
    logdet,
    pinv,
    return_type,
    slogdet,
    solve,
    solve_triangular,
)
from ..ops.misc import linalg_cross as cross  # noqa: F401 - torch.linalg.cross
from ..ops.structure import diagonal as _diagonal
from ._products import lstsq, matrix_power, multi_dot, vecdot

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "det", "diagonal", "eigh", "eigvalsh",
    "inv", "inv_ex", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals",
    "vecdot", "vector_norm",
]
__all__ += ["eig", "eigvals", "householder_product", "ldl_factor", "ldl_factor_ex",
            "ldl_solve", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp", "solve_ex",
            "tensorinv", "tensorsolve", "vander"]


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices of ``A`` (a view), as torch.linalg.diagonal."""
    return _diagonal(A, offset, dim1, dim2)


# -- torch's older spellings (torch.<name> and Tensor.<name>) -----------------------------------
def inverse(input):
    return inv(input)


def torch_slogdet(input):
    """torch.slogdet: as linalg.slogdet, named torch.return_types.slogdet."""
    return _SLOGDET_OLD(*slogdet(input))


def torch_cholesky(input, upper=False):
    return cholesky(input, upper=upper)


def torch_qr(input, some=True):
    """torch.qr: ``some=False`` is mode='complete'."""
    return _QR_OLD(*qr(input, "reduced" if some else "complete"))


_QR_OLD = return_type("qr", ["Q", "R"])


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


LEGACY = {
    "det": det, "logdet": logdet, "slogdet": torch_slogdet, "inverse": inverse,
    "cholesky": torch_cholesky, "qr": torch_qr, "svd": svd_legacy, "pinverse": pinverse,
    "matrix_power": matrix_power,
}

# torch.<name> and Tensor.<name> of the LU, Cholesky-solve and Householder families
from ..ops import linalg_extra as _ex  # noqa: E402
from ..ops import linalg_householder as _hh  # noqa: E402
from ..ops import linalg_lu as _lu  # noqa: E402

LEGACY.update({
    "lu": _lu.torch_lu, "lu_solve": _lu.torch_lu_solve, "cholesky_solve": _ex.cholesky_solve,
    "cholesky_inverse": _ex.cholesky_inverse, "triangular_solve": _ex.triangular_solve,
    "matrix_exp": matrix_exp, "geqrf": _hh.geqrf, "orgqr": _hh.orgqr, "ormqr": _hh.ormqr,
})

for _name, _fn in LEGACY.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
