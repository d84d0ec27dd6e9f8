"""Gather/scatter family: gather, scatter, scatter_add, index_select, index_add, masked_fill,
masked_select, take, take_along_dim, where(cond), one_hot.
"""

from __future__ import annotations

__all__: list[str] = []
