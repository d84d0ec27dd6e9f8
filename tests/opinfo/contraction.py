"""OpInfos for contractions beyond matmul: einsum, tensordot, addmm, baddbmm."""

from __future__ import annotations

from .core import OpInfo


def op_db() -> list[OpInfo]:
    return []
