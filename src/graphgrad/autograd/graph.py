"""Graph nodes: the ``grad_fn`` of a tensor, and ``AccumulateGrad`` for leaves.

Every op application that needs a gradient makes one Node holding its op record, the edges to
the nodes of its inputs (``next_functions``), the values its derivative rule needs, and the
input shapes and dtypes the engine uses to sum broadcast gradients and cast them back.
"""

from __future__ import annotations

import itertools
import threading
import weakref

from .. import _step as _step_module
from .sites import capture_sites, is_capture_sites_enabled, set_capture_sites

__all__ = ["Node", "AccumulateGrad", "set_capture_sites", "capture_sites",
           "is_capture_sites_enabled", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "RemovableHandle"]

# Creation order; the engine runs ready nodes latest-first, as PyTorch does.
_sequence = itertools.count()
next_sequence = _sequence.__next__


class Freed:
    """Stands in for the saved values a backward released (without retain_graph); remembers
    that backward's call site and the sequence number at its start, so that a later backward
    reaching the node can say which call freed it and whether a tensor made before that call
    was carried into a newer graph."""

    __slots__ = ("site", "seq")

    def __init__(self, site, seq):
        self.site = site
        self.seq = seq


# For nodes released outside a backward pass (no call site to report).
FREED = Freed(None, -1)


class Node:
    """A recorded op application; subclassed once per op so ``type(n).__name__`` is torch's."""

    __slots__ = ("_op", "_next", "_saved", "_params", "_meta", "_seq", "_extra", "_versions",
                 "_site", "__weakref__")

    def name(self) -> str:
        n = type(self).__name__
        # torch's hand-written C++ nodes carry their namespace in name(), generated ones do not
        return "torch::autograd::" + n if n in ("AccumulateGrad", "CopySlices") else n

    @property
    def next_functions(self) -> tuple:
        hidden = self._op.hidden_inputs if self._op is not None else ()
        if not hidden:
            return tuple(_pair(n) for n in self._next)
        return tuple(_pair(n) for i, (n, m) in enumerate(zip(self._next, self._meta))
                     if not (i in hidden or (m is None and "scalars" in hidden)))

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new
        grad_inputs. Returns a handle whose ``remove()`` unregisters it."""
        return _add_hook(self._extra_dict(), "post", fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        return _add_hook(self._extra_dict(), "pre", fn)

    @property
    def metadata(self) -> dict:
        extra = self._extra_dict()
        return extra.setdefault("metadata", {})

    def _extra_dict(self) -> dict:
        if self._extra is None:
            self._extra = {}
        return self._extra

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def __getattr__(self, name):
        # Only reached for names the slots lack: torch's ``_saved_self``, ``_saved_other``
        # and ``_saved_result`` views of what this node saved (see saved_attribute).
        if name.startswith("_saved_") or name.startswith("_raw_saved_"):
            from .saved_attributes import saved_attribute

            return saved_attribute(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __call__(self, *grads):
        from .engine import call_node

        return call_node(self, grads)


# Leaves sort after every op node (PyTorch gives AccumulateGrad UINT64_MAX).
_LEAF_SEQUENCE = float("inf")

_node_classes: dict[str, type] = {}


class OpNode(Node):
    """A node made by the dispatcher for an op. It records the training step that made it, and
    the count of live nodes per step follows it (``_step.live_nodes``) for the retention
    detector: about 0.1 us per node, counting its ``__del__``."""

    __slots__ = ("_step",)

    def __del__(self, _live=_step_module.live_nodes):
        try:
            _live[self._step] -= 1
        except (AttributeError, IndexError, TypeError):  # never stamped, or at shutdown
            pass


def node_class(name: str) -> type:
    """The OpNode subclass named ``name`` (one per name, shared by ops that print alike)."""
    cls = _node_classes.get(name)
    if cls is None:
        cls = _node_classes[name] = type(name, (OpNode,), {"__slots__": ()})
    return cls


class AccumulateGrad(Node):
    """The sink that adds an incoming gradient into a leaf's ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable
        self._op = None
        self._next = ()
        self._saved = ()
        self._versions = None
        self._params = None
        self._meta = ((variable._data.shape, variable._data.dtype),)
        self._seq = _LEAF_SEQUENCE
        # A leaf with hooks sends its accumulator down the engine's hook path.
        self._extra = None if variable._extra is None else {}


# -- hooks ------------------------------------------------------------------------------------
class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook out again."""

    _next_id = itertools.count()

    def __init__(self, hooks: dict):
        self.hooks_dict_ref = weakref.ref(hooks)
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        hooks = self.hooks_dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class _Hooks(dict):
    """Hook id -> hook, in registration order (a dict subclass, so handles can hold it
    weakly)."""

    __slots__ = ("__weakref__",)


def _add_hook(extra: dict, key: str, fn) -> RemovableHandle:
    hooks = extra.get(key)
    if hooks is None:
        hooks = extra[key] = _Hooks()
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def register_tensor_hook(t, key: str, fn) -> RemovableHandle:
    """``Tensor.register_hook`` (key "hooks") and ``register_post_accumulate_grad_hook``
    ("post_acc"). The hooks live on the tensor; a non-leaf's node holds the same dict, so the
    engine runs them when the gradient for that output arrives (before a leaf accumulates)."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = t._fn  # requires_grad refreshed a view's history
    if key == "post_acc" and node is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if t._extra is None:
        t._extra = {}
    new = key not in t._extra
    handle = _add_hook(t._extra, key, fn)
    if new and node is not None:
        node._extra_dict().setdefault("tensor_pre", []).append(t._extra[key])
    elif node is None:
        acc = t._accum() if t._accum is not None else None
        if acc is not None and acc._extra is None:
            acc._extra = {}
    return handle


class OutputEdge(Node):
    """Output ``_nr`` of a node with several outputs (a custom Function's): the tensor's
    ``_fn`` and its consumers' edge. Its rule puts the gradient into slot ``_nr`` of a Slots
    buffer that the engine sums per slot, so the node gets every output's gradient at once."""

    __slots__ = ("_node", "_nr")


def _pair(n):
    """A ``next_functions`` entry: (node, output number)."""
    if type(n) is OutputEdge:
        return (n._node, n._nr)
    return (n, 0)


class Slots:
    """Per-output gradients of a multi-output node; ``+`` sums slot by slot. ``shape`` and
    ``dtype`` equal the OutputEdge's metadata, so the engine's broadcast/cast step passes."""

    __slots__ = ("grads",)
    shape = ("<slots>",)
    dtype = ("<slots>",)

    def __init__(self, grads):
        self.grads = grads

    def __add__(self, other):
        return Slots([b if a is None else a if b is None else a + b
                      for a, b in zip(self.grads, other.grads)])


# -- saved-tensor hooks -------------------------------------------------------------------------
class _SavedHooks(threading.local):
    def __init__(self):
        self.stack = []  # (pack, unpack) pairs; the innermost is used
        self.disabled = None  # the error message while disable_saved_tensors_hooks is active


saved_hooks = _SavedHooks()
# One entry per saved_tensors_hooks context open in any thread: the dispatcher's one cheap
# check (a thread-local attribute costs several times more); pack_saved then reads this
# thread's stack.
hooks_open = []


def saved_hooks_active() -> bool:
    return bool(saved_hooks.stack)


class saved_tensors_hooks:
    """Context manager: tensors that recorded ops save for backward are passed to
    ``pack_hook`` when saved, and what it returned to ``unpack_hook`` when backward needs them.

    >>> import graphgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
    ...     y = x * x
    >>> y.sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if saved_hooks.disabled is not None:
            raise RuntimeError(saved_hooks.disabled)
        saved_hooks.stack.append((self.pack_hook, self.unpack_hook))
        hooks_open.append(self)
        return self

    def __exit__(self, *exc) -> None:
        saved_hooks.stack.pop()
        hooks_open.remove(self)


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back for backward. Every graphgrad tensor
    lives on the CPU, so (as torch on a CPU tensor) this keeps the tensor itself; with
    ``pin_memory=True`` it keeps a copy."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, tensor.detach().clone())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Context manager: entering ``saved_tensors_hooks`` inside it raises RuntimeError with
    ``error_message`` (as does entering it while such hooks are active)."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        if saved_hooks.stack:
            raise RuntimeError(self.error_message)
        self.prev = saved_hooks.disabled
        saved_hooks.disabled = self.error_message
        return self

    def __exit__(self, *exc) -> None:
        saved_hooks.disabled = self.prev

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return func(*args, **kwargs)
        return wrapper


class Packed:
    """A saved tensor as the pack hook returned it, with the history to give it back."""

    __slots__ = ("obj", "unpack", "rg", "edge")

    def __init__(self, obj, unpack, rg, edge):
        self.obj = obj
        self.unpack = unpack
        self.rg = rg
        self.edge = edge


def pack_value(t) -> Packed:
    """Runs the innermost pack hook on ``t`` (under no_grad, as torch does)."""
    from .grad_mode import state

    pack, unpack = saved_hooks.stack[-1]
    edge = t._fn if t._fn is not None else (t._accumulator() if t._rg else None)
    prev = state.grad_enabled
    state.grad_enabled = False
    try:
        obj = pack(t)
    finally:
        state.grad_enabled = prev
    return Packed(obj, unpack, t._rg, edge)


def pack_saved(node, result) -> None:
    """Called by the dispatcher, while saved-tensor hooks are active, for a node that saved
    values: packs each saved tensor (inputs and a saved output). Hooks replace version checks,
    as in torch, and the node takes the engine's hook path, which unpacks."""
    from .._tensor import Tensor

    if not saved_hooks.stack:
        return  # the hooks are open in another thread
    saved = []
    for s, v in zip(node._op.save, node._saved):
        if s == "out":
            saved.append(pack_value(result))
        elif isinstance(v, Tensor):
            saved.append(pack_value(v))
        else:
            saved.append(v)
    node._saved = tuple(saved)
    node._versions = None
    node._extra_dict()["packed"] = True


def unpack_value(p: Packed, node, with_history: bool):
    """The unpacked tensor: its array (``with_history`` False) or a Tensor carrying the saved
    tensor's place in the graph, so a create_graph backward differentiates through it."""
    from .._tensor import Tensor, wrap

    u = p.unpack(p.obj)
    if not isinstance(u, Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(u).__name__}")
    if not with_history:
        return u._data
    edge = p.edge
    if type(edge) is AccumulateGrad:
        t = wrap(u._data, True, None)
        t._accum = weakref.ref(edge)
        return t
    return wrap(u._data, p.rg, edge)


# The rest of torch.autograd.graph (it builds on the names above).
from .graph_extras import (  # noqa: E402
    GradientEdge,
    allow_mutation_on_saved_tensors,
    get_gradient_edge,
    increment_version,
    register_multi_grad_hook,
)

__all__ += ["GradientEdge", "allow_mutation_on_saved_tensors", "get_gradient_edge",
            "increment_version", "register_multi_grad_hook"]
