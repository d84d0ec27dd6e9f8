"""Lazy imports of the optional ONNX packages, with an error that names the extra to install."""

from __future__ import annotations

__all__ = ["require_onnx", "require_onnxruntime"]

_HINT = "pip install 'graphgrad[onnx]' (onnx==1.23.2, onnxruntime==1.32.0)"


def require_onnx():
    """The ``onnx`` module; ImportError naming the ``onnx`` extra when it is missing."""
    try:
        import onnx
    except ImportError as exc:
        raise ImportError(f"graphgrad.onnx needs the 'onnx' package: {_HINT}") from exc
    return onnx


def require_onnxruntime():
    """The ``onnxruntime`` module; ImportError naming the ``onnx`` extra when it is missing."""
    try:
        import onnxruntime
    except ImportError as exc:
        raise ImportError("graphgrad.onnx needs the 'onnxruntime' package to run or check an "
                          f"exported model: {_HINT}") from exc
    return onnxruntime
