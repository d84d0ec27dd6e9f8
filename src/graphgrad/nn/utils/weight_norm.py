"""``torch.nn.utils.weight_norm``: the hook-based weight normalisation (deprecated in torch in
favour of ``parametrizations.weight_norm``). A parameter ``w`` becomes ``w_g`` (its norm over
every dim but ``dim``) and ``w_v`` (its direction), and a forward pre-hook recomputes
``w = w_v * (w_g / norm_except_dim(w_v))`` before each forward.
"""

from __future__ import annotations

import warnings

from .. import parameter as _parameter
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over all dims but ``dim``, keeping them as size 1; ``dim=-1``
    is the norm of the whole tensor (0-d), as torch's."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        shape = (v.shape[0],) + (1,) * (v.dim() - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(shape)
    if dim == v.dim() - 1:
        shape = (1,) * (v.dim() - 1) + (v.shape[-1],)
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _uninitialized():
    # lazy modules' placeholder class (a tuple of none where it does not exist)
    return getattr(_parameter, "UninitializedParameter", ())


def _weight_norm(v, g, dim=0):
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_g`` and ``name_v``."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, _uninitialized()):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparametrises ``module.<name>`` as ``name_g * name_v / ||name_v||`` (norm over all dims
    but ``dim``; ``dim=None``: the whole tensor).

    >>> import graphgrad as torch
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
    >>> sorted(n for n, _ in m.named_parameters()), m.weight_g.shape
    (['bias', 'weight_g', 'weight_v'], torch.Size([2, 1]))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undoes ``weight_norm``: ``name`` is a plain parameter holding the current weight again."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
