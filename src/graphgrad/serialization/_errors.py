"""The error ``load`` raises for a file it cannot read."""

from __future__ import annotations

__all__ = ["SerializationError"]


class SerializationError(RuntimeError, ValueError):
    """A file that ``load`` cannot read: corrupt, truncated or unsupported.

    It is both a RuntimeError (what torch.load raises for a broken archive) and a ValueError
    (bad file contents), so either ``except`` catches it. A pickle that needs a global outside
    the weights-only allowlist raises ``pickle.UnpicklingError`` instead, as torch.load does.
    """
