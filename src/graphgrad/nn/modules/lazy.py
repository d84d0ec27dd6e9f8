"""Lazy layers, as torch's: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d`` hold uninitialised parameters until
the first forward infers the input size; then the parameters are materialized and initialised
as the ordinary layer's, and the module turns into that layer (``cls_to_become``).

``LazyModuleMixin`` is the mechanism: a forward pre-hook that calls ``initialize_parameters``,
a load_state_dict pre-hook that materializes parameters from a checkpoint's shapes, and a
state_dict that keeps uninitialised entries as they are.
"""

from __future__ import annotations

import itertools

from ... import _dtype
from ...autograd.grad_mode import no_grad
from ...ops.creation import tensor
from .._uninitialized import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _BatchNorm,
    _InstanceNorm,
    _NormBase,
)
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .conv3d import Conv3d, ConvTranspose3d
from .linear import Linear

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


def _lazy_load_hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
                    unexpected_keys, error_msgs) -> None:
    """Materializes each uninitialised entry that the checkpoint holds initialised, with the
    checkpoint's shape (the values are copied by the ordinary loader right after)."""
    for name, param in itertools.chain(module._parameters.items(), module._buffers.items()):
        key = prefix + name
        if key in state_dict and param is not None and is_lazy(param):
            value = state_dict[key]
            if not is_lazy(value):
                with no_grad():
                    param.materialize(value.shape)


def _infer_parameters(module, args, kwargs=None):
    """The forward pre-hook: initialise from the first input, then become ``cls_to_become``."""
    module.initialize_parameters(*args, **(kwargs or {}))
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    delattr(module, "_initialize_hook")
    delattr(module, "_load_hook")
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """Mixed in before a Module class: its parameters may be ``UninitializedParameter``s that
    ``initialize_parameters(*forward_args)`` materializes on the first call.

    >>> import graphgrad as torch
    >>> layer = torch.nn.LazyLinear(4)
    >>> layer
    LazyLinear(in_features=0, out_features=4, bias=True)
    >>> layer(torch.ones(2, 3)).shape
    torch.Size([2, 4])
    >>> layer
    Linear(in_features=3, out_features=4, bias=True)
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(_lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (param if is_lazy(param) or keep_vars
                                              else param.detach())
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        # An entry uninitialised on both sides stays so: the ordinary loader, which compares
        # shapes, never sees it (torch skips the copy for it as well).
        both = {prefix + n for n, p in itertools.chain(self._parameters.items(),
                                                       self._buffers.items())
                if p is not None and is_lazy(p) and is_lazy(state_dict.get(prefix + n))}
        if both:
            state_dict = {k: v for k, v in state_dict.items() if k not in both}
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
        if both:
            missing_keys[:] = [k for k in missing_keys if k not in both]

    def initialize_parameters(self, *args, **kwargs):
        """Materializes and initialises the parameters from the first forward's arguments."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module (not its children) is uninitialised."""
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(),
                                                        self._buffers.values()))

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        # bias=False: no tensor is made only to be replaced below.
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    """``in_channels`` from dim 1 of a batched (dim 0 of an unbatched) first input."""

    _spatial_dims = 0

    def _lazy_init(self, out_channels, bias, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            with no_grad():
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        no_batch = self._spatial_dims + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) "
                               f"input to {type(self).__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]


def _lazy_conv(conv_cls, dims):
    class LazyConv(_LazyConvXdMixin, conv_cls):
        cls_to_become = conv_cls
        _spatial_dims = dims

        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                     groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                     device=None, dtype=None) -> None:
            # in_channels=0 and bias=False: the real tensors come at the first forward.
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, device=device, dtype=dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    return LazyConv


def _lazy_conv_transpose(conv_cls, dims):
    class LazyConvTranspose(_LazyConvXdMixin, conv_cls):
        cls_to_become = conv_cls
        _spatial_dims = dims

        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0,
                     output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                     padding_mode: str = "zeros", device=None, dtype=None) -> None:
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                             dilation, padding_mode, device=device, dtype=dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    return LazyConvTranspose


def _named(cls, name, doc):
    cls.__name__ = cls.__qualname__ = name
    cls.__doc__ = doc
    return cls


LazyConv1d = _named(_lazy_conv(Conv1d, 1), "LazyConv1d",
                    "A Conv1d whose ``in_channels`` is inferred from the first input.")
LazyConv2d = _named(_lazy_conv(Conv2d, 2), "LazyConv2d",
                    "A Conv2d whose ``in_channels`` is inferred from the first input.")
LazyConv3d = _named(_lazy_conv(Conv3d, 3), "LazyConv3d",
                    "A Conv3d whose ``in_channels`` is inferred from the first input.")
LazyConvTranspose1d = _named(
    _lazy_conv_transpose(ConvTranspose1d, 1), "LazyConvTranspose1d",
    "A ConvTranspose1d whose ``in_channels`` is inferred from the first input.")
LazyConvTranspose2d = _named(
    _lazy_conv_transpose(ConvTranspose2d, 2), "LazyConvTranspose2d",
    "A ConvTranspose2d whose ``in_channels`` is inferred from the first input.")
LazyConvTranspose3d = _named(
    _lazy_conv_transpose(ConvTranspose3d, 3), "LazyConvTranspose3d",
    "A ConvTranspose3d whose ``in_channels`` is inferred from the first input.")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """``num_features`` from dim 1 of the first input (torch reads dim 1 even for an
    unbatched instance-norm input)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=_dtype.long)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


def _lazy_norm(base, cls, name):
    attrs = {"cls_to_become": cls, "__doc__": f"A {cls.__name__} whose ``num_features`` is "
                                              "inferred from the first input."}
    if base is _BatchNorm:
        attrs["_check_input_dim"] = cls._check_input_dim
    else:
        attrs["_no_batch_dim"] = cls._no_batch_dim
    new = type(name, (_LazyNormBase, base), attrs)
    new.__module__ = __name__
    return new


LazyBatchNorm1d = _lazy_norm(_BatchNorm, BatchNorm1d, "LazyBatchNorm1d")
LazyBatchNorm2d = _lazy_norm(_BatchNorm, BatchNorm2d, "LazyBatchNorm2d")
LazyBatchNorm3d = _lazy_norm(_BatchNorm, BatchNorm3d, "LazyBatchNorm3d")
LazyInstanceNorm1d = _lazy_norm(_InstanceNorm, InstanceNorm1d, "LazyInstanceNorm1d")
LazyInstanceNorm2d = _lazy_norm(_InstanceNorm, InstanceNorm2d, "LazyInstanceNorm2d")
LazyInstanceNorm3d = _lazy_norm(_InstanceNorm, InstanceNorm3d, "LazyInstanceNorm3d")
