"""``torch.func.jacrev``, ``jacfwd`` and ``hessian``: full Jacobians of functions.

``jacrev`` takes one vector-Jacobian product per output element, ``jacfwd`` one Jacobian-vector
product per input element (see jvp.py for how J t is computed); both return, for each output,
a tensor of shape ``output.shape + input.shape`` per differentiated input.
"""

from __future__ import annotations

import functools

from .._tensor import Tensor
from ..ops.creation import eye, zeros, zeros_like
from ..ops.movement import stack
from ._args import grads, lift_args
from ._levels import finish, finish_aux, nested, transform
from ._pytree import tree_flatten, tree_map, tree_unflatten
from .jvp import jv, linearize_outputs

__all__ = ["jacrev", "jacfwd", "hessian"]


def _run(api, func, args, argnums, has_aux):
    new_args, _, flat_in, in_spec = lift_args(args, argnums)
    output = func(*new_args)
    aux = None
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError(f"{api}(f, ...): output of function f should be a tuple: "
                               "(output, aux) if has_aux is True")
        output, aux = output
    flat_out, out_spec = tree_flatten(output)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}(f, ...): Expected output of f to be a Tensor or Tensors, "
                               f"got {type(o)} as an output")
    return flat_in, in_spec, output, flat_out, out_spec, aux


def _assemble(blocks, flat_in, in_spec, out_spec, aux, has_aux, keep):
    done = functools.partial(finish, keep=keep)
    per_out = [tree_unflatten([done(b) for b in row], in_spec) for row in blocks]
    jac = tree_unflatten(per_out, out_spec)
    return (jac, tree_map(functools.partial(finish_aux, keep=keep), aux)) if has_aux else jac


def _keep(args) -> bool:
    return nested() or any(isinstance(x, Tensor) and x.requires_grad
                           for x in tree_flatten(args)[0])


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to its ``argnums`` argument(s), by reverse mode.

    >>> import graphgrad as torch
    >>> torch.func.jacrev(torch.sin)(torch.tensor([0.0, 0.0]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        keep = _keep(args)
        with transform():
            flat_in, in_spec, _, flat_out, out_spec, aux = _run("jacrev", func, args, argnums,
                                                                has_aux)
            blocks = []
            for o in flat_out:
                n = o.numel()
                if n == 0 or not o.requires_grad:
                    blocks.append([zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)
                                   for x in flat_in])
                    continue
                basis = eye(n, dtype=o.dtype)
                rows = [grads([o], flat_in, [basis[j].reshape(o.shape)], create_graph=keep)
                        for j in range(n)]
                blocks.append([stack([r[k] for r in rows]).reshape(*o.shape, *x.shape)
                               for k, x in enumerate(flat_in)])
        return _assemble(blocks, flat_in, in_spec, out_spec, aux, has_aux, keep)

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to its ``argnums`` argument(s), column by column
    (one Jacobian-vector product per input element); same layout as :func:`jacrev`.

    >>> import graphgrad as torch
    >>> torch.func.jacfwd(lambda x: x * x)(torch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args):
        keep = _keep(args)
        with transform():
            flat_in, in_spec, _, flat_out, out_spec, aux = _run("jacfwd", func, args, argnums,
                                                                has_aux)
            u, g = linearize_outputs(flat_out, flat_in)
            zero_t = [zeros_like(x) for x in flat_in]
            blocks = [[None] * len(flat_in) for _ in flat_out]
            for k, x in enumerate(flat_in):
                n = x.numel()
                basis = eye(n, dtype=x.dtype)
                cols = []
                for j in range(n):
                    t = list(zero_t)
                    t[k] = basis[j].reshape(x.shape)
                    cols.append(jv(u, g, t, create_graph=keep))
                for i, o in enumerate(flat_out):
                    if n == 0:
                        blocks[i][k] = zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype)
                    else:
                        blocks[i][k] = stack([c[i] for c in cols], dim=-1).reshape(
                            *o.shape, *x.shape)
        return _assemble(blocks, flat_in, in_spec, out_spec, aux, has_aux, keep)

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func, argnums), argnums)``.

    >>> import graphgrad as torch
    >>> torch.func.hessian(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
