"""``graphgrad.compile``: the decorator, the compiled-function object and its variant cache.

A call computes its guard key, finds a variant (or captures a new one: the capture call itself
runs eagerly and returns the eager result), and replays the variant's executor. A capture that
hit a graph break makes an eager variant for that key (warned once, naming the line).
"""

from __future__ import annotations

import functools
import threading
import warnings

from .._tensor import Tensor, wrap
from ..ops import _dispatch
from . import controls as _controls
from . import dynamic as _dynamic
from . import logs as _logs
from . import pyguards as _pyguards
from . import stance as _stance
from . import verify as _verify
from .capture import capture, flatten, unflatten
from .executor import Executor
from .guards import RECOMPILE_LIMIT, Guards, call_key
from .passes import run_all
from .region import stepped_outputs

__all__ = ["compile", "CompiledFunction", "Variant", "compile_graph"]


def compile_graph(graph, *, backend=None, mode=None, options=None):
    """The pipeline: passes (core, then fusion and memory plan when present), then lowering.

    ``codegen.lower(graph, backend=...)`` (compiler/codegen/, when present) may return a runner
    with ``run(tensors)`` like Executor's; otherwise the plain Executor runs the graph.
    Returns (runner, pass report)."""
    core_only = bool(options and options.get("core_only"))
    report = run_all(graph, mode=mode, extra=not core_only)
    runner = None
    try:
        from .codegen import lower
    except ImportError:
        lower = None
    if lower is not None and not core_only:
        runner = lower(graph, backend=backend)
    return _serialized(runner or Executor(graph)), report


def _serialized(runner):
    """Replays of one runner run one at a time (Note [Threads]): its memory plan's buffers and
    argument box are shared by every call and numba kernels release the GIL. A replay that
    re-enters its own runner (a hook run by an opaque step calling the same compiled function)
    would overwrite its buffers: refused."""
    # Note [Threads]: a lock per runner (the forward and the compiled backward each have one)
    # rather than buffers per thread: an uncontended lock costs about 0.5 us per call
    # (bench/bench_guards.py) and no memory; concurrent calls of one compiled function queue
    # on it (different compiled functions, and eager code, still run in parallel).
    lock = threading.RLock()
    busy = [False]
    run = runner.run

    def locked_run(tensors, *rest, **kwargs):
        with lock:
            if busy[0]:  # the same thread, inside its own replay
                raise RuntimeError("graphgrad.compile: a compiled function was called again "
                                   "from inside its own replay (e.g. by a hook an optimizer "
                                   "step ran); this is not supported")
            busy[0] = True
            try:
                return run(tensors, *rest, **kwargs)
            finally:
                busy[0] = False
    runner.run_unlocked = run
    runner.run = locked_run
    return runner


# One capture at a time in the process (the recorder is installed process-wide): a thread
# whose call would capture while another thread captures runs that call eagerly.
_CAPTURING = threading.Lock()


class Variant:
    """One compiled specialisation: guards, graph, runner (None for an eager fallback)."""

    def __init__(self, guards, graph=None, runner=None, cap=None, report=None, raw_text=None,
                 reason=None):
        self.guards = guards
        self.graph = graph
        self.runner = runner
        self.cap = cap
        self.report = report or []
        self.raw_text = raw_text  # the captured IR before the passes (explain)
        self.reason = reason  # why this variant runs eagerly
        self.calls = 0
        self.verify_next = False
        self.dynamic = False  # instantiated from a dynamic=True template
        self.region = None  # a region.Region: outputs carry a CompiledFunctionBackward node
        # (output position, input position) of outputs that are an input returned as it is:
        # the replay returns the call's tensor itself, as eager does
        self.passthrough = () if graph is None else tuple(
            (k, graph.inputs.index(o)) for k, o in enumerate(graph.outputs)
            if o.kind == "input")
        self.stepped = ()  # output positions that required grad after a backward inside


class CompiledFunction:
    """What ``graphgrad.compile(fn)`` returns: call it as ``fn``."""

    def __init__(self, fn, *, fullgraph=False, dynamic=False, verify=None, backend=None,
                 mode=None, options=None, modules=(), ext_names=None):
        self.fn = fn
        # backend names torch users pass ("inductor", "eager") mapped to graphgrad's
        backend, self.options = _controls.resolve(mode, backend, options)
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.verify = verify
        self.backend = backend
        self.mode = mode
        self.modules = tuple(modules)
        self.ext_names = ext_names or {}
        self.variants: list[Variant] = []
        self.breaks: list = []
        self.recaptures = []  # the failed guard behind each capture after the first
        self.limit_warned = False
        self.template = None  # dynamic=True: the graph over the batch size (dynamic.py)
        self.not_dynamic = None  # why the captures could not be generalized
        functools.update_wrapper(self, fn, updated=())
        _stance.register(self)

    def _names(self):
        names = dict(self.ext_names)
        for mod in self.modules:
            for n, p in mod.named_parameters():
                names.setdefault(id(p), n)
            for n, b in mod.named_buffers():
                names.setdefault(id(b), n)
        return names

    def __call__(self, *args, **kwargs):
        if _dispatch._tracer is not None or _stance.state.name != "default":
            out = _stance.prologue(self, args, kwargs)  # nested in a capture, force_eager
            if out is not _stance.GO:
                return out
        key = call_key(args, kwargs, self.modules)
        reason = None
        for v in self.variants:
            why = v.guards.check(key)
            if why is None:
                return self._run(v, args, kwargs)
            reason = reason or why
        if _stance.state.name != "default" and _stance.miss(self, reason):
            return self.fn(*args, **kwargs)  # eager_on_recompile
        if self.dynamic and self.template is not None:
            v = self._instantiate(key, args, kwargs)
            if v is not None:
                return self._run(v, args, kwargs)
        if self.variants:
            if sum(1 for v in self.variants if not v.dynamic) >= RECOMPILE_LIMIT:
                if not self.limit_warned:
                    warnings.warn(f"graphgrad.compile: recompile limit ({RECOMPILE_LIMIT}) "
                                  f"reached for {_fn_name(self.fn)}; last failed guard: "
                                  f"{reason}. Running eagerly from now on.", stacklevel=2)
                    self.limit_warned = True
                return self.fn(*args, **kwargs)
            self.recaptures.append(reason)
            _logs.recompile(self, reason)
        return self._capture(key, args, kwargs, reason)

    def _capture(self, key, args, kwargs, reason=None):
        if not _CAPTURING.acquire(blocking=False):
            return self.fn(*args, **kwargs)  # another thread is capturing: eager this call
        try:
            # Python state the call reads is guarded, its side effects break the graph
            # (pyguards.py, Note [Python-state guards])
            with _pyguards.StateTrace(self.fn, args, kwargs, self.modules,
                                      self.fullgraph) as state:
                cap, result = capture(self.fn, args, kwargs, fullgraph=self.fullgraph,
                                      ext_names=self._names(), region=False)
            cap.record_region()  # the compiled backward (region.py), outside the state trace
        finally:
            _CAPTURING.release()
        state.attach(cap)
        if cap.breaks:
            err = cap.breaks[0]
            self.breaks.append(err)
            _logs.graph_break(self, err)
            warnings.warn(f"graphgrad.compile: graph break in {_fn_name(self.fn)}: {err}; this "
                          "call and later ones with the same inputs run eagerly "
                          "(fullgraph=True raises instead)", stacklevel=3)
            self.variants.append(Variant(Guards(key, cap.graph), cap=cap, reason=str(err)))
            return result
        graph = cap.graph
        if cap.joint is not None:
            return self._capture_region(key, cap, args, kwargs, result)
        if _needs_autograd(result) and not cap.did_backward:
            # Outputs that need autograd history whose backward could not be compiled.
            self.variants.append(Variant(Guards(key, graph), cap=cap, reason=(
                "its outputs need autograd history and "
                + (cap.region_error or "an input is returned as it is"))))
            return result
        stepped = _stepped(cap, result)
        raw_text = graph.format()
        pre = list(graph.instrs)
        raw = _dynamic.RawGraph(graph) if self.dynamic else None
        runner, report = compile_graph(graph, backend=self.backend, mode=self.mode,
                                       options=self.options)
        v = Variant(Guards(key, graph), graph, runner, cap, report, raw_text)
        v.pre = pre
        if raw is not None:
            v.raw, v.key = raw, key
            v.batch = _dynamic.batch_size(_leaves(args, kwargs))
            self._generalize(v)
        self.variants.append(v)
        if self.verify:
            v.verify_next = True
        else:
            cap.release()  # verify's divergence search reads the capture's arrays
        if stepped:
            v.stepped = stepped
            result = _restep(cap, result, stepped)
        return result

    def _capture_region(self, key, cap, args, kwargs, result):
        """A variant whose outputs carry a CompiledFunctionBackward node (region.py)."""
        from .region import NoRegion, compile_region

        leaves = _leaves(args, kwargs)
        guards = Guards(key, cap.graph)
        raw_text = cap.graph.format()
        try:
            runner, report, region, saved_now = compile_region(
                cap, self.fn, functools.partial(compile_graph, backend=self.backend,
                                                mode=self.mode, options=self.options), leaves)
        except NoRegion as err:
            self.variants.append(Variant(guards, cap=cap, reason=(
                f"its outputs need autograd history and {err}")))
            return result
        v = Variant(guards, cap.graph, runner, cap, report, raw_text)
        v.pre = list(cap.graph.instrs)
        v.region = region
        self.variants.append(v)
        # The capture call returns the same kind of outputs as the replays: its eager values,
        # wired to a region node that holds this call's saved values.
        outs: list = []
        flatten(result, outs)
        objects = [t if val.kind != "temp" else None
                   for t, val in zip(outs, cap.graph.outputs[:region.n_out])]
        tensors = region.outputs([t._data for t in outs] + saved_now, leaves, args, kwargs,
                                 objects)
        cap.release()
        return unflatten(cap.out_spec, tensors)

    def _generalize(self, v):
        """dynamic=True: diffs a new capture against the first one at another batch size."""
        if self.template is not None or self.not_dynamic is not None:
            return
        for w in self.variants:
            raw = getattr(w, "raw", None)
            if raw is None or w.batch == v.batch:
                continue
            try:
                self.template = _dynamic.generalize_graphs(raw, w.key, w.batch, v.raw, v.key,
                                                           v.batch)
                self.template.variant = w
            except _dynamic.NotDynamic as err:
                self.not_dynamic = str(err)
            return

    def _instantiate(self, key, args, kwargs):
        """A variant for this call's batch size from the template (no Python re-run), or
        None when the template does not apply."""
        t = self.template
        n = _dynamic.batch_size(_leaves(args, kwargs))
        if n is None or not t.matches(key, n):
            return None
        graph = t.graph(n)
        pre = list(graph.instrs)
        runner, report = compile_graph(graph, backend=self.backend, mode=self.mode,
                                       options=self.options)
        v = Variant(Guards(key, graph, getattr(t.variant.cap.graph, "py_guards", None)), graph,
                    runner, t.variant.cap, report, graph.format())
        v.pre, v.dynamic = pre, True
        self.variants.append(v)
        if self.verify:
            v.verify_next = True
        return v

    def _run(self, v, args, kwargs):
        if v.runner is None:
            return self.fn(*args, **kwargs)
        v.calls += 1
        if self.verify and _verify.due(self.verify, v):
            out, ok = _verify.check(self, v, args, kwargs)
            if out is not None:
                return out
        return run_variant(v, args, kwargs)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)


def run_variant(v, args, kwargs):
    cap = v.cap
    if not kwargs and all(type(a) is Tensor for a in args):
        leaves = args  # flatten's order for positional tensors
    else:
        leaves = []
        flatten((args, kwargs), leaves)
    arrays = v.runner.run(leaves)
    region = v.region
    if region is not None:
        return unflatten(cap.out_spec, region.outputs(arrays, leaves, args, kwargs,
                                                      v.runner.out_objects))
    if v.stepped:
        outs = [obj if obj is not None else wrap(a, False, None)
                for a, obj in zip(arrays, v.runner.out_objects)]
        return unflatten(cap.out_spec, stepped_outputs(v.stepped, outs))
    if v.passthrough:
        outs = [obj if obj is not None else wrap(a, False, None)
                for a, obj in zip(arrays, v.runner.out_objects)]
        for k, i in v.passthrough:
            outs[k] = leaves[i]
        return unflatten(cap.out_spec, outs)
    if cap.out_spec == _ONE_TENSOR:
        obj = v.runner.out_objects[0]
        return obj if obj is not None else wrap(arrays[0], False, None)
    outs = []
    for a, obj in zip(arrays, v.runner.out_objects):
        if obj is not None:
            outs.append(obj)
        else:
            outs.append(wrap(a, False, None))
    return unflatten(cap.out_spec, outs)


_ONE_TENSOR = ("T",)


def _leaves(args, kwargs):
    leaves: list = []
    flatten((args, kwargs), leaves)
    return leaves


def _stepped(cap, result):
    """Output positions that require grad in a whole step (a backward ran inside): the
    replays give them a consumed region node, as the capture call's outputs are (their
    graph was used by that backward)."""
    if not cap.did_backward:
        return ()
    outs: list = []
    flatten(result, outs)
    return tuple(k for k, (t, val) in enumerate(zip(outs, cap.graph.outputs))
                 if isinstance(t, Tensor) and t._rg and t._fn is not None
                 and val.kind == "temp")


def _restep(cap, result, stepped):
    outs: list = []
    flatten(result, outs)
    return unflatten(cap.out_spec, stepped_outputs(stepped, outs))


def _needs_autograd(result):
    leaves: list = []
    flatten(result, leaves)
    return any(isinstance(t, Tensor) and t._rg and t._fn is not None for t in leaves)


def _fn_name(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def compile(model=None, *, fullgraph=False, dynamic=False, verify=None, backend=None,
            mode=None, options=None, disable=False):
    """Compiles a function or Module, as ``torch.compile``: usable as ``@compile``,
    ``@compile(fullgraph=True)``, ``compile(fn)`` and ``compile(model)``.

    >>> import graphgrad as torch
    >>> f = torch.compile(lambda x: (x * 2).sum())
    >>> f(torch.ones(3))
    tensor(6.)
    """
    from ..nn.modules.module import Module

    _controls.resolve(mode, backend, options)  # unknown values raise here, as torch
    opts = dict(fullgraph=fullgraph, dynamic=dynamic, verify=verify, backend=backend,
                mode=mode, options=options)
    if model is None:
        return lambda fn: compile(fn, **opts, disable=disable)
    if disable:
        return model
    if isinstance(model, Module):
        from .module import OptimizedModule

        return OptimizedModule(model, **opts)
    if not callable(model):
        raise RuntimeError("compile: the argument must be callable (a function or a Module)")
    modules = [model.__self__] if isinstance(getattr(model, "__self__", None), Module) else []
    return CompiledFunction(model, modules=modules, **opts)
