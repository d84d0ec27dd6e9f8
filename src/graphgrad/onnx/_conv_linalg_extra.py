"""Why the LU, LDL^T, matrix-exponential, Householder and Cholesky-solve ops have no ONNX mapping:
standard ONNX has no factorization or solver operator (only Det)."""

from __future__ import annotations

from .ops import unsupported

_WHY = ("ONNX has no {what} operator (only Det); a model that needs "
        "it at inference can precompute it, or use onnxruntime's contrib ops outside the "
        "standard domain")

unsupported(["linalg_lu_factor_ex", "linalg_lu"], _WHY.format(what="LU factorization"))
unsupported(["linalg_lu_solve"], _WHY.format(what="LU solve (triangular solve)"))
unsupported(["cholesky_solve", "cholesky_inverse"],
            _WHY.format(what="Cholesky solve or triangular solve"))
unsupported(["geqrf"], _WHY.format(what="QR (Householder) factorization"))
unsupported(["linalg_ldl_factor_ex", "linalg_ldl_solve"],
            _WHY.format(what="symmetric-indefinite (LDL^T) factorization or solve"))
unsupported(["linalg_matrix_exp"],
            "ONNX has no matrix exponential, and its Padé form needs a linear solve, which ONNX "
            "lacks too; a model can precompute exp(A) or use a truncated Taylor series of MatMuls")
