"""``graphgrad.backends.cuda``: torch.backends.cuda's switches (this is no array backend; a
CUDA array backend would be a CuPy module such as ``backends/cupy.py``).

``matmul.allow_tf32`` reads and sets the float32 matmul precision, as torch's does ('high' when
True); the scaled-dot-product kernel switches are recorded.
"""

from __future__ import annotations

from .. import _flags

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp"]


def is_built() -> bool:
    return False


class _Matmul:
    """``torch.backends.cuda.matmul``: unknown attributes raise AttributeError, as torch's."""

    _NAMES = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
              "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation")

    def __init__(self):
        object.__setattr__(self, "_values", {
            "allow_fp16_reduced_precision_reduction": True,
            "allow_bf16_reduced_precision_reduction": True, "allow_fp16_accumulation": False})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _flags.flags.matmul_precision != "highest"
        if name in self._NAMES:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            _flags.flags.matmul_precision = "high" if value else "highest"
        elif name in self._NAMES:
            self._values[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = _Matmul()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)
