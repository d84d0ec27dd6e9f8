"""``graphgrad.onnx.audit``: every export problem of a model in one report.

It captures the forward (and again with each dynamic axis grown, Note [Symbolic sizes]),
converts every live op collecting all that cannot be exported (with their minimum opset),
lists what is baked (Python values read from tensors, sizes, arrays computed in Python),
training-only behaviour, and runs the file in onnxruntime against graphgrad's eager outputs at
the traced shape and at the grown ones.
"""

from __future__ import annotations

import numpy as np

from ._deps import require_onnx, require_onnxruntime
from ._dynamic import Finding
from .builder import ExportError
from .export import convert, prepare, resolve_opset

__all__ = ["audit", "AuditReport", "Finding"]

_TRAIN_ONLY = {"Dropout": "dropout draws a random mask in train mode",
               "BatchNorm": "batch norm uses the batch's statistics (and updates running ones) "
                            "in train mode",
               "InstanceNorm": "instance norm updates running statistics in train mode",
               "RReLU": "rrelu draws random slopes in train mode"}


class AuditReport:
    """The audit's findings; ``errors`` stop an export, ``warnings`` are issued by it.

    ``str(report)`` prints one line per finding. ``ok`` is True when nothing is an error.
    """

    def __init__(self, findings, opset):
        order = {"error": 0, "warning": 1, "note": 2}
        self.findings = sorted(findings, key=lambda f: order[f.severity])
        self.opset = opset
        self._model = None

    @property
    def errors(self):
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self):
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def notes(self):
        return [f for f in self.findings if f.severity == "note"]

    @property
    def ok(self):
        return not self.errors

    def of_kind(self, kind):
        return [f for f in self.findings if f.kind == kind]

    def __str__(self):
        head = (f"graphgrad.onnx audit (opset {self.opset}): {len(self.errors)} errors, "
                f"{len(self.warnings)} warnings, {len(self.notes)} notes")
        lines = [head] + [f"  {f}" for f in self.findings]
        return "\n".join(lines)

    __repr__ = __str__


def _training_findings(p):
    out = []
    for name, m in p.training_modules:
        cls = type(m).__name__
        for key, why in _TRAIN_ONLY.items():
            if key in cls:
                out.append(Finding("training-mode", "warning",
                                   f"module {name or '(root)'} ({cls}) is in train mode: {why}; "
                                   "call model.eval() before exporting", cls))
    if p.graph is not None:
        for instr in p.graph.instrs:
            if instr.op == "store":
                out.append(Finding("training-mode", "warning",
                                   f"the forward updates {instr.label or 'a buffer'} in place "
                                   "(running statistics); the exported graph does not",
                                   "store", instr.site))
    return out


def audit(model, args, *, input_names=None, output_names=None, dynamic_axes=None,
          opset_version=None, do_constant_folding=True, check_runtime=True, probe_batch=True,
          rtol=1e-4, atol=1e-5, _keep=False):
    """Audits the export of ``model`` run on ``args``; returns an AuditReport.

    ``probe_batch``: without dynamic axes, axis 0 of every input is still grown once to find
    sizes baked into the graph (reported as notes). ``check_runtime``: run the file in
    onnxruntime and compare with graphgrad (tolerances ``rtol``/``atol`` for float32;
    float64 uses 1e-7/1e-9 scaled by the same factor).

    >>> import graphgrad as torch
    >>> r = torch.onnx.audit(torch.nn.Linear(3, 2), (torch.zeros(4, 3),))
    >>> r.ok
    True
    """
    require_onnx()
    if check_runtime:
        require_onnxruntime()
    opset = resolve_opset(opset_version)
    probe = None
    if probe_batch and not dynamic_axes:
        probe = "batch"
    p = prepare(model, args, input_names=input_names, output_names=output_names,
                dynamic_axes=dynamic_axes, probe_axes=_probe_axes(model, args, probe))
    findings = list(p.findings)
    findings += _training_findings(p)
    report = AuditReport(findings, opset)
    if p.graph is None:
        return report
    collected: list = []
    try:
        onnx_model, _ = convert(p, opset, do_constant_folding=do_constant_folding,
                                collect=collected)
    except ExportError as err:
        findings.append(Finding("unsupported-op", "error", str(err)))
        return AuditReport(findings, opset)
    findings += _dedup(collected)
    report = AuditReport(findings, opset)
    if report.errors:
        return report
    onnx = require_onnx()
    from .export import _LIMIT

    if sum(t.ByteSize() for t in onnx_model.graph.initializer) >= _LIMIT:
        findings.append(Finding("checker", "note", "the model is over 2 GB: export checks the "
                                "written file (with its external data) instead; onnxruntime "
                                "was not run in memory"))
        report = AuditReport(findings, opset)
        report._model = onnx_model if _keep else None
        return report
    try:
        onnx.checker.check_model(onnx_model, full_check=True)
    except Exception as err:  # noqa: BLE001 - reported
        findings.append(Finding("checker", "error", f"onnx.checker rejected the model: {err}"))
        return AuditReport(findings, opset)
    if check_runtime:
        findings += _runtime_check(p, onnx_model, rtol, atol)
    report = AuditReport(findings, opset)
    if _keep:
        report._model = onnx_model
    return report


def _probe_axes(model, args, probe):
    if probe is None:
        return None
    from ..compiler.capture import flatten
    from .export import _split_args

    leaves: list = []
    flatten(_split_args(args), leaves)
    return {i: [0] for i, t in enumerate(leaves) if t.ndim >= 1 and t.shape[0] >= 1}


def _dedup(findings):
    seen, out = set(), []
    for f in findings:
        key = (f.op, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def run_onnx(model_proto, feeds):
    """Runs ``model_proto`` in onnxruntime (CPU); returns the list of outputs."""
    ort = require_onnxruntime()
    ort.set_default_logger_severity(3)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model_proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _close(a, e, rtol, atol):
    a, e = np.asarray(a), np.asarray(e)
    if a.shape != e.shape:
        return f"shape {list(a.shape)} instead of {list(e.shape)}"
    if a.dtype != e.dtype:
        return f"dtype {a.dtype} instead of {e.dtype}"
    if e.dtype.kind == "f":
        scale = 1.0 if e.dtype.itemsize <= 4 else 1e-3
        if not np.allclose(a, e, rtol=rtol * scale, atol=atol * scale, equal_nan=True):
            diff = np.abs(a.astype(np.float64) - e)
            err = float(diff[~np.isnan(diff)].max()) if (~np.isnan(diff)).any() else np.nan
            return f"values differ (max abs error {err:.3g})"
    elif not np.array_equal(a, e):
        return "values differ"
    return None


def _runtime_check(p, model_proto, rtol, atol):
    out = []
    names = p.input_names

    def feeds(leaves):
        return {names[i]: np.array(t._data, order="C") for i, t in enumerate(leaves)
                if i < len(p.graph.inputs)}

    checks = [(p.leaves, p.cap.result_leaves, None, None)] + [
        v for v in p.variants if v[3] in p.dynamic_in.get(v[2], {})]
    for leaves, expected, i, axis in checks:
        where = ("at the traced shapes" if i is None else
                 f"with {names[i]!r} axis {axis} = {leaves[i].shape[axis]} (declared dynamic)")
        try:
            got = run_onnx(model_proto, feeds(leaves))
        except Exception as err:  # noqa: BLE001 - reported
            kind = "mismatch" if i is None else "not-dynamic"
            out.append(Finding(kind, "error", f"onnxruntime failed {where}: {err}"))
            continue
        for k, (a, e) in enumerate(zip(got, expected)):
            bad = _close(a, e._data, rtol, atol)
            if bad:
                kind = "mismatch" if i is None else "not-dynamic"
                out.append(Finding(kind, "error", f"output {p.output_names[k]!r} {where}: "
                                   f"{bad} against graphgrad eager"))
    return out
