"""Builds the engine's diagnostic errors: a saved value changed in place, a graph already
freed (and whether a tensor carried over from an earlier iteration is why), and anomaly mode's
NaN. Each names the node, the shapes and the user's lines that matter, then a fix.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from .errors import AnomalyError, GraphFreedError, SavedTensorModifiedError

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _name(node) -> str:
    return type(node).__name__


def _describe(array) -> str:
    """torch's ``[torch.FloatTensor [2, 3]]``."""
    a = np.asarray(array)
    return f"[torch.{_TYPE_NAMES.get(a.dtype.name, a.dtype.name)} {list(a.shape)}]"


def _made_at(node) -> str:
    site = getattr(node, "_site", None)
    return site.short() if site is not None else "an unrecorded line"


def _versioned_entries(node):
    """The saved values that carry a version (tensor inputs and a saved output), in the order
    of ``node._versions``, each as (array, its grad_fn or None, label)."""
    op = node._op
    if op is None:
        return []
    from .._tensor import Tensor

    entries = []
    for s, v in zip(op.save, node._saved if isinstance(node._saved, tuple) else ()):
        if s == "out":
            entries.append((v, node, "its own output"))
        elif isinstance(v, Tensor):
            entries.append((v._data, v.grad_fn, f"input {s}"))
    return entries


def modified_error(node, i, cell, expected, entry=None) -> SavedTensorModifiedError:
    """Saved value ``i`` of ``node`` is at version ``cell[0]`` instead of ``expected``;
    ``entry`` (array, its grad_fn, label) describes it when the node is not an op's (a custom
    Function's saved tensors)."""
    if entry is None:
        entries = _versioned_entries(node)
        entry = entries[i] if i < len(entries) else (None, None, f"saved value {i}")
    array, owner, label = entry
    what = _describe(array) if array is not None else "a saved tensor"
    if owner is not None:
        # torch 2.13 names the producing op without the "Backward0" suffix ("of Sigmoid,")
        what += f", which is output 0 of {re.sub(r'Backward[0-9]*$', '', _name(owner))},"
    summary = ("one of the variables needed for gradient computation has been modified by an "
               f"inplace operation: {what} is at version {cell[0]}; expected version "
               f"{expected} instead.")
    changed = cell[1] if len(cell) > 1 else None
    details = [f"saved by: {_name(node)} ({label})",
               f"changed at: {changed.short() if changed is not None else 'unknown'} "
               f"(version {expected} -> {cell[0]})"]
    return SavedTensorModifiedError(
        summary, op=_name(node), shapes=None if array is None else [list(np.shape(array))],
        site=getattr(node, "_site", None), details=details,
        fix="use the out-of-place form of the op that changed it (e.g. relu instead of relu_, "
            "x = x + y instead of x += y), or .clone() the value before changing it")


def _reaches(start, target, limit=100_000):
    seen, stack = set(), [start]
    while stack and len(seen) < limit:
        n = stack.pop()
        if n is target:
            return True
        if n in seen:
            continue
        seen.add(n)
        stack.extend(c for c in getattr(n, "_next", ()) if c is not None)
    return False


def _carrier(node, freed, roots):
    """The edge by which this backward's newer graph (nodes made after the freeing backward
    began) enters an older one that leads to ``node``: (newer node, input slot, older node).
    That input is a tensor carried over from an earlier iteration."""
    seen, stack = set(), [r for r in roots if r is not None and r._seq > freed.seq]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for k, child in enumerate(getattr(n, "_next", ())):
            if child is None or type(child).__name__ == "AccumulateGrad":
                continue
            if getattr(child, "_seq", -1) > freed.seq:
                stack.append(child)
            elif _reaches(child, node):
                return n, k, child
    return None, None, None


def freed_error(node, freed, roots) -> GraphFreedError:
    by = freed.site.short() if freed.site is not None else "an earlier backward()"
    details = [f"its saved values were freed by the backward() at {by}"]
    fix = ("call backward() once per forward pass, or pass retain_graph=True to the first "
           "backward() if you really need to go through the same graph twice")
    carrier, slot, old = _carrier(node, freed, roots)
    if carrier is not None:
        meta = carrier._meta[slot] if slot < len(carrier._meta) else None
        shape = list(meta[0]) if meta else "?"
        details.append(
            f"cause: a tensor of shape {shape} (grad_fn={_name(old)}, made at {_made_at(old)}) "
            f"comes from before that backward(): it was carried over from an earlier iteration "
            f"and used again by {_name(carrier)} (made at {_made_at(carrier)}), so this "
            f"backward runs into the old, already freed graph")
        fix = ("call .detach() on the tensor you carry from one iteration to the next (for "
               "example h = h.detach() after each step) so the new graph stops there; "
               "retain_graph=True would instead keep every old graph alive and growing")
    return GraphFreedError(_FREED_MESSAGE, op=_name(node), site=getattr(node, "_site", None),
                           details=details, fix=fix)


def anomaly_error(node, output_index) -> AnomalyError | None:
    """Warns with the forward traceback of ``node`` (as torch does); for a NaN gradient in
    output ``output_index`` also returns the error to raise."""
    site = getattr(node, "_site", None)
    trace = site.traceback() if site is not None else "  (no forward trace recorded)"
    warnings.warn(f"Error detected in {_name(node)}. Traceback of forward call that caused the "
                  f"error:\n{trace}", UserWarning, stacklevel=4)
    if output_index is None:
        return None
    return AnomalyError(
        f"Function '{_name(node)}' returned nan values in its {output_index}th output.",
        op=_name(node), site=site,
        details=[f"forward call:\n{trace}"],
        fix="look for log/sqrt/division at zero or of a negative value in that forward line; "
            "clamp the input (x.clamp_min(eps)) or use a stable form (log1p, logsumexp, "
            "log_softmax)")
