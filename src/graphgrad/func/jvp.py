"""``torch.func.jvp``: Jacobian-vector products (forward mode) of functions.

graphgrad has no forward-mode duals, so J t is computed by the double-VJP identity:
g(u) = J^T u is linear in u, so d(g . t)/du = J t. graphgrad's backward rules are themselves
differentiable, which makes this exact (two backward passes instead of one forward pass).
"""

from __future__ import annotations

import functools

from .._tensor import Tensor
from ..ops.creation import zeros_like
from ._args import grads
from ._levels import finish, finish_aux, lift, nested, transform
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["jvp"]


def linearize_outputs(flat_out, flat_in):
    """``(u, g)``: placeholder cotangents ``u`` (zeros requiring grad) and g = J^T u with its
    graph, so that ``jv(t)`` below gives J t for any tangent ``t``."""
    u = [zeros_like(o).requires_grad_(True) for o in flat_out]
    g = grads(flat_out, flat_in, u, create_graph=True)
    return u, g


def jv(u, g, tangents, create_graph: bool):
    """J t from :func:`linearize_outputs`' ``(u, g)`` and tangents ``t`` (one per input)."""
    return grads(g, u, tangents, create_graph=create_graph)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: the output and the Jacobian of ``func`` at
    ``primals`` applied to ``tangents`` (same structure as ``primals``).

    >>> import graphgrad as torch
    >>> torch.func.jvp(torch.sin, (torch.tensor([0.0]),), (torch.tensor([2.0]),))
    (tensor([0.]), tensor([2.]))
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {p_spec} and tangents "
                           f"with structure {t_spec}")
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{api}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got "
                                   f"{type(x)}")
    keep = nested() or any(x.requires_grad for x in flat_p + flat_t)
    with transform():
        flat_in = [lift(x) for x in flat_p]
        output = func(*tree_unflatten(flat_in, p_spec))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            output, aux = output
        flat_out, out_spec = tree_flatten(output)
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{api}: expected f(*args) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        if strict and not any(o.requires_grad for o in flat_out):
            raise RuntimeError(f"{api.replace(')', ', strict=True)')}: The output of f is "
                               "independent of the inputs. This is not allowed with strict=True.")
        u, g = linearize_outputs(flat_out, flat_in)
        out_t = jv(u, g, flat_t, create_graph=keep)
    done = functools.partial(finish, keep=keep)
    output = tree_map(done, output)
    out_t = tree_unflatten([done(x) for x in out_t], out_spec)
    if has_aux:
        return output, out_t, tree_map(functools.partial(finish_aux, keep=keep), aux)
    return output, out_t
