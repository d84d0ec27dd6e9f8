"""``graphgrad.storage``: torch.storage's classes (the storages live in ``_storage``)."""

from __future__ import annotations

from ._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
