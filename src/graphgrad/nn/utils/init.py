"""``torch.nn.utils.skip_init``: build a module without running its parameter initialisation.

torch builds the module on the 'meta' device and then allocates empty storage; graphgrad has no
meta device, so the ``nn.init`` functions are made no-ops while the constructor runs.
"""

from __future__ import annotations

import inspect
import threading

from .. import init as _init
from ..modules.module import Module

__all__ = ["skip_init"]

_lock = threading.Lock()


def _keep(tensor, *args, **kwargs):
    return tensor


def skip_init(module_cls, *args, **kwargs):
    """An instance of ``module_cls(*args, **kwargs)`` whose parameters and buffers are left as
    allocated (zeros in graphgrad, whose ``empty`` is deterministic) instead of initialised.

    >>> import graphgrad as torch
    >>> torch.nn.utils.skip_init(torch.nn.Linear, 2, 1).weight
    Parameter containing:
    tensor([[0., 0.]], requires_grad=True)
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    names = [n for n in dir(_init) if n.endswith("_") and not n.startswith("_")
             and callable(getattr(_init, n))]
    # The init functions are module attributes looked up at call time (``init.uniform_(...)``),
    # so swapping them for the constructor's duration skips the work; the lock keeps two
    # threads from restoring each other's swaps.
    with _lock:
        saved = {n: getattr(_init, n) for n in names}
        try:
            for n in names:
                setattr(_init, n, _keep)
            return module_cls(*args, **kwargs)
        finally:
            for n, fn in saved.items():
                setattr(_init, n, fn)
