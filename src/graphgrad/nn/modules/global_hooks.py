"""Forward hooks that run around every Module's forward, as ``torch.nn.modules.module``'s
``register_module_forward_pre_hook`` and ``register_module_forward_hook``: they run before each
module's own hooks. ``Module.__call__`` reads these dicts."""

from __future__ import annotations

from collections import OrderedDict

from .hooks import RemovableHandle

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook"]

_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """Registers ``hook(module, args)`` to run before every module's forward (and before its own
    pre-hooks); a non-None return replaces the positional args."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False) -> RemovableHandle:
    """Registers ``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
    ``with_kwargs``) to run after every module's forward, before its own forward hooks."""
    handle = RemovableHandle(_global_forward_hooks, extra_dict=[
        _global_forward_hooks_always_called, _global_forward_hooks_with_kwargs])
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle
