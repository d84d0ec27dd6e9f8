"""Higher-order functional API, as ``torch.autograd.functional``: vjp, jvp, jacobian, hessian,
hvp, vhp."""

from __future__ import annotations

__all__: list[str] = []
