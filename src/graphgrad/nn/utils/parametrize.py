"""``torch.nn.utils.parametrize``: a tensor of a module computed from other tensors.

``register_parametrization(m, "weight", P)`` moves ``m.weight`` to
``m.parametrizations.weight.original`` and turns ``weight`` into a property of a generated
subclass (``ParametrizedLinear``) that returns ``P(original)``, as torch does.
"""

from __future__ import annotations

import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached():
    """Inside this context each parametrized tensor is computed once, on first use, and reused
    (e.g. a weight shared by the steps of an RNN)."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, x) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    # torch's ``dest.set_(src)``: dest keeps its identity (optimizers hold it) and takes src's
    # storage, shape included.
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, with the unparametrized tensor as ``original`` (or
    ``original0..n`` when the first parametrization's ``right_inverse`` returns a sequence)."""

    def __init__(self, modules, original, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     "tensors (list, tuple...). Got element "
                                     f"{i} of the sequence with type {type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if z.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {z.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Sets the originals so that the parametrization evaluates to ``value``."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError("`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _maybe_set(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                 f"{type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or "
                                     f"reference-type opaques. Got element {i} of type "
                                     f"{type(tensor).__name__}.")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{tensor.dtype} while `original{i}` has dtype "
                                     f"{original_i.dtype}")
                _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _default_deepcopy(self, memo):
    obj = memo.get(id(self))
    if obj is not None:
        return obj
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, deepcopy(getattr(self, slot), memo))
    return replica


def _getstate(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                       "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                       "inference-and-or-resuming-training")


def _inject_new_class(module: Module) -> None:
    # A per-module subclass, so the properties added for this module touch no other instance.
    cls = module.__class__
    dct = {"__getstate__": _getstate, "__module__": cls.__module__}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = _default_deepcopy
    object.__setattr__(module, "__class__", type(f"Parametrized{cls.__name__}", (cls,), dct))


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Makes ``module.<tensor_name>`` return ``parametrization(original)``; a second call on
    the same name appends to the chain. ``unsafe`` skips the shape/dtype consistency checks.

    >>> import graphgrad as torch
    >>> from graphgrad.nn.utils import parametrize
    >>> class Sym(torch.nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).mT
    >>> m = parametrize.register_parametrization(torch.nn.Linear(3, 3), "weight", Sym())
    >>> type(m).__name__, torch.equal(m.weight, m.weight.T)
    ('ParametrizedLinear', True)
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.dtype: {y.dtype}\n"
                                 f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if x.shape != y.shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.shape: {y.shape}\n"
                                 f"parametrization(module.{tensor_name}).shape: {x.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    _check_right_inverse(z, y, tensor_name)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def _check_right_inverse(z, y, tensor_name) -> None:
    if not isinstance(z, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                         f"{type(z).__name__}")
    for what, got, want in (("dtype", z.dtype, y.dtype), ("shape", z.shape, y.shape)):
        if got != want:
            raise ValueError(f"The tensor returned by parametrization.right_inverse must have "
                             f"the same {what} as module.{tensor_name}, unless the `unsafe` "
                             f"flag is enabled.\nmodule.{tensor_name}.{what}: {want}\n"
                             f"returned {what}: {got}")


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undoes ``register_parametrization`` on ``tensor_name``: the tensor becomes a plain
    parameter (or buffer) again, holding the parametrized value if ``leave_parametrized``, else
    the original. The module gets its own class back when no parametrization remains."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        object.__setattr__(module, "__class__", module.__class__.__bases__[0])
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization was registered."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Registers ``from_module``'s parametrizations (all, or ``tensor_name``'s) on
    ``to_module`` and shares the original tensors with it."""
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name)))
            for param_func in from_module.parametrizations[name]:
                register_parametrization(to_module, name, param_func)
            source = from_module.parametrizations[name]
            target = to_module.parametrizations[name]
            if hasattr(source, "original"):
                target.original = source.original
            else:
                num = 0
                while hasattr(source, f"original{num}"):
                    setattr(target, f"original{num}", getattr(source, f"original{num}"))
                    num += 1
    return to_module
