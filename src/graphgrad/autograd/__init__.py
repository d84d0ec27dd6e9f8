"""Automatic differentiation: the engine entry points, grad modes and gradcheck."""

from . import errors, forward_ad, functional, grad_mode, graph
from .anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .engine import backward, grad
from .function import Function
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .missing_grad import NoGradReport, why_no_grad
from .nonfinite import NonFiniteError, detect_nonfinite
from .plan import BackwardPlan, plan
from .variable import Variable

__all__ = [
    "backward", "grad", "gradcheck", "GradcheckError", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled",
    "grad_mode", "graph", "functional", "function", "Function", "errors", "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "gradgradcheck", "Variable",
    "why_no_grad", "NoGradReport", "detect_nonfinite", "NonFiniteError", "forward_ad",
    "plan", "BackwardPlan",
]
