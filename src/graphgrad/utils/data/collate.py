"""Collation, as ``torch.utils.data``: turning a list of samples into one batch.

``default_collate`` stacks tensors and NumPy arrays along a new first dimension, turns Python
numbers into tensors (int -> int64, float -> float64), keeps strings as a list, and recurses into
dicts, namedtuples, tuples (which come back as lists, as in torch) and lists.
"""

from __future__ import annotations

import collections.abc
import copy
import re
from functools import reduce

import numpy as np

from ..._dtype import float64, from_numpy_dtype, promote_types
from ..._tensor import Tensor
from ...ops.creation import from_numpy, tensor
from ...ops.movement import stack

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "default_collate_err_msg_format"]

_np_str_obj = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def default_convert(data):
    """Converts NumPy arrays and scalars inside ``data`` to tensors; the rest is unchanged.

    The DataLoader applies it to each sample when batching is off (``batch_size=None``).

    >>> import numpy as np
    >>> from graphgrad.utils.data import default_convert
    >>> default_convert({"x": np.array([1, 2]), "y": 3})
    {'x': tensor([1, 2]), 'y': 3}
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and _np_str_obj.search(data.dtype.str):
            return data
        return from_numpy(np.array(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collates ``batch`` recursively; ``collate_fn_map`` maps element types to leaf collators.

    Each leaf collator is called as ``fn(batch, collate_fn_map=...)``. An exact type match is
    tried first, then ``isinstance`` against the map's keys in insertion order.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        def sub(key):
            return collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                # The mapping type may carry extra state, so a copy is updated rather than
                # rebuilt from its type.
                clone = copy.copy(elem)
                clone.update({key: sub(key) for key in elem})
                return clone
            return elem_type({key: sub(key) for key in elem})
        except TypeError:
            return {key: sub(key) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))  # tuples: a field of strings comes back as a tuple
        if isinstance(elem, tuple):
            # NOTE: a tuple comes back as a list, as torch does (for backward compatibility).
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = collate(s, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(s, collate_fn_map=collate_fn_map) for s in transposed])
        except TypeError:
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def _check_equal_shapes(shapes):
    ref = shapes[0]
    for i, s in enumerate(shapes):
        if s != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref)} "
                               f"at entry 0 and {list(s)} at entry {i}")


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    # torch converts each array to a tensor and stacks; stacking in NumPy gives the same values
    # and dtype (after torch's promotion) without a Tensor per sample.
    _check_equal_shapes([b.shape for b in batch])
    dt = reduce(promote_types, [from_numpy_dtype(b.dtype) for b in batch])
    return from_numpy(np.stack(batch).astype(dt.np, copy=False))


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    dt = reduce(promote_types, [from_numpy_dtype(b.dtype) for b in batch])
    return from_numpy(np.array(batch, dtype=dt.np))


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Puts each field of the samples into a tensor with a new outer (batch) dimension.

    >>> from collections import namedtuple
    >>> from graphgrad.utils.data import default_collate
    >>> default_collate([0, 1, 2])
    tensor([0, 1, 2])
    >>> default_collate([{"a": 0.5, "s": "x"}, {"a": 1.5, "s": "y"}])
    {'a': tensor([0.5000, 1.5000], dtype=torch.float64), 's': ['x', 'y']}
    >>> default_collate([(0, 1), (2, 3)])
    [tensor([0, 2]), tensor([1, 3])]
    >>> Point = namedtuple("Point", ["x", "y"])
    >>> default_collate([Point(0, 0), Point(1, 1)])
    Point(x=tensor([0, 1]), y=tensor([0, 1]))
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
