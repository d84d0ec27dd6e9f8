"""Numeric constants at the top level, as torch exports them: ``pi``, ``e``, ``inf``, ``nan``.

``newaxis`` is None, so ``x[:, torch.newaxis]`` inserts a dimension as NumPy's does.
"""

from __future__ import annotations

import math

__all__ = ["pi", "e", "inf", "nan", "newaxis"]

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None
