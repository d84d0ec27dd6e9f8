"""Neural-network building blocks, as ``torch.nn``; ``functional`` holds the stateless ops."""

from . import functional

__all__ = ["functional"]
