"""``RemovableHandle``: what every ``register_*_hook`` returns (``torch.utils.hooks``).

The handle holds weak references to the hook dicts it was put in, so a handle kept past its
module's life does not keep the module alive.
"""

from __future__ import annotations

import weakref

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Removes one hook from its dict (and from the dicts of its flags) on ``remove()``."""

    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict or ())

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
