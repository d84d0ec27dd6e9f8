"""The reverse-mode engine: an iterative walk of the graph from the outputs to the leaves.

Dependencies are counted first, then ready nodes run latest-created first (a heap on creation
order), so a node runs only after every consumer has delivered its gradient. Nothing recurses:
a 100,000-node chain backwards in constant stack depth. The engine owns what every rule shares:
summing broadcast gradients back to an input's shape, casting them to the input's dtype,
skipping inputs that need no gradient, releasing saved values, and accumulating into leaves.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from ..diagnostics.retention import detector as _retention
from ..ops import _dispatch
from ..ops._namespace import DIFF, RAW, sum_to_array
from . import cuts as _cuts
from . import sites
from .anomaly import _state as _anomaly
from .diagnose import anomaly_error, freed_error, modified_error
from .errors import AutogradError
from .grad_mode import state as _mode
from .graph import AccumulateGrad, Freed, Packed, Slots, next_sequence, unpack_value
from .graph_extras import GradientEdge, _engine_node

__all__ = ["backward", "grad"]

_ndarray = np.ndarray

def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _root_grads(tensors, grad_tensors, create_graph):
    """The (node, gradient) pairs backward starts from, checked as torch checks them."""
    roots, user_arrays = [], set()
    if grad_tensors is not None and len(grad_tensors) < len(tensors):  # torch allows extras
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    for i, t in enumerate(tensors):
        if isinstance(t, GradientEdge):  # an output given as a graph edge needs its gradient
            g = grad_tensors[i] if grad_tensors is not None and i < len(grad_tensors) else None
            if not isinstance(g, Tensor):
                raise RuntimeError("grad_outputs must be given for an output passed as a "
                                   "GradientEdge")
            roots.append((_engine_node(t), g if create_graph else g._data))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"backward expected tensors, got {type(t).__name__}")
        if not t._rg:
            raise AutogradError(
                f"element {i} of tensors does not require grad and does not have a grad_fn",
                shapes=[list(t._data.shape)],
                fix="the tensor has no graph: make sure it was computed with grad mode on (not "
                    "under no_grad/inference_mode), from a tensor with requires_grad=True, and "
                    "not through .detach(), .item(), .numpy() or torch.tensor(...)")
        g = grad_tensors[i] if grad_tensors is not None and i < len(grad_tensors) else None
        if g is None:
            if t._data.size != 1:
                raise AutogradError(
                    "grad can be implicitly created only for scalar outputs",
                    shapes=[list(t._data.shape)],
                    fix="reduce the output to a scalar first (loss.sum() or loss.mean()), or "
                        "pass gradient=torch.ones_like(output) to backward()")
            if t._data.dtype.kind == "c":
                raise AutogradError(
                    "grad can be implicitly created only for real scalar outputs",
                    shapes=[list(t._data.shape)],
                    fix="take a real part (z.real, z.abs()) of the complex output first")
            g = np.array(1, dtype=t._data.dtype).reshape(t._data.shape)
            if create_graph:
                g = wrap(g, False, None)
        else:
            if not isinstance(g, Tensor):
                g = wrap(np.full_like(t._data, g), False, None)
            if g._data.shape != t._data.shape:
                raise AutogradError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {t.shape}.",
                    shapes=[list(g._data.shape), list(t._data.shape)],
                    fix="the gradient passed for each output must have that output's shape")
            if not create_graph:
                user_arrays.add(id(g._data))
                g = g._data
        roots.append((t._fn if t.grad_fn is not None else t._accumulator(), g))
    return roots, user_arrays


def _needed_nodes(roots, targets):
    """Nodes from which some target is reachable (post-order, iterative)."""
    needed = {}
    for root in roots:
        if root in needed:
            continue
        stack = [(root, 0)]
        while stack:
            node, i = stack[-1]
            nxt = node._next
            if i < len(nxt):
                stack[-1] = (node, i + 1)
                child = nxt[i]
                if child is not None and child not in needed:
                    stack.append((child, 0))
            else:
                stack.pop()
                needed[node] = node in targets or any(
                    needed.get(c, False) for c in nxt if c is not None)
    return {n for n, keep in needed.items() if keep}


def _count_dependencies(roots, needed):
    deps = {}
    stack = list(roots)
    seen = set(stack)
    while stack:
        node = stack.pop()
        for child in node._next:
            if child is None or (needed is not None and child not in needed):
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps


class _Run:
    """State of one backward pass."""

    __slots__ = ("create_graph", "retain_graph", "delivered", "freed", "roots")

    def __init__(self, create_graph, retain_graph, delivered):
        self.create_graph = create_graph
        self.retain_graph = retain_graph
        self.delivered = delivered  # ids of arrays already handed out as a .grad or result
        # What released saved values are replaced by: this call's site, for later errors.
        self.freed = None if retain_graph else Freed(sites.capture(3), next_sequence())
        self.roots = ()

    def own(self, g):
        """An array safe to store as a .grad: copied if it is a view or already handed out
        (unless its producer handed it over as private: see ``hand_over``)."""
        if type(g) is not _ndarray:
            return np.asarray(g)
        if g.base is not None or not g.flags.writeable or id(g) in self.delivered:
            if not (_private and _private.pop(id(g), None) is g and g.flags.c_contiguous
                    and g.flags.writeable and id(g) not in self.delivered):
                g = g.copy()
        self.delivered.add(id(g))
        return g

    def accumulate(self, t, g):
        """Adds ``g`` into ``t.grad`` as AccumulateGrad does."""
        cur = t._grad
        if self.create_graph:
            if not isinstance(g, Tensor):
                g = wrap(np.asarray(g), False, None)
            t._grad = g if cur is None else cur + g
            return
        if cur is None:
            t._grad = wrap(self.own(g), False, None)
        elif cur._data.flags.writeable and cur._data.shape == np.shape(g) and not cur._rg:
            cur._data += g  # in place, as torch does outside grad mode
        else:
            t._grad = wrap(np.asarray(cur._data + g), False, None)

    def apply(self, node, g, needed):
        """Runs ``node``'s derivative rule on gradient ``g``; one result per input."""
        op = node._op
        saved = node._saved
        if type(saved) is Freed:
            raise freed_error(node, saved, self.roots)
        if node._versions:
            _check_versions(node)
        params = node._params
        if op.needs_mask:
            params = dict(params) if params else {}
            params["needs"] = tuple(c is not None and (needed is None or c in needed)
                                    for c in node._next)
        if node._extra is not None and "packed" in node._extra:
            vals = [unpack_value(v, node, self.create_graph) if type(v) is Packed else v
                    for v in saved]
            vals = [wrap(v, False, None) if self.create_graph and type(v) is _ndarray else v
                    for v in vals]
            ns = DIFF if self.create_graph else RAW
        elif self.create_graph:
            vals = [_saved_tensor(node, s, v) for s, v in zip(op.save, saved)]
            ns = DIFF
        else:
            vals = [v._data if isinstance(v, Tensor) else v for v in saved]
            ns = RAW
        if _anomaly.enabled:
            grads = _checked_vjp(op, node, ns, g, vals, params)
        else:
            grads = op.vjp(ns, g, *vals, **params) if params else op.vjp(ns, g, *vals)
        if not self.retain_graph and op.frees:
            node._saved = self.freed
        return grads if type(grads) is tuple else (grads,)

    def fit(self, gi, meta):
        """Sums a broadcast gradient back to its input's shape and casts it to its dtype."""
        if type(gi) is Slots:
            return gi  # a custom Function's per-output gradients, summed per slot
        shape, dtype = meta
        if self.create_graph:
            if not isinstance(gi, Tensor):
                gi = wrap(np.asarray(gi), False, None)
            if gi._data.shape != shape:
                gi = DIFF.sum_to(gi, shape)
            if gi._data.dtype != dtype:
                from .._dtype import from_numpy_dtype
                from ..ops.elementwise import _to_dtype

                gi = _to_dtype(gi, from_numpy_dtype(dtype))
            return gi
        if np.shape(gi) != shape:
            gi = sum_to_array(gi, shape)
        if gi.dtype != dtype:
            gi = gi.astype(dtype)
        return gi


# Note [Private gradients]: a compiled region's backward (compiler/region.py) returns
# gradients that are C-ordered views of arrays it made in this call and holds nowhere else
# (a weight's gradient made transposed, then permuted back). ``own`` would copy them as views;
# handed over here (id -> the array, which keeps the id from being reused) they are kept as
# the .grad itself, as the whole-step replay's adopted gradients are. Cleared after each pass.
_private: dict = {}


def hand_over(a):
    """Marks ``a`` as memory only the current backward holds (see Note [Private gradients])."""
    _private[id(a)] = a


def _check_versions(node):
    """Note [Saved versions]: every saved tensor (and a saved output) carries the version of
    its data at save time; an in-place op bumps the version, and using the changed value for
    a gradient would be silently wrong, so the engine raises torch's error instead."""
    for i, (cell, expected) in enumerate(node._versions):
        if cell[0] != expected:
            raise modified_error(node, i, cell, expected)


def _checked_vjp(op, node, ns, g, vals, params):
    """Anomaly mode: runs a rule, names the forward line of a node that fails, and refuses a
    NaN gradient."""
    try:
        grads = op.vjp(ns, g, *vals, **params) if params else op.vjp(ns, g, *vals)
    except Exception:
        anomaly_error(node, None)  # warns with the forward traceback; the error propagates
        raise
    if _anomaly.check_nan:
        for i, gi in enumerate(grads if type(grads) is tuple else (grads,)):
            a = gi._data if isinstance(gi, Tensor) else gi
            if a is not None and np.asarray(a).dtype.kind in "fc" and np.isnan(a).any():
                raise anomaly_error(node, i)
    return grads


def _saved_tensor(node, token, value):
    """A saved value as a Tensor for a differentiable rule (the output gets grad_fn=node)."""
    if token == "out":
        return wrap(value, True, node)
    if isinstance(value, _ndarray):
        return wrap(value, False, None)
    return value


def _execute(roots, run, targets=None, capture_into=None):
    """Runs the graph from ``roots`` ((node, grad) pairs).

    With ``targets`` (node -> list of result slots), only nodes leading to a target run, and
    the gradient arriving at each target is stored in ``capture_into`` instead of accumulated.
    """
    root_nodes = [n for n, _ in roots]
    run.roots = root_nodes
    needed = _needed_nodes(root_nodes, targets) if targets is not None else None
    deps = _count_dependencies(root_nodes, needed)
    buffers = {}
    for node, g in roots:
        buffers[node] = g if node not in buffers else buffers[node] + g
    create = run.create_graph
    retain = run.retain_graph
    freed = run.freed
    # Rules that need more than raw arrays take the general path (Run.apply).
    general = create or needed is not None or _anomaly.enabled
    # Dependency counting makes any ready order correct; a stack walks depth-first, which
    # releases each chain's saved values as early as possible.
    stack = [n for n in dict.fromkeys(root_nodes) if n not in deps]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        g = buffers.pop(node, None)
        if node._extra is not None:
            # Hooks, a retained grad or packed saved values: see _hooked.
            grads = _hooked(node, g, run, needed, targets, capture_into)
            if grads is None:
                continue
            nxt = node._next
        else:
            if targets is not None and node in targets:
                for slot in targets[node]:
                    capture_into[slot] = g
                if not any(c is not None and c in needed for c in node._next):
                    continue
            if type(node) is AccumulateGrad:
                if g is not None:
                    run.accumulate(node.variable, g)
                continue
            nxt = node._next
            if g is None:
                grads = (None,) * len(nxt)
            elif general or node._op.needs_mask:
                grads = run.apply(node, g, needed)
            else:
                # The hot path: a raw-array rule, no pruning.
                op = node._op
                saved = node._saved
                if saved:
                    if type(saved) is Freed:
                        raise freed_error(node, saved, root_nodes)
                    if node._versions:
                        _check_versions(node)
                    vals = [v._data if isinstance(v, Tensor) else v for v in saved]
                    if not retain:
                        node._saved = freed
                else:
                    vals = ()
                params = node._params
                grads = op.vjp(RAW, g, *vals, **params) if params else op.vjp(RAW, g, *vals)
                if type(grads) is not tuple:
                    grads = (grads,)
        for child, gi, meta in zip(nxt, grads, node._meta):
            if child is None or (needed is not None and child not in needed):
                continue
            if gi is not None:
                if create:
                    gi = run.fit(gi, meta)
                else:
                    if gi.shape != meta[0]:
                        gi = sum_to_array(gi, meta[0])
                    if gi.dtype is not meta[1] and gi.dtype != meta[1]:
                        gi = gi.astype(meta[1])
                if child in buffers:
                    buffers[child] = buffers[child] + gi
                else:
                    buffers[child] = gi
            d = deps[child] - 1
            if d:
                deps[child] = d
            else:
                push(child)


def _retain(node, g, run):
    ref = node._extra.get("retain")
    t = ref() if ref is not None else None
    if t is not None:
        if not run.create_graph:
            g = np.array(g, copy=True)
        run.accumulate(t, g)


def _hooked(node, g, run, needed, targets, capture_into):
    """Runs a node that has hooks, a retained grad or packed saved values, in torch's order:
    tensor hooks (a leaf's before it accumulates), retain_grad, node pre-hooks, the node,
    post-accumulate-grad hooks, node post-hooks. Returns the input gradients to deliver, or
    None when nothing is delivered. As in torch, a target that must also run further is
    captured before its tensor hooks, one that stops there after them."""
    extra = node._extra
    if targets is not None and node in targets:
        further = any(c is not None and c in needed for c in node._next)
        if further:
            for slot in targets[node]:
                capture_into[slot] = g
        g = _tensor_hooks(node, extra, g, run)
        if not further:
            for slot in targets[node]:
                capture_into[slot] = g
            return None
    else:
        g = _tensor_hooks(node, extra, g, run)
    pre = extra.get("pre")
    if pre:
        multi = type(g) is Slots
        outs = tuple(g.grads) if multi else (g,)
        for fn in tuple(pre.values()):
            r = fn(tuple(_hook_arg(x, run) for x in outs))
            if r is not None:
                outs = tuple(_hook_result(x, run) for x in r)
        g = Slots(list(outs)) if multi else outs[0]
    if type(node) is AccumulateGrad:
        if g is not None:
            t = node.variable
            run.accumulate(t, g)
            post_acc = t._extra.get("post_acc") if t._extra else None
            for fn in tuple(post_acc.values()) if post_acc else ():
                fn(t)
        grads = ()
    elif g is None:
        grads = (None,) * len(node._next)
    else:
        grads = run.apply(node, g, needed)
    post = extra.get("post")
    if post:
        grads = _post_hooks(node, post, grads, g, needed, run)
    return grads


def _tensor_hooks(node, extra, g, run):
    """``Tensor.register_hook`` hooks for the gradient arriving at ``node``, then retain_grad."""
    if g is None:
        return g
    if type(node) is AccumulateGrad:
        te = node.variable._extra
        dicts = (te["hooks"],) if te and "hooks" in te else ()
    else:
        dicts = extra.get("tensor_pre", ())
    for hooks in dicts:
        for fn in tuple(hooks.values()):
            r = fn(_hook_arg(g, run))
            if r is not None:
                if not isinstance(r, Tensor):
                    raise TypeError(f"expected Variable, but hook returned "
                                    f"'{type(r).__name__}'")
                if r._data.shape != np.shape(g._data if isinstance(g, Tensor) else g):
                    raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has changed the "
                                       "size of value")
                g = _hook_result(r, run)
    if "retain" in extra:
        _retain(node, g, run)
    return g


def _post_hooks(node, post, grads, g, needed, run):
    """Node post-hooks see one gradient per ``next_functions`` entry (None where unneeded)."""
    nxt = node._next
    hidden = node._op.hidden_inputs if node._op is not None else ()
    shown = [i for i, (c, m) in enumerate(zip(nxt, node._meta))
             if not (i in hidden or (m is None and "scalars" in hidden))]
    # Hooks see each input's gradient summed to its shape, as torch's nodes deliver it.
    gin = tuple(None if nxt[i] is None or (needed is not None and nxt[i] not in needed)
                else _hook_arg(run.fit(grads[i], node._meta[i]) if grads[i] is not None
                               else None, run) for i in shown)
    gout = tuple(_hook_arg(x, run) for x in (g.grads if type(g) is Slots else (g,)))
    for fn in tuple(post.values()):
        r = fn(gin, gout)
        if r is not None:
            gin = tuple(r)
    grads = list(grads)
    for i, x in zip(shown, gin):
        grads[i] = _hook_result(x, run)
    return tuple(grads)


def _hook_arg(x, run):
    """A gradient as a hook sees it: a Tensor (its array is then never stored as a .grad
    without a copy, since the hook may keep it)."""
    if x is None or isinstance(x, Tensor):
        return x
    run.delivered.add(id(x))
    return wrap(x, False, None)


def _hook_result(x, run):
    if x is None or run.create_graph:
        return x
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulates the gradients of ``tensors`` into the ``.grad`` of graph leaves.

    >>> import graphgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> torch.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    tensors = _as_tuple(tensors)
    _cuts.note_backward(tensors)  # why_no_grad's default loss (autograd/cuts.py)
    _retention.on_backward_call()  # a step boundary when no optimizer marks one
    grad_tensors = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")

    if _dispatch._tracer is not None:  # graphgrad.compile is recording (compiler/capture.py)
        if _dispatch._tracer.backward(tensors, grad_tensors, retain_graph, create_graph, inputs):
            return
    roots, user_arrays = _root_grads(tensors, grad_tensors, create_graph)
    if retain_graph or _retention.retained:
        _report_retained(roots, retain_graph)
    run = _Run(create_graph, retain_graph, user_arrays)
    prev = _mode.grad_enabled
    _mode.grad_enabled = create_graph
    try:
        if inputs is None:
            _execute(roots, run)
            if _private:
                _private.clear()
            return
        targets = _input_targets(inputs)
        captured = [None] * len(inputs)
        _execute(roots, run, targets, captured)
        for t, g in zip(inputs, captured):
            if g is not None:
                if not create_graph and not isinstance(g, Tensor) and t.grad_fn is not None:
                    g = np.array(g, copy=True)
                run.accumulate(t, g)
    finally:
        _mode.grad_enabled = prev
        if _private:
            _private.clear()


def _report_retained(roots, retain_graph):
    """Tells the retention detector about a backward that keeps its graph, or that reuses a
    kept one (see graphgrad/diagnostics/retention.py)."""
    _retention.on_backward([n for n, _ in roots], retain_graph,
                           sites.capture(3) if retain_graph else None)


def _input_targets(inputs):
    """Maps each input's node (grad_fn, or AccumulateGrad for a leaf) to its result slots."""
    targets = {}
    for i, t in enumerate(inputs):
        if isinstance(t, GradientEdge):
            targets.setdefault(_engine_node(t), []).append(i)
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor inputs, got {type(t).__name__}")
        if not t._rg:
            raise AutogradError("One of the differentiated Tensors does not require grad",
                                shapes=[list(t._data.shape)],
                                fix=f"input {i} has requires_grad=False; create it with "
                                    "requires_grad=True or call .requires_grad_() on it")
        node = t._fn if t.grad_fn is not None else t._accumulator()
        targets.setdefault(node, []).append(i)
    return targets


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned instead of accumulated.

    >>> import graphgrad as torch
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> torch.autograd.grad(x ** 2, x)
    (tensor(6.),)
    """
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads"
                         "=True, but got: allow_unused=False.")
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    grad_outputs = _as_tuple(grad_outputs)

    if _dispatch._tracer is not None:  # graphgrad.compile cannot record autograd.grad
        _dispatch._tracer.unsupported("torch.autograd.grad()")
    roots, user_arrays = _root_grads(outputs, grad_outputs, create_graph)
    if retain_graph or _retention.retained:
        _report_retained(roots, retain_graph)
    targets = _input_targets(inputs)
    captured = [None] * len(inputs)
    run = _Run(create_graph, retain_graph, user_arrays)
    prev = _mode.grad_enabled
    _mode.grad_enabled = create_graph
    try:
        _execute(roots, run, targets, captured)
    finally:
        _mode.grad_enabled = prev
        if _private:
            _private.clear()
    results = []
    for t, g in zip(inputs, captured):
        if isinstance(t, GradientEdge):
            if g is None and not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {len(results)} appears "
                                   "to not have been used in the graph. Set allow_unused=True if "
                                   "this is the desired behavior.")
            results.append(g if g is None or isinstance(g, Tensor)
                           else wrap(run.own(np.asarray(g)), False, None))
            continue
        if g is None:
            if not allow_unused:
                raise AutogradError(
                    f"The differentiated Tensor at index {len(results)} appears to not have "
                    "been used in the graph. Set allow_unused=True if this is the desired "
                    "behavior.",
                    shapes=[list(t._data.shape)],
                    fix=f"input {len(results)} does not reach the outputs (was it replaced, "
                        "detached, or used only under no_grad?); pass allow_unused=True to get "
                        "None for it")
            results.append(wrap(np.zeros_like(t._data), False, None) if materialize_grads
                           else None)
        elif isinstance(g, Tensor):
            results.append(g)
        else:
            results.append(wrap(run.own(np.asarray(g, dtype=t._data.dtype)), False, None))
    return tuple(results)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    # is_grads_batched: the leading dim of every grad_output is a batch of vectors; one
    # backward per row (PyTorch vmaps it; the results are the same), stacked per input
    from graphgrad import stack

    gos = _as_tuple(grad_outputs)
    if not gos or any(g is None for g in gos):
        raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of "
                           "each grad_output as the batch dimension.")
    n = gos[0].shape[0]
    if retain_graph is None:
        retain_graph = create_graph
    rows = [grad(outputs, inputs, [g[i] for g in gos], retain_graph=retain_graph or i < n - 1,
                 create_graph=create_graph, allow_unused=allow_unused,
                 materialize_grads=materialize_grads) for i in range(n)]
    return tuple(None if col[0] is None else stack(col) for col in zip(*rows))


def call_node(node, grads):
    """``grad_fn(*grads)``: runs one node's rule on the given output gradients."""
    arrays = [g._data if isinstance(g, Tensor) else g if g is None else np.asarray(g)
              for g in grads]
    g = arrays[0] if len(arrays) == 1 else Slots(arrays)
    run = _Run(False, True, set())
    out = run.apply(node, g, None)
    res = []
    for gi, meta in zip(out, node._meta):
        res.append(None if gi is None or meta is None else wrap(run.fit(gi, meta), False, None))
    return tuple(res) if len(res) != 1 else res[0]
