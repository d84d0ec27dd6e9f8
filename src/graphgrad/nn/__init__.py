"""Neural-network building blocks, as ``torch.nn``: ``Module`` and its layers, ``Parameter``,
``init``, ``utils``; ``functional`` holds the stateless ops."""

from . import attention, functional, init, parallel, utils
from .modules import *  # noqa: F403 - the layer classes are nn's public names
from .modules import __all__ as _modules_all
from .modules import _torch_layout
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

_torch_layout.install()  # torch's class paths (nn.modules.activation.MultiheadAttention, ...)

__all__ = ["attention", "functional", "init", "parallel", "utils", "DataParallel", "Parameter",
           "Buffer", "UninitializedParameter", "UninitializedBuffer", *_modules_all]
