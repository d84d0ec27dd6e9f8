"""Activation checkpointing, as ``torch.utils.checkpoint``: a checkpointed function saves no
activations in the forward; backward runs it again (with the RNG state of the forward, so
dropout draws the same mask) to get them. ``use_reentrant=True`` is a custom Function whose
backward recomputes and backpropagates inside; ``use_reentrant=False`` packs every saved tensor
as an index through saved-tensor hooks and recomputes the whole function on the first unpack.
"""

from __future__ import annotations

import contextlib
import sys
import warnings

from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..random import fork_rng, get_rng_state, set_rng_state

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled"]

_DEBUG_TIP = ("Tip: To see a more detailed error message, either pass `debug=True` to "
              "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block with "
              "`with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to enable "
              "checkpoint‑debug mode globally.")


class CheckpointError(RuntimeError):
    """Raised when the recomputation does not save what the forward saved."""


def noop_context_fn():
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Accepted for torch compatibility: graphgrad always recomputes the whole function once
    per backward, which gives the same gradients as stopping early."""
    yield


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Accepted for torch compatibility; graphgrad's errors carry no operator traces."""
    yield


def detach_variable(inputs):
    """Detached copies of the tensors in a tuple, keeping ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for x in inputs:
        if not isinstance(x, Tensor):
            out.append(x)
            continue
        d = x.detach()
        d.requires_grad = x.requires_grad
        out.append(d)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    if not any(x.requires_grad for x in inputs if isinstance(x, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def _checkpoint_valid() -> bool:
    """False inside ``autograd.grad`` or ``backward(inputs=...)``: the reentrant variant
    accumulates into ``.grad`` and would leak gradients there (torch refuses too). The innermost
    engine entry on the stack is the one running this backward."""
    grad_code, backward_code = _engine.grad.__code__, _engine.backward.__code__
    f = sys._getframe(1)
    while f is not None:
        if f.f_code is grad_code:
            return False
        if f.f_code is backward_code:
            return f.f_locals.get("inputs") is None
        f = f.f_back
    return True


class CheckpointFunction(Function):
    """The reentrant variant: forward under no_grad, backward recomputes and backpropagates."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs, ctx.tensor_indices, tensors = [], [], []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                tensors.append(a)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(a)
        ctx.save_for_backward(*tensors)
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not _checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, grads)
                     if isinstance(o, Tensor) and o.requires_grad]
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        _engine.backward([o for o, _ in with_grad], [g for _, g in with_grad])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in detached)


def _meta(t):
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Frame:
    """One non-reentrant checkpoint call: what to rerun, and the saved tensors of the latest
    recomputation, by the order in which the forward saved them."""

    def __init__(self, fn, args, kwargs, rng_state, recompute_context, check):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.rng_state = rng_state
        self.recompute_context = recompute_context
        self.check = check
        self.metadata = []  # per saved tensor, its metadata in the forward (None: unchecked)
        self.recomputed = {}

    def pack(self, t):
        self.metadata.append(_meta(t) if self.check else None)
        return _Handle(self, len(self.metadata) - 1)

    def recompute(self):
        got = []

        def save(t):
            if len(got) >= len(self.metadata):
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors "
                                      "during recomputation than during the original forward "
                                      f"pass.\n{_DEBUG_TIP}")
            got.append(t.detach())  # the data only: the recomputed graph is not kept
            return None

        args = detach_variable(tuple(self.args))
        with fork_rng(enabled=self.rng_state is not None):
            if self.rng_state is not None:
                set_rng_state(self.rng_state)
            with enable_grad(), self.recompute_context, saved_tensors_hooks(save, _no_unpack):
                self.fn(*args, **self.kwargs)
        if len(got) != len(self.metadata):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.metadata)}\n"
                f"Number of tensors saved during recomputation: {len(got)}.\n{_DEBUG_TIP}")
        if self.check:
            bad = "".join(f"tensor at position {i}:\nsaved metadata: {m}\nrecomputed metadata: "
                          f"{_meta(t)}\n" for i, (m, t) in enumerate(zip(self.metadata, got))
                          if m != _meta(t))
            if bad:
                raise CheckpointError("torch.utils.checkpoint: Recomputed values for the "
                                      "following tensors have different metadata than during "
                                      f"the forward pass.\n{bad}.\n{_DEBUG_TIP}")
        self.recomputed = dict(enumerate(got))


def _no_unpack(_):
    raise CheckpointError("torch.utils.checkpoint: a tensor saved during recomputation was "
                          "unpacked; the recomputed graph is never run backward")


class _Handle:
    """What a checkpointed forward saves in place of a tensor."""

    __slots__ = ("frame", "index")

    def __init__(self, frame, index):
        self.frame = frame
        self.index = index


def _unpack(handle):
    frame = handle.frame
    t = frame.recomputed.pop(handle.index, None)
    if t is None:  # first unpack of this backward (or a later backward with retain_graph)
        frame.recompute()
        t = frame.recomputed.pop(handle.index)
    return t


def _without_reentrant(function, preserve, context_fn, determinism_check, debug, args, kwargs):
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, get_rng_state() if preserve else None,
                   recompute_context, determinism_check == "default")
    with forward_context, saved_tensors_hooks(frame.pack, _unpack):
        return function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, **kwargs):
    """Runs ``function(*args, **kwargs)`` without keeping its activations; backward
    recomputes them.

    >>> import graphgrad as torch
    >>> from graphgrad.utils.checkpoint import checkpoint
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False).backward()
    >>> torch.allclose(x.grad, x.sin() + x * x.cos())
    True
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _without_reentrant(function, preserve, context_fn, determinism_check, debug, args,
                              kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a sequence of modules (or an ``nn.Sequential``) in ``segments`` chunks, each
    checkpointed but the last."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
