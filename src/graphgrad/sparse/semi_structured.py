"""torch.sparse.semi_structured: 2:4 semi-structured sparsity is a CUDA feature (cuSPARSELt /
CUTLASS kernels); on CPU every entry point raises NotImplementedError."""

from __future__ import annotations

__all__ = ["SparseSemiStructuredTensor", "SparseSemiStructuredTensorCUSPARSELT",
           "SparseSemiStructuredTensorCUTLASS", "to_sparse_semi_structured"]

_WHY = ("semi-structured (2:4) sparsity is a CUDA feature (cuSPARSELt/CUTLASS kernels), not "
        "available on CPU")


class SparseSemiStructuredTensor:
    """Making one raises (see the module docstring)."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(f"torch.sparse.{cls.__name__}: {_WHY}")


class SparseSemiStructuredTensorCUSPARSELT(SparseSemiStructuredTensor):
    """Making one raises."""


class SparseSemiStructuredTensorCUTLASS(SparseSemiStructuredTensor):
    """Making one raises."""


def to_sparse_semi_structured(original_tensor, transposed=False):
    raise NotImplementedError(f"torch.sparse.to_sparse_semi_structured: {_WHY}")
