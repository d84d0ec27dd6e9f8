"""Utilities outside the tensor core, as ``torch.utils``: ``data`` holds datasets and loaders."""

from . import data

__all__ = ["data"]
