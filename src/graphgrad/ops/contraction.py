"""Contractions beyond matmul: einsum, tensordot, addmm, baddbmm."""

from __future__ import annotations

__all__: list[str] = []
