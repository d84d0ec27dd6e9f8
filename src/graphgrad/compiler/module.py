"""``graphgrad.compile(model)``: a wrapper Module whose calls run the compiled model."""

from __future__ import annotations

from ..nn.modules.module import Module
from .api import CompiledFunction

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """Wraps ``_orig_mod`` (as torch's OptimizedModule); parameters and state_dict are the
    original module's, under the ``_orig_mod.`` prefix as in torch."""

    def __init__(self, mod, **opts):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", CompiledFunction(
            lambda *a, **k: mod(*a, **k), modules=(mod,), **opts))

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)
