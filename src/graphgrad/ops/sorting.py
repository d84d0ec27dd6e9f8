"""Sorting, selection and scans: sort, argsort, topk, kthvalue, median, mode, unique, cumsum,
cumprod.
"""

from __future__ import annotations

__all__: list[str] = []
