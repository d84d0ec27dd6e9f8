"""Module full backward hooks (``register_full_backward_hook`` / ``_pre_hook``), as torch's.

The module's tensor inputs and outputs pass through an identity autograd Function
(``BackwardHookFunction``). A pre-hook on the outputs' node sees ``grad_output`` first (and runs
the module's backward pre-hooks); a post-hook on the inputs' node sees ``grad_input`` and runs
the module's backward hooks with both.
"""

from __future__ import annotations

import warnings

from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled

__all__ = ["check_supported", "BackwardHook", "BackwardHookFunction"]


def check_supported() -> None:
    from ...autograd.graph import Node

    if not (hasattr(Node, "register_hook") and hasattr(Node, "register_prehook")):
        raise NotImplementedError("Module full backward hooks need hooks on graph nodes "
                                  "(Node.register_hook and Node.register_prehook)")


class BackwardHookFunction(Function):
    """Identity on its tensor arguments; its node is where the module's hooks attach."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args
                                      if isinstance(a, Tensor) and not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


def _function_node(t):
    """The BackwardHookFunction node behind output ``t`` (multi-output Functions give each
    output an edge node that points at it)."""
    fn = t.grad_fn
    return getattr(fn, "_node", fn)


class BackwardHook:
    """The hooks of one module call: set up on its inputs, then on its outputs."""

    def __init__(self, module, user_hooks, user_pre_hooks) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, node) -> None:
        def hook(grad_input, _):
            if self.grad_outputs is None:
                # The gradient did not come through the module's outputs (it was computed
                # w.r.t. an intermediate tensor): torch runs no module hook then.
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        node.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        tensors_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if not new_tensors:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input "
                               "Tensors.")
        nodes = [_function_node(t) for t in new_tensors if t.grad_fn is not None]
        if not nodes:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue "
                               "with a code sample to reproduce this.")
        fn(nodes[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return (tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)), tensors_idx

    def setup_input_hook(self, args):
        res, input_idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        def fn(node) -> None:
            def hook(grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                         self.n_outputs)
                if self.user_pre_hooks:
                    expected = len(self.grad_outputs)
                    for user_pre_hook in self.user_pre_hooks:
                        out = user_pre_hook(self.module, self.grad_outputs)
                        if out is None:
                            continue
                        if len(out) != expected:
                            raise RuntimeError("Backward pre hook returned an invalid number of "
                                               f"grad_output, got {len(out)}, but expected "
                                               f"{expected}")
                        self.grad_outputs = out
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    warnings.warn("Full backward hook is firing when gradients are computed with "
                                  "respect to module outputs since no inputs require gradients. "
                                  "See https://docs.pytorch.org/docs/main/generated/torch.nn."
                                  "Module.html#torch.nn.Module.register_full_backward_hook for "
                                  "more details.", stacklevel=5)
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple)
                                                    and all(el is None for el in res)):
                            raise RuntimeError("Backward hook for Modules where no input "
                                               "requires gradient should always return None or "
                                               "None for all gradients.")
                    self.grad_outputs = None
                if local is not None:
                    return tuple(local[i] for i in self.output_tensors_index)
                return None

            node.register_prehook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]
