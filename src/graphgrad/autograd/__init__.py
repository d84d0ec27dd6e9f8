"""Automatic differentiation: the engine entry points, grad modes and gradcheck."""

from . import functional, grad_mode, graph
from .engine import backward, grad
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck

__all__ = [
    "backward", "grad", "gradcheck", "GradcheckError", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled",
    "grad_mode", "graph", "functional",
]
