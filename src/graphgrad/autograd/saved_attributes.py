"""torch's ``grad_fn._saved_<name>`` attributes: what a node saved for backward, read by name.

torch generates one attribute per saved value of each derivative formula (``_saved_self`` and
``_saved_other`` for ``mul``, ``_saved_result`` for ``exp``). graphgrad's op records name their
saved values by position instead (``save=(0, 1)``, ``"out"``), so the common names map onto
those positions: ``self`` is input 0, ``other`` input 1, ``result`` the output. A saved input
comes back as the very tensor that was saved (``y.grad_fn._saved_self is a``, as in torch); a
saved output as a new tensor sharing its storage; values packed by ``saved_tensors_hooks``
go through the unpack hook on every access, as torch does.
"""

from __future__ import annotations

_POSITIONS = {"self": 0, "other": 1, "result": "out"}


def saved_attribute(node, name: str):
    """The value behind ``node._saved_<what>``; AttributeError when the node saved no such
    value, RuntimeError (torch's message) after a backward freed it."""
    from .._tensor import Tensor, wrap
    from .graph import Freed, Packed, unpack_value

    what = name[len("_raw_saved_"):] if name.startswith("_raw_saved_") else name[len("_saved_"):]
    op = getattr(node, "_op", None)
    save = getattr(op, "save", None) or ()
    slot = _POSITIONS.get(what)
    if slot is None or slot not in save:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    saved = node._saved
    if isinstance(saved, Freed):
        raise RuntimeError(
            "Trying to backward through the graph a second time (or directly access saved "
            "tensors after they have already been freed). Saved intermediate values of the "
            "graph are freed when you call .backward() or autograd.grad(). Specify "
            "retain_graph=True if you need to backward through the graph a second time or if "
            "you need to access saved tensors after calling backward.")
    value = saved[save.index(slot)]
    if isinstance(value, Packed):
        return unpack_value(value, node, True)
    if isinstance(value, Tensor):
        return value
    return wrap(value, False, None)  # a saved output array: a new tensor on the same storage
