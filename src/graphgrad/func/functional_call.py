"""``torch.func.functional_call`` and ``stack_module_state``: modules as functions of their
parameters, e.g. for ``grad`` with respect to a parameter dict or for ensembling with vmap."""

from __future__ import annotations

from collections.abc import Sequence

from ..nn.utils.stateless import _functional_call
from ..ops.movement import stack

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Calls ``module(*args, **kwargs)`` with its parameters and buffers replaced by the
    tensors of ``parameter_and_buffer_dicts`` (one dict, or a tuple/list of dicts with distinct
    keys); the module's own tensors are put back afterwards, even if the call raises.

    >>> import graphgrad as torch
    >>> m = torch.nn.Linear(2, 1)
    >>> params = {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}
    >>> torch.func.functional_call(m, params, (torch.tensor([[1.0, 2.0]]),))
    tensor([[3.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """``(params, buffers)``: dicts of the models' parameters and buffers stacked along a new
    first dimension (stacked parameters are new leaves that require grad), for
    ``vmap(functional_call)`` over an ensemble of same-class models."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    cls = type(models[0])
    if not all(type(m) is cls for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def _stacked_leaf(tensors, name):
    all_rg = all(t.requires_grad for t in tensors)
    if not all_rg and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    if all_rg:
        result = result.detach().requires_grad_()
    return result
