"""Neural-network building blocks, as ``torch.nn``: ``Module`` and its layers, ``Parameter``,
``init``, ``utils``; ``functional`` holds the stateless ops."""

from . import functional, init, parallel, utils
from .modules import *  # noqa: F403 - the layer classes are nn's public names
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter

__all__ = ["functional", "init", "parallel", "utils", "Parameter", "Buffer", *_modules_all]
