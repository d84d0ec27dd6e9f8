"""Optimizer: the base class of graphgrad's optimizers, with ``torch.optim.Optimizer``'s API.

It owns param groups, per-parameter state, state_dict / load_state_dict in torch's layout,
zero_grad and step hooks. Subclasses update parameters in place on their NumPy arrays (see
Note [In-place parameter updates]); every ``step()`` advances the global training-step counter.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import numpy as np

from .. import _dtype
from .._step import advance_step
from .._tensor import Tensor, bump_version, wrap
from ..autograd.grad_mode import state as _mode

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]

# Note [In-place parameter updates]
# An optimizer writes new values into ``p._data`` with NumPy in-place ufuncs (no Tensor objects,
# no graph), then bumps ``p``'s version cell exactly as an in-place op such as ``add_`` would.
# Views of ``p`` share the array so they see the update, and a graph that saved ``p`` before the
# step raises torch's "modified by an inplace operation" error if it is backwarded afterwards.
# State tensors (exp_avg, momentum_buffer, ...) are updated the same way, so a state_dict taken
# earlier holds the live tensors, as in torch.


class _RequiredParameter:
    """Singleton marking a hyper-parameter that every param group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class _RemovableHandle:
    """Removes a hook from the dict it was registered in (``torch.utils.hooks.RemovableHandle``)."""

    _next_id = 0

    def __init__(self, hooks_dict: dict) -> None:
        self.hooks_dict = hooks_dict
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self) -> None:
        self.hooks_dict.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *args) -> None:
        self.remove()


_global_pre_hooks: OrderedDict = OrderedDict()
_global_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> _RemovableHandle:
    """Registers ``hook(optimizer, args, kwargs)`` to run before every optimizer's step."""
    handle = _RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> _RemovableHandle:
    """Registers ``hook(optimizer, args, kwargs)`` to run after every optimizer's step."""
    handle = _RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


def _typename(obj) -> str:
    """torch.typename: ``torch.FloatTensor`` for a tensor, the qualified name otherwise."""
    if isinstance(obj, Tensor):
        return "torch." + _TENSOR_TYPES.get(obj._data.dtype.name, "Tensor")
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


_TENSOR_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
                 "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _hooked_step(func):
    """Wraps a subclass's ``step``: pre hooks, the step, the global step counter, post hooks."""

    @functools.wraps(func)
    def step(*args, **kwargs):
        # As torch, hooks receive the full positional args, the optimizer first.
        self = args[0]
        if self._in_step:  # a subclass's step calling super().step(): count and hook once
            return func(*args, **kwargs)
        from ..ops import _dispatch

        tracer = _dispatch._tracer
        if tracer is not None and tracer.mine():  # graphgrad.compile: one opaque instr
            return tracer.opaque_call(self, step, args, kwargs)
        for hook in chain(_global_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        self._in_step = True
        try:
            out = func(*args, **kwargs)
        except ValueError as err:  # NumPy's broadcast error; torch raises RuntimeError
            if "broadcast" not in str(err):
                raise
            raise _state_shape_error(self, err) from None
        finally:
            self._in_step = False
        advance_step()
        for hook in chain(self._optimizer_step_post_hooks.values(), _global_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    step.hooked = True
    return step


def _state_shape_error(opt, err: ValueError) -> RuntimeError:
    """torch's wording for a state tensor whose shape is not its parameter's (a state_dict
    loaded from another model), naming the state entry."""
    for i, p in enumerate(chain.from_iterable(g["params"] for g in opt.param_groups)):
        for key, value in opt.state.get(p, {}).items():
            if isinstance(value, Tensor) and value.dim() and value.shape != p.shape:
                a, b = list(value.shape), list(p.shape)
                dim = next((d for d in range(1, max(len(a), len(b)) + 1)
                            if (a[-d] if d <= len(a) else 1) != (b[-d] if d <= len(b) else 1)), 1)
                sa, sb = (a[-dim] if dim <= len(a) else 1), (b[-dim] if dim <= len(b) else 1)
                return RuntimeError(
                    f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {max(len(a), len(b)) - dim} "
                    f"({type(opt).__name__}.step(): state['{key}'] of parameter {i} has shape "
                    f"{a}, the parameter {b})")
    return RuntimeError(f"{type(opt).__name__}.step(): {err}")


def no_grad_step(func):
    """Runs a built-in optimizer's step with grad mode off (torch's ``_use_grad``); the closure
    is evaluated under enable_grad by ``Optimizer._eval_closure``."""

    @functools.wraps(func)
    def step(self, *args, **kwargs):
        prev = _mode.grad_enabled
        _mode.grad_enabled = False
        try:
            return func(self, *args, **kwargs)
        finally:
            _mode.grad_enabled = prev

    return step


def check_lr(lr) -> None:
    """torch's checks of a learning rate: a number or a one-element tensor, not negative."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


# Counts an in-place write into ``t._data`` (See Note [In-place parameter updates]).
bump = bump_version


def check_betas(eps, betas, weight_decay) -> None:
    """torch's argument checks shared by the Adam family, in torch's order."""
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def count_step(step_t: Tensor) -> float:
    """Advances a parameter's ``state["step"]`` in place (bumping its version as torch's
    in-place add does) and returns the new count."""
    step_t._data += 1
    bump(step_t)
    return float(step_t._data)


def scalar_dtype():
    """The dtype torch gives ``state["step"]``: float64 if that is the default, else float32."""
    return np.float64 if _dtype.get_default_dtype() is _dtype.float64 else np.float32


def step_tensor(value: float = 0.0) -> Tensor:
    return wrap(np.array(value, dtype=scalar_dtype()), False, None)


def zeros_state(p: Tensor) -> Tensor:
    """A zero state tensor shaped, typed and laid out as ``p`` (torch's preserve_format)."""
    return wrap(np.zeros_like(p._data), False, None)


def as_float(x) -> float:
    """A hyper-parameter given as a 1-element tensor, read as a Python number."""
    return x.item() if isinstance(x, Tensor) else x


class Optimizer:
    """Base class for all optimizers.

    ``params`` is an iterable of tensors (or of ``(name, tensor)`` pairs) or of dicts, each a
    param group with its own hyper-parameters; ``defaults`` fills in what a group leaves out.
    """

    _in_step = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults: dict) -> None:
        if defaults.get("differentiable"):
            raise NotImplementedError("graphgrad.optim: differentiable=True is not supported "
                                      "(updates run on NumPy arrays outside the graph)")
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    # -- param groups ---------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Adds a param group (a dict with ``"params"``); missing options come from defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients and steps --------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients: to None (default) or, with ``set_to_none=False``, to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure=None):
        """Performs one optimization step; ``closure`` re-evaluates the model, returns the loss."""
        raise NotImplementedError

    @staticmethod
    def _eval_closure(closure):
        if closure is None:
            return None
        prev = _mode.grad_enabled
        _mode.grad_enabled = True
        try:
            return closure()
        finally:
            _mode.grad_enabled = prev

    def register_step_pre_hook(self, hook) -> _RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before ``step``; may return new (args, kwargs)."""
        handle = _RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook) -> _RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after ``step``."""
        handle = _RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # -- state dicts ----------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> _RemovableHandle:
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> _RemovableHandle:
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> _RemovableHandle:
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> _RemovableHandle:
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``.

        Parameters are replaced by their position across groups; state tensors are the live
        ones (as in torch: deepcopy the result to snapshot it).
        """
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict) -> None:
        """Loads a ``state_dict()``: groups must match in number and sizes; state tensors are
        cast to their parameter's dtype (``step`` keeps its own)."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    def _steps_to_tensors(self) -> None:
        """State loaded from an old checkpoint may hold ``step`` as a number: make it the 0-d
        tensor that torch stores."""
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state and "step" in p_state and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = step_tensor(float(p_state["step"]))


def _register(hooks: OrderedDict, hook, prepend: bool) -> _RemovableHandle:
    handle = _RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _cast(param: Tensor, value, key=None):
    """A loaded state value for ``param``: tensors take the param's floating dtype, except
    ``step``, which torch keeps as saved."""
    if isinstance(value, Tensor):
        if key == "step" or not param.is_floating_point():
            return value
        return value.to(dtype=param.dtype)
    if isinstance(value, dict):
        return {k: _cast(param, v, key=k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, str):
        return type(value)(_cast(param, v) for v in value)
    return value
