"""OpInfos for sorting, selection and scans: sort, argsort, topk, kthvalue, median, mode, unique,
cumsum, cumprod.
"""

from __future__ import annotations

from .core import OpInfo


def op_db() -> list[OpInfo]:
    return []
