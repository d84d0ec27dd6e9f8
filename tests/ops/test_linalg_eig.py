"""linalg.eig and linalg.eigvals return complex tensors in torch; graphgrad has no complex dtype,
so they raise NotImplementedError naming what is missing (checked against torch's dtype)."""

from __future__ import annotations

import pytest
import torch

import graphgrad as gg


@pytest.mark.parametrize("name", ["eig", "eigvals"])
def test_eig_needs_complex(name):
    a = [[2.0, 1.0], [-1.0, 2.0]]
    out = getattr(torch.linalg, name)(torch.tensor(a))
    first = out[0] if isinstance(out, tuple) else out
    assert first.dtype.is_complex  # what graphgrad would have to return
    with pytest.raises(NotImplementedError, match="complex dtype"):
        getattr(gg.linalg, name)(gg.tensor(a))
