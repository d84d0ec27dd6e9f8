"""Argument normalisers shared by the layer modules, as ``torch.nn.modules.utils``.

``_pair(3) == (3, 3)`` while an iterable is kept as given (``_pair((1, 2, 3))`` is not checked),
exactly as torch does, so modules store and print the same tuples torch's do.
"""

from __future__ import annotations

import collections.abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``t`` reversed with each element repeated ``n`` times: a conv's padding as F.pad's."""
    return tuple(x for x in reversed(t) for _ in range(n))


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strips ``prefix`` (``"module."`` of a DistributedDataParallel checkpoint) from the keys of
    ``state_dict`` in place, and from its ``_metadata`` keys when it has them."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[key[len(prefix):]] = state_dict.pop(key)
    meta = getattr(state_dict, "_metadata", None)
    if meta is not None:
        for key in list(meta):
            # the metadata of the wrapper itself is keyed by the prefix without its dot
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                meta[key[len(prefix):]] = meta.pop(key)
