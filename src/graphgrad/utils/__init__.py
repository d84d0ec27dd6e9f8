"""Utilities outside the tensor core, as ``torch.utils``: ``data`` holds datasets and loaders,
``checkpoint`` activation checkpointing, ``hooks`` the hook handle."""

from . import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
