"""Argument handling shared by the transforms: ``argnums``, lifting the differentiated
arguments to fresh leaves, and the gradients of flat outputs with respect to them."""

from __future__ import annotations

from .. import autograd
from .._tensor import Tensor
from ..ops.creation import zeros_like
from ._levels import lift
from ._pytree import tree_flatten, tree_unflatten


def check_argnums(argnums, num_args: int):
    """``argnums`` made non-negative, with torch's errors."""
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return tuple(_wrap_argnum(a, num_args) for a in argnums)
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def lift_args(args, argnums):
    """``(new_args, diff, flat, spec)``: args with the selected ones' tensors replaced by
    leaves to differentiate; ``diff`` is those arguments (a tuple if argnums is), ``flat`` their
    tensors and ``spec`` their structure."""
    argnums = check_argnums(argnums, len(args))
    picked = argnums if isinstance(argnums, tuple) else (argnums,)
    new_args = list(args)
    for i in picked:
        leaves, spec = tree_flatten(args[i])
        for x in leaves:
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        new_args[i] = tree_unflatten([lift(x) for x in leaves], spec)
    diff = (tuple(new_args[i] for i in argnums) if isinstance(argnums, tuple)
            else new_args[argnums])
    flat, spec = tree_flatten(diff)
    return tuple(new_args), diff, flat, spec


def grads(outputs, inputs, grad_outputs, create_graph: bool):
    """d(outputs . grad_outputs)/d(inputs), zeros for inputs the outputs do not reach."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    res = autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                        retain_graph=True, create_graph=create_graph, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(res, inputs)]
