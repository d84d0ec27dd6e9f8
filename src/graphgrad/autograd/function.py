"""Custom differentiable operations: ``graphgrad.autograd.Function``, as in PyTorch.

A subclass gives static ``forward`` and ``backward``; ``apply`` runs forward under no_grad and
records one node, an instance of ``<Name>Backward``, that is also the ``ctx`` both methods get.
The engine runs that node like any op: its rule (``_function_vjp``) calls the user's backward.
"""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from .._tensor import Tensor, version_cell, wrap
from ..ops._opdef import OpDef
from .diagnose import freed_error, modified_error
from .grad_mode import state as _mode
from .graph import (
    Freed,
    Node,
    OutputEdge,
    Packed,
    Slots,
    next_sequence,
    pack_value,
    saved_hooks_active,
    unpack_value,
)

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]

class FunctionCtx:
    """What ``forward``/``setup_context`` may call on ``ctx``."""

    def save_for_backward(self, *tensors) -> None:
        """Saves tensors (or None) for ``backward``, which reads them as ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self.to_save = tensors

    def mark_dirty(self, *args) -> None:
        """Declares inputs that forward modified in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args) -> None:
        """Declares outputs that get no gradient (backward receives zeros for them)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = value


class _SavedForBackward:
    """A Function node's saved tensors: each ``(tensor, version cell, version)``, a Packed
    value (saved-tensor hooks), or None. Opaque to the engine, which only frees it."""

    __slots__ = ("entries",)

    def __init__(self, entries):
        self.entries = entries


class BackwardCFunction(Node, FunctionCtx):
    """The node of one ``Function.apply``; also the ``ctx`` of its forward and backward."""

    _forward_cls = None
    _live = None  # the saved tensors while backward runs (the engine may free them first)
    __call__ = None  # as in torch, a Function's node is not callable (use ctx.apply)

    def apply(self, *grads):
        """Calls the user's ``backward`` (or ``vjp``) with this node as ``ctx``."""
        cls = self._forward_cls
        fn = cls.vjp if _overrides(cls, "vjp") else cls.backward
        return fn(self, *grads)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked for in-place changes."""
        box = self._live
        if box is None:
            saved = self._saved
            if type(saved) is Freed:
                raise freed_error(self, saved, ())
            if not saved:
                return ()
            box = saved[0]
        out = []
        for entry in box.entries:
            if entry is None:
                out.append(None)
            elif type(entry) is Packed:
                out.append(unpack_value(entry, self, True))
            else:
                t, cell, version = entry
                if cell[0] != version:
                    raise modified_error(self, len(out), cell, version,
                                         (t._data, t.grad_fn, "save_for_backward"))
                out.append(t)
        return tuple(out)

    saved_variables = saved_tensors


def _overrides(cls, name) -> bool:
    return getattr(cls, name) is not getattr(Function, name)


def _function_vjp(ns, g, *saved, ctx):
    """The rule of every Function node: the user's backward on the output gradients."""
    ctx._live = saved[0] if saved else None
    try:
        return ctx._run_backward(ns.differentiable, g)
    finally:
        ctx._live = None


# One record serves every Function node (it is not an op of the table, so not in OPS).
FUNCTION_OP = OpDef("autograd.Function", None, _function_vjp, kind="opaque", save=(),
                    dtype_rule="same", node=None, needs_mask=False, onnx=None)
FUNCTION_OP.frees = True


def _output_vjp(ns, g, nr, n):
    grads = [None] * n
    grads[nr] = g
    return Slots(grads)


# The rule of an OutputEdge: puts the gradient of output ``nr`` into its slot.
OUTPUT_OP = OpDef("autograd.Function.output", None, _output_vjp, kind="opaque", save=(),
                  dtype_rule="same", node=None, needs_mask=False, onnx=None)


def _init_node(node, op, edges, meta, params):
    node._op = op
    node._next = edges
    node._meta = meta
    node._params = params
    node._seq = next_sequence()
    node._extra = None
    node._site = None
    node._saved = ()
    node._versions = None


def _edge(t):
    if t._fn is not None:
        return t._fn
    return t._accumulator() if t._rg else None


def _run_backward(self, create, g):
    """Materializes missing gradients, calls backward, and checks what it returned."""
    n = len(self._out_meta)
    grads = list(g.grads) if type(g) is Slots else [g] + [None] * (n - 1)
    args = []
    for gi, meta in zip(grads, self._out_meta):
        if gi is None:
            if meta is not None and self.materialize_grads:
                gi = wrap(np.zeros(meta[0], meta[1]), False, None)
        elif not isinstance(gi, Tensor):
            gi = wrap(gi, False, None)
        args.append(gi)
    result = self.apply(*args)
    if not isinstance(result, tuple):
        result = (result,)
    is_tensor = self._is_tensor_input
    name = type(self).__name__
    n_in = len(is_tensor)
    if len(result) > n_in and all(r is None for r in result[n_in:]):
        result = result[:n_in]  # extra trailing Nones are allowed, as in torch
    if len(result) != n_in:
        raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                           f"(expected {n_in}, got {len(result)})")
    out = []
    for i, r in enumerate(result):
        if not is_tensor[i]:
            if r is not None:
                raise RuntimeError(f"function {name} returned a gradient different than None at "
                                   f"position {i + 1}, but the corresponding forward input was "
                                   "not a Variable")
            continue
        if r is None:
            out.append(None)
            continue
        if not isinstance(r, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
        shape = self._meta[len(out)][0]
        gshape = r._data.shape
        if gshape != shape and not _expandable(shape, gshape):
            raise RuntimeError(f"Function {name} returned an invalid gradient at index "
                               f"{len(out)} - got {list(gshape)} but expected shape compatible "
                               f"with {list(shape)}")
        out.append(r if create else r._data)
    return tuple(out)


BackwardCFunction._run_backward = _run_backward


def _expandable(shape, gshape) -> bool:
    try:
        return np.broadcast_shapes(shape, gshape) == tuple(gshape)
    except ValueError:
        return False


class Function:
    """Base class of custom differentiable operations.

    >>> import graphgrad as torch
    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         x, = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = torch.tensor([1.0, 3.0], requires_grad=True)
    >>> Square.apply(x).sum().backward()
    >>> x.grad
    tensor([2., 6.])
    """

    _backward_cls = BackwardCFunction
    _node_name = None  # the node class name when it is not "<Name>Backward"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("_node_name") or cls.__name__ + "Backward"
        cls._backward_cls = type(name, (BackwardCFunction,), {"_forward_cls": cls})

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs ``forward`` and records the node whose backward is ``cls.backward``."""
        setup = _overrides(cls, "setup_context")
        if setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = tuple(bound.arguments.values()), {}
        tensors = [a for a in args if isinstance(a, Tensor)]
        executable = (_mode.grad_enabled and not _mode.inference
                      and any(t.requires_grad for t in tensors))
        ctx = object.__new__(cls._backward_cls)
        _init_node(ctx, FUNCTION_OP, (), (), None)
        ctx.to_save = ()
        ctx.dirty_tensors = ()
        ctx.non_differentiable = ()
        ctx.materialize_grads = True
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        prev = _mode.grad_enabled
        _mode.grad_enabled = False
        from ..ops import _dispatch

        fwd = _dispatch._fwd  # forward AD (autograd/forward_ad.py): jvp gives the tangents
        fwd = fwd if fwd is not None and not fwd.busy and fwd.handles_functions else None
        if fwd is not None:
            fwd.busy = True
        try:
            if setup:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            _mode.grad_enabled = prev
            if fwd is not None:
                fwd.busy = False
        result = _process_outputs(ctx, args, tensors, output, executable)
        if fwd is not None:
            fwd.function(cls, ctx, args, result)
        return result


def _process_outputs(ctx, args, tensors, output, executable):
    """Gives the outputs their history (or none), rebases dirty inputs, saves for backward."""
    is_tuple = isinstance(output, tuple)
    outs = output if is_tuple else (output,)
    out_ids = {id(o) for o in outs}
    dirty = {id(t) for t in ctx.dirty_tensors}
    if not dirty <= out_ids:
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all "
                           "be outputs of the Function.")
    nondiff = {id(t) for t in ctx.non_differentiable}
    inputs = {id(t) for t in tensors}
    if executable:
        ctx._next = tuple(_edge(t) for t in tensors)
        ctx._meta = tuple((t._data.shape, t._data.dtype) for t in tensors)
        ctx._params = {"ctx": ctx}
    ctx._is_tensor_input = tuple(isinstance(a, Tensor) for a in args)
    n = len(outs)
    results = []
    out_meta = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            out_meta.append(None)
            continue
        out_meta.append((o._data.shape, o._data.dtype))
        is_dirty = id(o) in dirty
        if is_dirty:
            version_cell(o)[0] += 1  # torch counts the Function's in-place write once more
        t = o
        if id(o) in inputs and not is_dirty:
            t = wrap(o._data, False, None)  # an input returned as is: a new tensor sharing it
            t._vc = version_cell(o)
        if not executable:
            results.append(t)
            continue
        if id(o) in nondiff or o._data.dtype.kind != "f":
            if t is o and not is_dirty:
                t._rg = False
            results.append(t)
            continue
        edge = ctx if n == 1 else _output_edge(ctx, i, n)
        if is_dirty:
            _rebase_dirty(t, edge)
        else:
            t._fn = edge
            t._rg = True
        results.append(t)
    ctx._out_meta = tuple(out_meta)
    if executable and ctx.to_save:
        ctx._saved = (_SavedForBackward(tuple(_save(t) for t in ctx.to_save)),)
    return tuple(results) if is_tuple else results[0]


def _save(t):
    if t is None:
        return None
    if saved_hooks_active():
        return pack_value(t)
    cell = version_cell(t)
    return (t, cell, cell[0])


def _output_edge(ctx, i, n):
    e = object.__new__(OutputEdge)
    _init_node(e, OUTPUT_OP, (ctx,), ((Slots.shape, Slots.dtype),), {"nr": i, "n": n})
    e._node = ctx
    e._nr = i
    return e


def _rebase_dirty(t, edge):
    """A tensor forward changed in place takes the Function node as its history."""
    if t._view is not None:
        from ..ops.views import rebase

        rebase(t, wrap(t._data, True, edge))
        t._view[3] = None  # rebuild the view's grad_fn over its base's new history
        return
    if t._rg and t._fn is None:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                           "operation.")
    t._fn = edge
    t._rg = True


class _DelayedError(Function):
    """The node ``once_differentiable`` puts on gradients computed under create_graph."""

    _node_name = "Error"

    @staticmethod
    def forward(ctx, *grads):
        return grads if len(grads) != 1 else grads[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


def once_differentiable(fn):
    """Marks a backward as not differentiable: it runs under no_grad, and differentiating its
    result again raises instead of silently giving a wrong answer."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _mode.grad_enabled
        _mode.grad_enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            _mode.grad_enabled = prev
        if not prev:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        fake = tuple(None if o is None else o.detach().requires_grad_() for o in outs)
        return _DelayedError.apply(*fake)

    return wrapper
