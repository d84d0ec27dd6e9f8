"""``torch.utils.hooks``: the ``RemovableHandle`` every ``register_*_hook`` returns.

graphgrad has two handle classes (modules' and autograd's, which must not import the module
system); ``isinstance`` against this one accepts both, as torch's single class does.
"""

from ..autograd.graph import RemovableHandle as _GraphHandle
from ..nn.modules.hooks import RemovableHandle as _ModuleHandle

__all__ = ["RemovableHandle"]


class _HandleMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, (_ModuleHandle, _GraphHandle))


class RemovableHandle(_ModuleHandle, metaclass=_HandleMeta):
    """``remove()`` takes a hook out of the dict (and extra dicts) it was registered in."""
