"""``DataParallel`` as torch builds it without an accelerator: the wrapper keeps ``module``
(state-dict keys gain the ``module.`` prefix), ``device_ids`` is empty and forward calls the
module directly; the functional ``data_parallel`` raises as torch's does without a device."""

from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module``; on a CPU-only build every call runs the module itself.

    >>> import graphgrad as torch
    >>> dp = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    >>> list(dp.state_dict())
    ['module.weight', 'module.bias']
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0) -> None:
        super().__init__()
        # NOTE: torch returns here when no accelerator is available, before setting dim,
        # output_device or src_device_obj; reading them raises AttributeError as in torch.
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """torch's functional DataParallel; it needs an accelerator and raises without one."""
    raise RuntimeError("device type could not be determined")
