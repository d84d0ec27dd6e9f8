"""``graphgrad.testing``: torch.testing's ``assert_close`` and ``make_tensor``.

Comparison rules, default tolerances and error messages follow torch 2.13's.
"""

from __future__ import annotations

from ._comparison import assert_close
from ._creation import make_tensor
from ._deprecated import assert_allclose

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
