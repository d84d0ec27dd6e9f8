"""``graphgrad.backends.mkl``: True only when NumPy's BLAS is Intel MKL."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    import numpy as np

    try:
        name = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except (KeyError, TypeError):  # an older NumPy without the dict form
        return False
    return "mkl" in str(name).lower()
