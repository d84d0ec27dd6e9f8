"""Structural ops: tril, triu, diag, diagonal, trace, roll, rot90, pad, meshgrid, broadcast_to,
broadcast_tensors, kron.
"""

from __future__ import annotations

__all__: list[str] = []
