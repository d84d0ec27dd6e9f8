"""``graphgrad.types``: the type aliases torch.types gives annotations (``Number``, ``Device``,
``FileLike``, ``Storage``, ...)."""

from __future__ import annotations

import os
from typing import IO, Union

from ._device import device as _device
from ._tensor import Size, Tensor

__all__ = ["Number", "Device", "FileLike", "Storage", "Size", "Tensor", "IntLikeType",
           "FloatLikeType", "BoolLikeType", "py_sym_types"]

Number = int | float | bool
Device = _device | str | int | None
FileLike = Union[str, os.PathLike[str], IO[bytes]]  # noqa: UP007 - as torch spells it
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
py_sym_types = (int, float, bool)


class Storage:
    """``torch.types.Storage``: the protocol class annotations name; graphgrad's storages are
    ``graphgrad.UntypedStorage`` / ``TypedStorage``."""

    _cdata: int
    device: _device
    dtype: object
