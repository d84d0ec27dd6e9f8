"""``graphgrad.onnx.export``: the captured forward (the compiler's IR) written as an ONNX model.

The model is captured (no_grad, in the mode it is in); dynamic axes are found per Note
[Symbolic sizes]; each live instr goes through the mapping table (ops.py); parameters and
buffers become initializers (external data past 2 GB). The audit (audit.py) runs first.
"""

from __future__ import annotations

import os
import tempfile
import warnings

import numpy as np

from .._tensor import Tensor
from ._capture import GraphBreak, capture_forward
from ._deps import require_onnx
from ._dynamic import Finding, grow, symbolize
from .builder import Builder, ExportError
from .ops import LATEST_OPSET, MIN_OPSET, lookup

__all__ = ["export", "ExportError", "Prepared", "prepare", "convert", "resolve_opset"]

# protobuf cannot serialize a message of 2 GB or more; keep room for the graph itself
_LIMIT = 2 ** 31 - 2 ** 26


def resolve_opset(opset_version):
    """The opset written: the one asked for, capped at the highest export supports."""
    if opset_version is None:
        return LATEST_OPSET
    if opset_version < MIN_OPSET:
        raise ValueError(f"graphgrad.onnx exports opset {MIN_OPSET} to {LATEST_OPSET}; "
                         f"got opset_version={opset_version}")
    return min(int(opset_version), LATEST_OPSET)


def _split_args(args):
    if isinstance(args, Tensor):
        return (args,), {}
    args = tuple(args)
    if args and isinstance(args[-1], dict):
        return args[:-1], dict(args[-1])
    return args, {}


class Prepared:
    """A captured forward ready to convert: the graph, names, dynamic dims and findings."""

    def __init__(self):
        self.findings: list[Finding] = []
        self.graph = None
        self.cap = None
        self.leaves = []
        self.input_names = []
        self.output_names = []
        self.dynamic_in = {}  # input index -> {axis: dim name}
        self.dynamic_out = {}  # output index -> {axis: dim name}
        self.const_shapes = {}
        self.variants = []  # (leaves, result leaves) at grown sizes, for the run-time check
        self.training_modules = []


def _user_frame(exc):
    """``file:line`` of the innermost traceback frame outside graphgrad."""
    from ..autograd.sites import _is_internal

    tb, site = exc.__traceback__, None
    while tb is not None:
        f = tb.tb_frame
        if not _is_internal(f.f_code.co_filename):
            site = f"{f.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return site


def _axes_map(spec, n, names, kind):
    """dynamic_axes entries for ``names`` -> {index: {axis: dim name}}."""
    out = {}
    for i, name in enumerate(names):
        if name not in spec:
            continue
        axes = spec[name]
        if isinstance(axes, dict):
            out[i] = {int(a): str(d) for a, d in axes.items()}
        else:
            out[i] = {int(a): f"{name}_dynamic_axes_{k + 1}" for k, a in enumerate(axes)}
    return out


def prepare(model, args, *, input_names=None, output_names=None, dynamic_axes=None,
            probe_axes=None):
    """Captures ``model`` at ``args`` (and at grown sizes for each dynamic axis).

    ``probe_axes`` ({input index: [axes]}): axes grown only to look for baked sizes (the
    audit's default probe of axis 0), reported as notes when not declared dynamic.
    """
    from ..compiler.capture import flatten

    p = Prepared()
    args, kwargs = _split_args(args)
    leaves: list = []
    flatten((args, kwargs), leaves)
    p.leaves = leaves
    p.input_names = list(input_names) if input_names else (
        ["input"] if len(leaves) == 1 else [f"input_{i}" for i in range(len(leaves))])
    if len(p.input_names) < len(leaves):
        p.input_names += [f"input_{i}" for i in range(len(p.input_names), len(leaves))]
    if hasattr(model, "modules"):
        p.training_modules = [(n, m) for n, m in model.named_modules() if m.training]
    try:
        cap, _ = capture_forward(model, args, kwargs)
    except GraphBreak as err:
        why = err.reason
        if "into Python" in why:
            why += (": its value would be baked into the file as a constant (a Python branch "
                    "or number computed from a tensor's values); compute it with tensor ops "
                    "(torch.where, masks) instead")
        else:
            why += ": the compiler's capture cannot record it, so the forward cannot be exported"
        p.findings.append(Finding("graph-break", "error", why, None, err.site))
        return p
    except Exception as err:  # noqa: BLE001 - reported as a finding with the user's line
        p.findings.append(Finding("capture-failed", "error",
                                  f"the forward raised {type(err).__name__}: {err}", None,
                                  _user_frame(err)))
        return p
    p.cap, p.graph = cap, cap.graph
    bad = _replay_check(cap)
    if bad is not None:
        p.findings.append(Finding(
            "capture-mismatch", "error",
            f"the recorded graph does not reproduce the forward's output {bad} (the capture "
            "missed an operation, e.g. an in-place write under no_grad); the file would be "
            "wrong"))
    n_out = len(cap.graph.outputs)
    p.output_names = list(output_names) if output_names else (
        ["output"] if n_out == 1 else [f"output_{i}" for i in range(n_out)])
    if len(p.output_names) < n_out:
        p.output_names += [f"output_{i}" for i in range(len(p.output_names), n_out)]
    for op, k, site, severity, why in cap.baked_arrays:
        p.findings.append(Finding("baked-value", severity, f"parameter {k!r}: {why}", op, site))
    spec = dynamic_axes or {}
    unknown = [k for k in spec if k not in p.input_names and k not in p.output_names]
    if unknown:
        raise ValueError(f"dynamic_axes names {unknown} are neither input nor output names "
                         f"(inputs {p.input_names}, outputs {p.output_names})")
    p.dynamic_in = _axes_map(spec, len(leaves), p.input_names, "input")
    p.dynamic_out = _axes_map(spec, n_out, p.output_names, "output")
    _probe(p, model, args, kwargs, probe_axes or {})
    return p


def _replay_check(cap):
    """Replays the IR on NumPy; returns the index of the first output that differs from the
    eager result (None when all agree, or when the graph has effects and cannot replay)."""
    g = cap.graph
    if any(i.special and i.op not in ("cast",) for i in g.instrs):
        return None
    env = {}
    for v in g.inputs:
        env[v] = None
    for v, t in zip(g.inputs, _input_tensors(cap)):
        env[v] = t._data
    for v in g.externals:
        env[v] = v.data._data if isinstance(v.data, Tensor) else v.data
    for v in g.consts:
        env[v] = v.data
    try:
        for instr in g.instrs:
            res = instr.kernel()(*[env[v] for v in instr.values()])
            res = res if isinstance(res, tuple) else (res,)
            for v, r in zip(instr.outs, res):
                if v is not None:
                    env[v] = r
    except Exception:  # noqa: BLE001 - a kernel that cannot replay alone: no verdict
        return None
    for k, (v, t) in enumerate(zip(g.outputs, cap.result_leaves)):
        a, e = np.asarray(env.get(v)), t._data
        if a.shape != e.shape or not np.allclose(a, e, rtol=1e-5, atol=1e-6, equal_nan=True):
            return k
    return None


def _input_tensors(cap):
    return cap.input_tensors


def _probe(p, model, args, kwargs, probe_axes):
    """Captures at grown sizes; fits SymInts (Note [Symbolic sizes])."""
    from ..compiler.capture import flatten, unflatten

    spec_leaves: list = []
    spec = flatten((args, kwargs), spec_leaves)
    wanted = [(i, a, True) for i, axes in p.dynamic_in.items() for a in axes]
    wanted += [(i, a, False) for i, axes in probe_axes.items() for a in axes
               if a not in p.dynamic_in.get(i, {}) and a < len(p.leaves[i].shape)]
    variants, declared_any = [], False
    for i, axis, declared in wanted:
        if axis >= len(p.leaves[i].shape):
            p.findings.append(Finding("not-dynamic", "error", f"input {p.input_names[i]!r} has "
                                      f"no axis {axis} to make dynamic"))
            continue
        size0 = p.leaves[i].shape[axis]
        grown = grow(p.leaves, i, axis, 1 if size0 > 1 else 2)
        a2, k2 = unflatten(spec, grown)
        sev = "error" if declared else "note"
        try:
            cap2, _ = capture_forward(model, a2, k2)
        except Exception as err:  # noqa: BLE001 - a finding with the user's line
            p.findings.append(Finding(
                "baked-shape", sev,
                f"the model fails when {p.input_names[i]!r} axis {axis} goes from {size0} to "
                f"{grown[i].shape[axis]} ({type(err).__name__}: {err}); a size is baked in "
                "(e.g. view(BATCH, ...) with a constant)", None, _user_frame(err)))
            continue
        variants.append((cap2.graph, i, axis, size0, grown[i].shape[axis]))
        declared_any |= declared
        p.variants.append((grown, cap2.result_leaves, i, axis))
        for o, (v0, v1) in enumerate(zip(p.graph.outputs, cap2.graph.outputs)):
            for d in p.dynamic_out.get(o, {}):
                if declared and d < len(v0.shape) and v0.shape[d] == v1.shape[d]:
                    p.findings.append(Finding(
                        "not-dynamic", "error",
                        f"output {p.output_names[o]!r} axis {d} is declared dynamic but stays "
                        f"{v0.shape[d]} when {p.input_names[i]!r} axis {axis} changes"))
    if variants:
        fitter = symbolize(p.graph, variants, p.findings, declared=declared_any)
        if fitter:
            p.const_shapes = fitter.const_shapes


def _live(graph):
    need = set(graph.outputs)
    live = []
    for instr in reversed(graph.instrs):
        if any(o is not None and o in need for o in instr.outs):
            live.append(instr)
            need.update(instr.values())
    return live[::-1]


def convert(p: Prepared, opset, *, do_constant_folding=True, collect=None):
    """Builds the ModelProto. With ``collect`` (a list), every op that cannot be converted is
    appended as a Finding and conversion goes on; otherwise the first raises ExportError."""
    onnx = require_onnx()
    helper = onnx.helper
    graph = p.graph
    b = Builder(opset, {})
    b.dynamic = bool(p.dynamic_in)
    in_infos, out_infos = [], []
    for i, v in enumerate(graph.inputs):
        name = p.input_names[i]
        b.used.add(name)
        b.names[v] = name
        dims = [p.dynamic_in.get(i, {}).get(d, s) for d, s in enumerate(v.shape)]
        in_infos.append(helper.make_tensor_value_info(name, b.tensor_type(v.dtype), dims))
    live = _live(graph)
    used = set(graph.outputs).union(*(i.values() for i in live)) if live else set(graph.outputs)
    for v in graph.externals:
        if v not in used:
            continue
        arr = np.array(v.data._data if isinstance(v.data, Tensor) else v.data, order="C")
        b.names[v] = name = b.fresh(v.name or "param")
        b.initializers.append(onnx.numpy_helper.from_array(np.asarray(arr), name))
    for v in graph.consts:
        if v in p.const_shapes:
            value = np.asarray(v.data).reshape(-1)[:1].reshape(())
            b.names[v] = b.node("Expand", [b.const(value), b.i64(p.const_shapes[v])])
        else:
            b.names[v] = b.const(np.asarray(v.data), "const")
    for instr in live:
        try:
            fold = do_constant_folding and not any(v in p.const_shapes for v in instr.values())
            outs = _convert_instr(b, instr, opset, fold)
        except ExportError as err:
            if collect is None:
                raise ExportError(f"{err} (at {instr.site})" if instr.site else str(err)) from None
            collect.append(_op_finding(instr, err))
            outs = [b.fresh("missing") for _ in instr.outs]
        for v, name in zip(instr.outs, outs):
            if v is not None and name is not None:
                b.names[v] = name
    for o, v in enumerate(graph.outputs):
        name = p.output_names[o]
        b.used.add(name)
        src = b.names.get(v)
        if src is None:
            raise ExportError(f"output {o} was not computed")
        b.nodes.append(helper.make_node("Identity", [src], [name], name=b.fresh("n_output")))
        dims = [p.dynamic_out.get(o, {}).get(d, s) for d, s in enumerate(v.shape)]
        out_infos.append(helper.make_tensor_value_info(name, b.tensor_type(v.dtype), dims))
    g = helper.make_graph(b.nodes, "graphgrad", in_infos, out_infos, b.initializers)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="graphgrad", producer_version=_version())
    return model, b


def _version():
    try:
        from importlib.metadata import version

        return version("graphgrad")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return "0"


def _op_finding(instr, err):
    from .ops import MAPPINGS

    m = MAPPINGS.get(instr.name) if not instr.special else None
    return Finding("unsupported-op", "error", str(err), instr.name, instr.site,
                   m.min_opset if m else None)


def _convert_instr(b, instr, opset, fold):
    if instr.special:
        if instr.op == "cast":
            src, out = instr.ins[0], instr.outs[0]
            name = b.cast(b.x(src), src.dtype, out.dtype)
            if src.shape != out.shape:  # an in-place write of a broadcast value
                name = b.node("Expand", [name, b.i64(out.shape)])
            return [name]
        if instr.op == "load":
            raise ExportError("the forward reads a tensor after changing it in place "
                              "(a training-mode update); export the model in eval mode")
        if instr.op == "random":
            raise ExportError(f"random op {instr.label or ''} (dropout or a random draw in train "
                              "mode) has no deterministic ONNX form; call model.eval()")
        raise ExportError(f"the forward records a {instr.op} instr, which an inference "
                          "graph cannot hold")
    if instr.outs and all(v is None or (0 in v.shape and _static(b, v)) for v in instr.outs):
        # every output is empty: a constant says it all (ONNX ops disagree on size-0 edges)
        return [None if v is None else b.const(np.zeros(v.shape, v.dtype)) for v in instr.outs]
    if fold and instr.values() and all(v.kind == "const" for v in instr.values()):
        res = instr.kernel()(*[v.data for v in instr.values()])
        res = res if isinstance(res, tuple) else (res,)
        return [None if v is None else b.const(np.asarray(r).astype(v.dtype).reshape(v.shape))
                for v, r in zip(instr.outs, res)]
    m = lookup(instr.name, opset)
    outs = m.convert(b, instr)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return outs + [None] * (len(instr.outs) - len(outs))


def _static(b, v):
    return not b.dynamic


def _write(model, f):
    """Writes ``model`` to a path atomically (external data past 2 GB) or to a file object;
    returns True when the tensors went to an external data file."""
    onnx = require_onnx()
    big = sum(t.ByteSize() for t in model.graph.initializer) >= _LIMIT
    if not isinstance(f, (str, os.PathLike)):
        if big:
            raise ExportError("a model over 2 GB needs external data files: pass a path, "
                              "not a file object")
        f.write(model.SerializeToString())
        return False
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        if big:
            # The data file is written under its final name next to the model; the model file
            # is renamed into place last, so a reader never sees a model without its data.
            onnx.save_model(model, tmp, save_as_external_data=True,
                            all_tensors_to_one_file=True, location=base + ".data",
                            size_threshold=1024)
            os.replace(tmp, path)
            return True
        else:
            with open(tmp, "wb") as fh:
                fh.write(model.SerializeToString())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        return False
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# torch.onnx.export's options that only steer torch's own exporters (dynamo or TorchScript)
# and change nothing in the file graphgrad writes: accepted at their defaults, as a program
# written for torch passes them. Other values are refused (NotImplementedError).
_TORCH_OPTIONS = {"dynamo": None, "external_data": None, "report": None, "optimize": None,
                  "verify": None, "profile": None, "dump_exported_program": None,
                  "artifacts_dir": None, "export_params": True,
                  "keep_initializers_as_inputs": False, "export_modules_as_functions": False,
                  "autograd_inlining": None, "operator_export_type": None,
                  "custom_opsets": None, "custom_translation_table": None,
                  "dynamic_shapes": None}


def _check_torch_options(options) -> None:
    for name, value in options.items():
        if name not in _TORCH_OPTIONS:
            raise TypeError(f"export() got an unexpected keyword argument '{name}'")
        want = _TORCH_OPTIONS[name]
        if want is not None and value != want:
            raise NotImplementedError(f"graphgrad.onnx.export: {name}={value!r} is not "
                                      f"supported (graphgrad writes {name}={want!r})")
        if name == "dynamic_shapes" and value is not None:
            raise NotImplementedError("graphgrad.onnx.export: dynamic_shapes (torch.export's "
                                      "spelling) is not supported; pass dynamic_axes")


def export(model, args, f, *, input_names=None, output_names=None, dynamic_axes=None,
           opset_version=None, do_constant_folding=True, audit=True, verbose=False,
           training=None, kwargs=None, **torch_options):
    """Exports ``model`` run on ``args`` to the ONNX file ``f`` (a path or a binary file).

    As ``torch.onnx.export(..., dynamo=False)``: ``args`` a tensor or a tuple (a trailing dict
    holds keyword arguments), ``input_names``/``output_names`` name the graph's inputs and
    outputs, ``dynamic_axes`` maps a name to its dynamic axes (a list, or {axis: name}).
    The model is exported in the mode it is in (``training=`` "eval"/"train" switches it for
    the export, then restores). ``audit=True`` runs graphgrad.onnx.audit first: errors raise
    ExportError with the whole report, warnings are issued; the report is returned.

    >>> import graphgrad as torch, io
    >>> buf = io.BytesIO()
    >>> report = torch.onnx.export(torch.nn.Linear(3, 2), (torch.zeros(4, 3),), buf)
    >>> buf.getvalue()[:2] != b""
    True
    """
    _check_torch_options(torch_options)
    if kwargs:
        args = tuple(_split_args(args)[0]) + (dict(kwargs),)
    opset = resolve_opset(opset_version)
    modes = _set_mode(model, training)
    try:
        if audit:
            from .audit import audit as run_audit

            report = run_audit(model, args, input_names=input_names, output_names=output_names,
                               dynamic_axes=dynamic_axes, opset_version=opset,
                               do_constant_folding=do_constant_folding, _keep=True)
            if report.errors:
                raise ExportError(f"graphgrad.onnx.export: the audit found problems:\n{report}")
            for w in report.warnings:
                warnings.warn(f"graphgrad.onnx.export: {w}", stacklevel=2)
            onnx_model = report._model
        else:
            report = None
            p = prepare(model, args, input_names=input_names, output_names=output_names,
                        dynamic_axes=dynamic_axes)
            errors = [x for x in p.findings if x.severity == "error"]
            if errors:
                raise ExportError("graphgrad.onnx.export: " + "; ".join(map(str, errors)))
            onnx_model, _ = convert(p, opset, do_constant_folding=do_constant_folding)
            require_onnx().checker.check_model(onnx_model, full_check=True)
    finally:
        _restore_mode(modes)
    if verbose:
        print(require_onnx().helper.printable_graph(onnx_model.graph))
    if _write(onnx_model, f):
        require_onnx().checker.check_model(os.fspath(f), full_check=True)
    return report


def _set_mode(model, training):
    if training is None or not hasattr(model, "modules"):
        return None
    name = getattr(training, "name", training)
    want = str(name).lower() in ("train", "training", "true")
    saved = [(m, m.training) for m in model.modules()]
    model.train(want)
    return saved


def _restore_mode(saved):
    for m, mode in saved or ():
        m.training = mode

