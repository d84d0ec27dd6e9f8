"""``torch.func.grad``, ``grad_and_value`` and ``vjp``: reverse-mode transforms of functions.

Built on graphgrad's tape autograd: the differentiated arguments become fresh leaves, the
function runs under grad mode, and ``autograd.grad`` gives the result. Inside another transform
the gradient keeps its graph (``create_graph``) so the outer transform can differentiate it.
The outermost transform keeps the graph only when an argument requires grad: a tensor that the
function closes over and that requires grad is not differentiated through at the top level
(pass it as an argument instead), where torch.func would keep it.
"""

from __future__ import annotations

import functools

from .._tensor import Tensor
from ..ops.creation import ones_like
from ._args import grads, lift_args
from ._levels import finish, finish_aux, nested, transform
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp"]


def _keep_graph(args) -> bool:
    # The result stays attached when a transform runs around this one, or when an argument
    # carries the caller's own graph (torch.func composes with regular autograd).
    return nested() or any(isinstance(x, Tensor) and x.requires_grad
                           for x in tree_flatten(args)[0])


def grad_and_value(func, argnums=0, has_aux=False):
    """Like :func:`grad`, but the wrapped function returns ``(gradient, value)`` (with
    ``has_aux``: ``(gradient, (value, aux))``).

    >>> import graphgrad as torch
    >>> torch.func.grad_and_value(lambda x: (x ** 2).sum())(torch.tensor([1.0, 2.0]))
    (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        keep = _keep_graph((args, kwargs))
        with transform():
            new_args, _, flat, spec = lift_args(args, argnums)
            output = func(*new_args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be "
                                       "a tuple: (output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {output.dim()} dims. Maybe "
                                   "you wanted to use the vjp or jacrev APIs instead?")
            g = grads([output], flat, [ones_like(output)], create_graph=keep)
        done = functools.partial(finish, keep=keep)
        grad_input = tree_unflatten([done(x) for x in g], spec)
        output = done(output)
        if has_aux:
            return grad_input, (output, tree_map(functools.partial(finish_aux, keep=keep), aux))
        return grad_input, output

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The function computing the gradient of ``func`` (which returns a scalar tensor) with
    respect to its ``argnums`` argument(s); tensors nested in tuples, lists and dicts get
    gradients of the same structure.

    >>> import graphgrad as torch
    >>> torch.func.grad(torch.sin)(torch.tensor(0.0))
    tensor(1.)
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``); ``vjp_fn(cotangents)``
    returns the vector-Jacobian products with respect to every primal, as a tuple. It may be
    called several times."""
    keep = _keep_graph(primals)
    with transform():
        new_args, _, flat, spec = lift_args(primals, tuple(range(len(primals))))
        output = func(*new_args)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            output, aux = output
        flat_out, out_spec = tree_flatten(output)
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError("vjp(f, *primals): Expected output of f to be a Tensor or "
                                   f"Tensors, got {type(o)} as an output")
            if not o.is_floating_point():
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {o.dtype}")

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        # retain_graph / create_graph are accepted as torch's vjp_fn does; the graph is kept.
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. "
                               f"cotangents: {ct_spec}, primal output: {out_spec}")
        graph = keep or nested() or any(isinstance(c, Tensor) and c.requires_grad
                                         for c in flat_ct)
        with transform():
            g = grads(flat_out, flat, flat_ct, create_graph=graph)
        res = tree_unflatten([finish(x, graph) for x in g], spec)
        return tuple(res)

    done = functools.partial(finish, keep=keep)
    output = tree_map(done, output)
    if has_aux:
        return output, vjp_fn, tree_map(functools.partial(finish_aux, keep=keep), aux)
    return output, vjp_fn
