"""``torch.nn.utils.spectral_norm``: the hook-based spectral normalisation. A parameter ``w``
becomes ``w_orig`` plus buffers ``w_u``, ``w_v`` (power-iteration vectors), and a forward
pre-hook sets ``w = w_orig / sigma`` with ``sigma = u . (W v)`` (``W``: ``w_orig`` as a
matrix), running the power iteration first in training mode, as torch's.
"""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...ops.linalg import dot, mv
from .. import functional as F
from ..parameter import Parameter
from .weight_norm import _uninitialized

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_orig``, ``name_u``, ``name_v``."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(self.dim,
                                            *[d for d in range(weight_mat.dim()) if d != self.dim])
        return weight_mat.reshape(weight_mat.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # u and v are updated in place (they are buffers), then cloned so that the graph
            # of sigma keeps the values this forward used.
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone()
                v = v.clone()
        sigma = dot(u, mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # v such that u = normalize(W v), rescaled so that sigma = target_sigma
        v = weight_mat.t().mm(weight_mat).pinverse().mm(weight_mat.t()).mm(u.unsqueeze(1))
        v = v.squeeze(1)
        return v.mul_(target_sigma / dot(u, mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, _uninitialized()):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module.register_state_dict_post_hook(SpectralNormStateDictHook(fn))
        module.register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a version-0 state dict (``name``, ``name_orig``, ``name_u``; no ``name_v``)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        # graphgrad passes the module first; torch's registration of this hook does not
        state_dict, prefix, local_metadata, strict, missing_keys = args[-7:-2]
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is None or version < 1:
            weight_key = prefix + fn.name
            if (version is None and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))
                    and weight_key not in state_dict):
                return
            has_missing_keys = False
            for suffix in ("_orig", "", "_u"):
                key = weight_key + suffix
                if key not in state_dict:
                    has_missing_keys = True
                    if strict:
                        missing_keys.append(key)
            if has_missing_keys:
                return
            with no_grad():
                weight_orig = state_dict[weight_key + "_orig"]
                weight = state_dict.pop(weight_key)
                sigma = (weight_orig / weight).mean()
                weight_mat = fn.reshape_weight_to_matrix(weight_orig)
                u = state_dict[weight_key + "_u"]
                state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records ``spectral_norm.<name>.version`` in the state dict's metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides ``module.<name>`` by its spectral norm, estimated by power iteration; ``dim``
    defaults to 1 for transposed convolutions, 0 otherwise.

    >>> import graphgrad as torch
    >>> m = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3))
    >>> sorted(m.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    if dim is None:
        transposed = type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d",
                                               "ConvTranspose3d")
        dim = 1 if transposed else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undoes ``spectral_norm``: ``name`` is a plain parameter holding the normalised weight."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in module._load_state_dict_pre_hooks.items():
        if isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
