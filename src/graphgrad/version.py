"""``graphgrad.version``: torch.version's fields, as a CPU-only build sets them (no CUDA, HIP,
ROCm or XPU toolkit). ``__version__`` is graphgrad's own version."""

from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

from .torch_version import TorchVersion

__version__ = TorchVersion("0.1.0")
debug = False
cuda = None
hip = None
rocm = None
xpu = None
git_version = "unknown"  # graphgrad is not built from torch's repository
