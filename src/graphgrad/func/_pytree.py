"""Flattening nested tuples, lists and dicts (torch's pytrees) for the function transforms.

A spec records the containers; leaves are anything else (tensors, numbers, None).
"""

from __future__ import annotations

_LEAF = None


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves of ``tree`` in order, and its structure."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, (tuple, list)):
        kind = type(tree) if not hasattr(tree, "_fields") else ("namedtuple", type(tree))
        return (kind, [_flatten(x, leaves) for x in tree])
    if isinstance(tree, dict):
        return (dict, list(tree), [_flatten(tree[k], leaves) for k in tree])
    leaves.append(tree)
    return _LEAF


def tree_unflatten(leaves, spec):
    """The tree of ``spec`` built from ``leaves`` (the inverse of ``tree_flatten``)."""
    it = iter(leaves)
    return _build(spec, it)


def _build(spec, it):
    if spec is _LEAF:
        return next(it)
    if spec[0] is dict:
        return {k: _build(s, it) for k, s in zip(spec[1], spec[2])}
    kind, children = spec
    values = [_build(s, it) for s in children]
    if isinstance(kind, tuple):
        return kind[1](*values)
    return kind(values)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree, fail):
    """The leaves of ``prefix`` repeated over the leaves of ``tree`` that each covers (an int
    in_dims applies to a whole argument); ``fail()`` is raised on a structure mismatch."""
    out = []
    _broadcast(prefix, tree, out, fail)
    return out


def _broadcast(prefix, tree, out, fail):
    if not isinstance(prefix, (tuple, list, dict)):
        out.extend([prefix] * len(tree_flatten(tree)[0]))
        return
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            raise fail()
        for k in tree:
            _broadcast(prefix[k], tree[k], out, fail)
        return
    if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
        raise fail()
    for p, t in zip(prefix, tree):
        _broadcast(p, t, out, fail)
