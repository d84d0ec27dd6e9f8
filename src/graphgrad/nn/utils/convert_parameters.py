"""``parameters_to_vector`` / ``vector_to_parameters``: all parameters as one flat tensor."""

from __future__ import annotations

from ..._tensor import Tensor
from ...ops.movement import cat
from ..modules.module import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and concatenated (differentiable, as in torch).

    >>> import graphgrad as torch
    >>> torch.nn.utils.parameters_to_vector([torch.ones(2, 2), torch.zeros(1)])
    tensor([1., 1., 1., 1., 0.])
    """
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters) -> None:
    """Slices ``vec`` into the parameters' shapes and makes each parameter's data that slice."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
