"""``torch.vmap`` / ``torch.func.vmap``: map a function over a dimension of its inputs.

NOTE: this vmap is a loop, not a batched kernel: graphgrad has no batching rules, so the
function runs once per index of the mapped dimension and the results are stacked. That is
correct for any function (data-dependent Python included) and differentiable, but costs one
call per element.
"""

from __future__ import annotations

import functools

from .._tensor import Tensor
from ..ops.movement import stack
from ..ops.random import get_rng_state, set_rng_state
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _name(func) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs (an int, None for an input
    that is not mapped, or a structure matching the arguments), with the mapped dimension of
    the outputs at ``out_dims``. Runs ``func`` once per element (a loop; see the module note).
    ``randomness``: 'different' draws independently per element, 'same' replays the same
    random numbers for every element, 'error' raises if ``func`` draws random numbers.

    >>> import graphgrad as torch
    >>> torch.vmap(torch.dot)(torch.ones(3, 2), torch.ones(3, 2))
    tensor([2., 2., 2.])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        name = _name(func)
        flat_args, args_spec = tree_flatten(args)
        flat_dims = _in_dims_for(name, in_dims, args, args_spec)
        size = _batch_size(name, in_dims, flat_args, flat_dims)
        state = get_rng_state() if randomness != "different" else None
        results = []
        for i in range(size):
            if randomness == "same":
                set_rng_state(state)
            sliced = [x if d is None else x.select(d, i) for x, d in zip(flat_args, flat_dims)]
            results.append(func(*tree_unflatten(sliced, args_spec), **kwargs))
            if randomness == "error" and i == 0 and not _same_state(state, get_rng_state()):
                raise RuntimeError("vmap: called random operation while in randomness error "
                                   "mode. Please either use the 'same' or 'different' "
                                   "randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return _stack_outputs(name, results, out_dims)

    return wrapped


def _same_state(a, b) -> bool:
    return a.shape == b.shape and bool((a == b).all())


def _in_dims_for(name, in_dims, args, args_spec):
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         "to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    prefix = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)

    def fail():
        return ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                          "compatible with the structure of `inputs`. in_dims has structure "
                          f"{tree_flatten(in_dims)[1]} but inputs has structure {args_spec}.")

    flat_dims = broadcast_prefix(prefix, tuple(args), fail)
    leaves = tree_flatten(args)[0]
    out = []
    for x, d in zip(leaves, flat_dims):
        if d is None:
            out.append(None)
            continue
        if not isinstance(d, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for an input but in_dim must be either an integer dimension or "
                             "None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(x)}. We cannot vmap "
                             "over non-Tensor arguments, please use None as the respective "
                             "in_dim")
        if not -x.dim() <= d < x.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for some input, but that input is a Tensor of dimensionality "
                             f"{x.dim()} so expected in_dim to satisfy -{x.dim()} <= in_dim < "
                             f"{x.dim()}.")
        out.append(d % x.dim())
    return out


def _batch_size(name, in_dims, flat_args, flat_dims) -> int:
    sizes = [x.shape[d] for x, d in zip(flat_args, flat_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    if sizes[0] == 0:
        raise RuntimeError(f"vmap({name}): the mapped dimension has size 0; graphgrad's vmap "
                           "runs the function once per element (it has no batching rules), so "
                           "it cannot infer the output of an empty batch.")
    return sizes[0]


def _stack_outputs(name, results, out_dims):
    flat0, out_spec = tree_flatten(results[0])
    flats = []
    for r in results:
        flat, spec = tree_flatten(r)
        for o in flat:
            if not isinstance(o, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(o)}. Did you mean to set out_dims= to None for "
                                 "output?")
        flats.append(flat)
    if isinstance(out_dims, (int, type(None))):
        flat_out_dims = [out_dims] * len(flat0)
    elif isinstance(out_dims, (tuple, list)):
        def fail():
            return ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is "
                              "not compatible with the structure of `outputs`. out_dims has "
                              f"structure {tree_flatten(out_dims)[1]} but outputs has structure "
                              f"{out_spec}.")
        target = results[0] if isinstance(results[0], (tuple, list)) else (results[0],)
        flat_out_dims = broadcast_prefix(tuple(out_dims), tuple(target), fail)
    else:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                         "None or a python collection of ints representing where in the "
                         "outputs the vmapped dimension should appear.")
    stacked = []
    for k, d in enumerate(flat_out_dims):
        if d is None:
            # Unbatched outputs are the same for every element; one that differs came from a
            # mapped input, which torch refuses (it would be a BatchedTensor).
            first = flats[0][k]
            if any(f[k] is not first and (f[k].shape != first.shape or not bool(
                    (f[k] == first).all())) for f in flats[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            stacked.append(first)
            continue
        nd = flats[0][k].dim() + 1
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {d})")
        stacked.append(stack([f[k] for f in flats], dim=d))
    return tree_unflatten(stacked, out_spec)
