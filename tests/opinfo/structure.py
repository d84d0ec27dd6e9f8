"""OpInfos for structural ops: tril, triu, diag, diagonal, trace, roll, rot90, pad, meshgrid,
broadcast_to, broadcast_tensors, kron.
"""

from __future__ import annotations

from .core import OpInfo


def op_db() -> list[OpInfo]:
    return []
