"""``torch.nn.utils.prune``: pruning a module's tensor by a mask, as torch does it.

Pruning ``name`` moves the parameter to ``name_orig``, stores the mask as the buffer
``name_mask`` and installs the method as a forward pre-hook that recomputes
``name = name_mask * name_orig`` before every call; pruning again combines masks through a
``PruningContainer``; ``remove`` makes the pruning permanent.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import graphgrad as torch

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """Abstract base of the pruning methods; subclasses define ``compute_mask``."""

    _tensor_name: str

    def __call__(self, module, inputs):
        # The forward pre-hook: the pruned tensor is recomputed so it follows weight_orig.
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for ``t`` (same shape), combining with ``default_mask``."""

    def apply_mask(self, module):
        """``name_mask * name_orig`` for the module this method prunes."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Adds the pruning re-parametrization of ``module.name`` and returns the method."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            # First pruning of this tensor: the parameter moves to name_orig.
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = torch.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` with this method's mask applied (no module involved)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as tensor t, got "
                    f"{importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else torch.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Makes the pruning permanent: ``name`` becomes a plain parameter holding the pruned
        values; ``name_orig`` and ``name_mask`` are deleted."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls, module, name, *args, **kwargs):
    """The new method, folded into a PruningContainer with the one already pruning ``name``."""
    old_method = None
    found = 0
    hooks_to_remove = []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            hooks_to_remove.append(k)
            found += 1
    if found > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
            f"{module}. Use a PruningContainer.")
    for k in hooks_to_remove:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old_method is not None:
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            method = old_method
        else:
            container = PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
    return method


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied to one tensor; the newest acts only on the
    entries (or channels) the earlier ones kept."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Appends ``method`` (it must prune the same tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}."
                f" Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The newest method's mask computed on the still-unpruned part, merged into
        ``default_mask``."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            n_dims = t.dim()
            dim = method.dim
            if dim < 0:
                dim = n_dims + dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = [slice(None)] * n_dims
            slc[dim] = keep_channel
            slc = tuple(slc)
        elif method.PRUNING_TYPE == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (useful to make a tensor look pruned)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


def _topk_zeroed(mask, scores, k, largest):
    # Writes zeros at the k chosen entries of a flat view of the contiguous mask clone.
    with torch.no_grad():
        idx = torch.topk(scores.reshape(-1), k=k, largest=largest).indices
        mask.view(-1)[idx] = 0
    return mask


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries chosen uniformly at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            _topk_zeroed(mask, torch.rand_like(t.detach()), nparams_toprune, True)
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            _topk_zeroed(mask, torch.abs(t.detach()), nparams_toprune, False)
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim, keep):
    """Ones on the channels ``keep`` (a bool mask or indices) of ``dim``, zeros elsewhere."""
    mask = torch.zeros_like(t.detach())
    slc = [slice(None)] * len(t.shape)
    slc[dim] = keep
    mask[tuple(slc)] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` channels along ``dim`` chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        prob = torch.rand(tensor_size)
        threshold = torch.kthvalue(prob, k=nparams_toprune).values
        mask = _channel_mask(t, self.dim, prob > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        with torch.no_grad():
            norm = _compute_norm(t, self.n, self.dim)
            topk = torch.topk(norm, k=nparams_tokeep, largest=True)
        if nparams_toprune == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, topk.indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (multiplied into any earlier one)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Applies ``Identity`` pruning to ``module.name``; returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes ``amount`` random entries of ``module.name``; returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes the ``amount`` smallest-magnitude entries of ``module.name``.

    >>> import graphgrad as torch
    >>> from graphgrad.nn.utils import prune
    >>> m = prune.l1_unstructured(torch.nn.Linear(3, 2), "weight", amount=2)
    >>> int((m.weight_mask == 0).sum())
    2
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes ``amount`` random channels along ``dim`` of ``module.name``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prunes the (module, name) pairs in ``parameters`` together, as one flat tensor."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    to_vector = torch.nn.utils.parameters_to_vector
    with torch.no_grad():
        relevant_importance_scores = to_vector(
            [importance_scores.get((module, name), getattr(module, name))
             for module, name in parameters])
        default_mask = to_vector(
            [getattr(module, name + "_mask", torch.ones_like(getattr(module, name)))
             for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant_importance_scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer:pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def custom_from_mask(module, name, mask):
    """Prunes ``module.name`` with the given ``mask``; returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of ``module.name`` permanent and removes its hook."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module) -> bool:
    """Whether ``module`` or any submodule carries a pruning hook."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral)
            and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount, tensor_size) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _validate_structured_pruning(t) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount, tensor_size):
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return torch.norm(t, p=n, dim=dims)
