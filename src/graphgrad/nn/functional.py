"""Stateless neural-network functions, as ``torch.nn.functional`` (activations, padding, ...).

The ops themselves live in the op table (``graphgrad.ops``); this module gives them torch's
``F.<name>`` spelling.
"""

from __future__ import annotations

from ..ops.nn import log_softmax, softmax

__all__ = ["softmax", "log_softmax"]
