"""The einsum compiler: parses an equation as torch does and plans its contractions.

A plan is made once per (equation, operand shapes) and cached; it holds the normalised
equation, the output shape and, for each operand, the einsum equation of its gradient.
"""

from __future__ import annotations

import functools
import string
from collections import Counter
from typing import NamedTuple

import numpy as np

__all__ = ["Plan", "compile_equation", "contraction_plan", "sublist_labels", "tensordot_plan"]

# torch's sublist format numbers labels 0-25 as A-Z and 26-51 as a-z; sorting letters in this
# order (ASCII) also gives torch's order of the implicit output.
_LETTERS = string.ascii_uppercase + string.ascii_lowercase
_LETTER_SET = frozenset(_LETTERS)
# Past this many multiply-adds, numpy's optimized einsum (tensordot, BLAS) beats its C loop,
# which costs no path search for small operands.
_BLAS_WORK = 1 << 14

# Note [Einsum plans]: an equation is normalised to letters only (ellipsis dims get unused
# letters, an implicit output is made explicit) and checked as torch checks it. One or two
# operands make one node; three or more are contracted pairwise along numpy's greedy path, as
# torch contracts pairwise (it has no single einsum node: its grad_fns are those of the bmm,
# permute and sum ops it decomposes into; ours is one EinsumBackward0 per contraction, a
# deliberate difference). The gradient of operand k is one einsum of the incoming gradient, the
# other operand and constant helpers: an identity per extra occurrence of a repeated label
# (diagonals), ones for a label found nowhere else at full size (summed within the operand);
# size-1 dims broadcast against a larger size are summed by that einsum and restored by a
# reshape. Written against ``ns``, it records einsums again under create_graph.


class _Grad(NamedTuple):
    eq: str          # einsum of (grad, other operand, helpers...) -> the operand's labels
    helpers: tuple   # ("eye" | "ones", size) for each helper operand
    shape: tuple     # the operand's shape
    optimize: bool


class Plan(NamedTuple):
    eq: str
    optimize: bool
    grads: tuple     # one _Grad per operand
    shape: tuple     # the output's shape
    widen: bool      # a one-operand sum: torch sums bools and narrow ints into int64


def _error(msg):
    return RuntimeError("einsum(): " + msg)


def _parse_term(term, what):
    """The labels of one subscript term; None marks its ellipsis."""
    labels, i = [], 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if None in labels:
                raise _error(f"found '.' for {what} for which an ellipsis was already found")
            if term[i:i + 3] != "...":
                raise _error(f"found '.' for {what} that is not part of any ellipsis")
            labels.append(None)
            i += 3
            continue
        if c not in _LETTER_SET:
            raise _error(f"invalid subscript given at index {i} in the subscripts of {what}, "
                         "subscripts must be in [a-zA-Z]")
        labels.append(c)
        i += 1
    return labels


def _sizes(terms, shapes, check=False):
    """Each label's size, broadcasting size-1 dims; ``check`` raises torch's errors."""
    sizes = {}
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        mine = {}
        for c, n in zip(term, shape):
            if check and mine.setdefault(c, n) != n:
                raise _error(f"subscript {c} is repeated for operand {k} but the sizes don't "
                             f"match, {n} != {mine[c]}")
            seen = sizes.get(c, 1)
            if seen == 1:
                sizes[c] = n
            elif n != 1 and n != seen:
                raise _error(f"subscript {c} has size {n} for operand {k} which does not "
                             f"broadcast with previously seen size {seen}")
    return sizes


@functools.lru_cache(maxsize=1024)
def compile_equation(equation, shapes):
    """The plan of ``equation`` on operands of ``shapes``: a Plan for one or two operands, a
    tuple of pairwise steps for more."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise _error("fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise _error("more operands were provided than specified in the equation")
    parsed = []
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        labels = _parse_term(term, f"operand {k}")
        n = len(labels) - (None in labels)
        if None in labels and n > len(shape):
            raise _error(f"the number of subscripts in the equation ({n}) is more than the "
                         f"number of dimensions ({len(shape)}) for operand {k}")
        if None not in labels and n != len(shape):
            raise _error(f"the number of subscripts in the equation ({n}) does not match the "
                         f"number of dimensions ({len(shape)}) for operand {k} and no ellipsis "
                         "was given")
        parsed.append(labels)
    free = [c for c in _LETTERS if c not in eq]
    n_ell = max((len(s) - len(t) + 1 for t, s in zip(parsed, shapes) if None in t), default=0)
    if n_ell > len(free):
        raise _error("too many subscripts: at most 52 labels fit in an equation")
    ell = "".join(free[:n_ell])

    def letters(labels, ndim):
        if None not in labels:
            return "".join(labels)
        i = labels.index(None)
        covered = ndim - len(labels) + 1
        return "".join(labels[:i]) + ell[n_ell - covered:] + "".join(labels[i + 1:])

    ins = [letters(t, len(s)) for t, s in zip(parsed, shapes)]
    counts = Counter(c for t in parsed for c in t if c is not None)
    if not arrow:
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    else:
        labels = _parse_term(rhs, "output")
        for i, c in enumerate(labels):
            if c is None:
                continue
            if c in labels[:i]:
                raise _error(f"output subscript {c} appears more than once in the output")
            if c not in counts:
                raise _error(f"output subscript {c} does not appear in the equation for any "
                             "input operand")
        out = "".join(ell if c is None else c for c in labels)
    _sizes(ins, shapes, check=True)
    if len(ins) <= 2:
        return contraction_plan(ins, out, shapes)
    return _path(ins, out, shapes)


def contraction_plan(terms, out, shapes):
    sizes = _sizes(terms, shapes)
    work = 1
    for n in sizes.values():
        work *= n
    fresh = [c for c in _LETTERS if c not in sizes]
    grads = tuple(_grad_plan(k, terms, out, shapes, sizes, fresh, work > _BLAS_WORK)
                  for k in range(len(terms)))
    widen = len(terms) == 1 and any(c not in out for c in terms[0])
    return Plan(",".join(terms) + "->" + out, len(terms) == 2 and work > _BLAS_WORK, grads,
                 tuple(sizes[c] for c in out), widen)


def _grad_plan(k, terms, out, shapes, sizes, fresh, optimize):
    """See Note [Einsum plans]."""
    others = terms[:k] + terms[k + 1:]
    full = set(out)
    for t, s in zip(others, shapes[:k] + shapes[k + 1:]):
        full.update(c for c, n in zip(t, s) if n == sizes[c])
    counts = Counter(terms[k])
    fresh = iter(fresh)
    helper_terms, helpers, result = [], [], []
    for c, n in zip(terms[k], shapes[k]):
        if n != sizes[c]:
            continue  # broadcast: summed here, restored by the reshape
        if c in result:
            f = next(fresh)
            helper_terms.append(c + f)
            helpers.append(("eye", n))
            result.append(f)
            continue
        if c not in full and counts[c] == 1:
            helper_terms.append(c)
            helpers.append(("ones", n))
        result.append(c)
    eq = ",".join([out, *others, *helper_terms]) + "->" + "".join(result)
    return _Grad(eq, tuple(helpers), tuple(shapes[k]), optimize)


def _path(terms, out, shapes):
    """Pairwise steps ``(operand indices, plans)`` along numpy's greedy contraction path; the
    operand list evolves as numpy's does (contracted ones removed, the result appended)."""
    dummies = [np.broadcast_to(np.zeros(()), s) for s in shapes]
    path = np.einsum_path(",".join(terms) + "->" + out, *dummies, optimize="greedy")[0]
    terms, shapes = list(terms), list(shapes)
    steps = []
    for inds in path[1:]:
        inds = tuple(sorted(inds))
        group = [terms[i] for i in inds]
        gshapes = [shapes[i] for i in inds]
        for i in reversed(inds):
            del terms[i], shapes[i]
        rest = set(out).union(*terms)
        if len(group) == 1:
            keep = out if not terms else _kept(group[0], rest)
            plans = [contraction_plan(group, keep, gshapes)]
        else:  # a step of more than two operands (an outer product) goes left to right
            plans = []
            t, s = group[0], gshapes[0]
            for j in range(1, len(group)):
                last = j == len(group) - 1 and not terms
                keep = out if last else _kept(t + group[j], rest.union(*group[j + 1:]))
                plans.append(contraction_plan([t, group[j]], keep, [s, gshapes[j]]))
                t, s = keep, plans[-1].shape
        steps.append((inds, tuple(plans)))
        terms.append(keep)
        shapes.append(plans[-1].shape)
    return tuple(steps)


def _kept(labels, needed):
    """The labels (once each, in order) that a later contraction or the output needs."""
    return "".join(dict.fromkeys(c for c in labels if c in needed))


def sublist_labels(labels):
    """A subscript list of torch's sublist format (ints 0-51, ``...``) as equation text."""
    out = []
    for n in labels:
        if n is Ellipsis:
            out.append("...")
        elif not isinstance(n, int) or not 0 <= n < 52:
            raise ValueError("einsum(): subscript in subscript list is not within the valid "
                             "range [0, 52)")
        else:
            out.append(_LETTERS[n])
    return "".join(out)


@functools.lru_cache(maxsize=256)
def tensordot_plan(sa, sb, dims_a, dims_b):
    """The plan of tensordot as the einsum it is: free dims of ``a``, then free dims of ``b``."""
    ta = _LETTERS[:len(sa)]
    free_b = iter(_LETTERS[len(sa):])
    tb = [None] * len(sb)
    for da, db in zip(dims_a, dims_b):
        tb[db] = ta[da]
    tb = "".join(c if c is not None else next(free_b) for c in tb)
    out = "".join(c for i, c in enumerate(ta) if i not in dims_a) + "".join(
        c for i, c in enumerate(tb) if i not in dims_b)
    return contraction_plan([ta, tb], out, [sa, sb])
