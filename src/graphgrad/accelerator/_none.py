"""The error every device call of ``torch.accelerator`` raises on a CPU-only build."""

from __future__ import annotations


def no_accelerator():
    """Raises as torch 2.13's CPU build does when a call needs an accelerator device."""
    raise RuntimeError("Cannot access accelerator device when none is available.")
