"""One-op models from the OpInfo samples, exported and run in onnxruntime.

For each OpInfo, every sample (float32 where the op takes it, else its first dtype) becomes
part of one function whose inputs are the sample's floating-point leaves (integer and bool
leaves, indices and masks, are fixed tensors of the model, as in a real network). All samples
of an OpInfo go into one ONNX model, so the whole table costs one onnxruntime session per
OpInfo; when that model fails, each sample is tried alone to name the one that fails.
"""

from __future__ import annotations

import functools
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import graphgrad as gg  # noqa: E402
from graphgrad.onnx import ExportError  # noqa: E402
from graphgrad.onnx.audit import _close, run_onnx  # noqa: E402
from graphgrad.onnx.export import convert, prepare  # noqa: E402
from graphgrad.onnx.ops import MAPPINGS, REASONS  # noqa: E402
from opinfo import OP_DB  # noqa: E402
from opinfo.core import leaves_of, materialize  # noqa: E402

OPSET = 21
RTOL, ATOL = 1e-4, 1e-5


def _samples(op):
    if not op.dtypes:
        return list(op.mixed_inputs())
    # float32 whenever the op takes floats (variants list float64 only, to save time elsewhere)
    floats = any(np.dtype(d).kind == "f" for d in op.dtypes)
    dtype = np.float32 if floats else op.dtypes[0]
    try:
        return list(op.sample_inputs(dtype))
    except Exception:  # noqa: BLE001 - an OpInfo whose samples need something missing
        return []


def _split(sample):
    """(input leaves, fixed leaves): float leaves are model inputs, the rest constants."""
    arrays = leaves_of(sample)
    return [a.dtype.kind == "f" for a in arrays], arrays


def _model(op, samples):
    """A function of the samples' float leaves returning all their results (flattened)."""
    plans = []
    for s in samples:
        is_input, arrays = _split(s)
        fixed = [None if f else gg.tensor(a.copy()) for f, a in zip(is_input, arrays)]
        plans.append((s, is_input, fixed))

    def fn(*inputs):
        it = iter(inputs)
        outs = []
        for s, is_input, fixed in plans:
            leaves = [next(it) if f else t for f, t in zip(is_input, fixed)]
            inp, args, kwargs = materialize(s, gg, leaves)
            r = op.op(gg)(inp, *args, **kwargs)
            outs.extend(_tensors(r))
        return tuple(outs)

    inputs = [gg.tensor(a.copy()) for s in samples for f, a in zip(*_split(s)) if f]
    return fn, inputs


def _tensors(r):
    if isinstance(r, gg.Tensor):
        return [r]
    if isinstance(r, (tuple, list)):
        return [t for x in r for t in _tensors(x)]
    return []


def run_samples(op, samples):
    """('ok' | 'skip' | 'fail', detail, ops in the IR) for these samples as one model."""
    fn, inputs = _model(op, samples)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = fn(*[gg.tensor(t._data.copy()) for t in inputs])
        except Exception as err:  # noqa: BLE001 - eager rejects the sample: nothing to export
            return "skip", f"eager raised {type(err).__name__}", set()
        p = prepare(fn, tuple(inputs))
    errors = [f for f in p.findings if f.severity == "error"]
    if p.graph is None or errors:
        return "skip", f"not captured: {errors[0].message[:150]}", set()
    names = {i.name for i in p.graph.instrs}
    if not p.graph.outputs:
        return "skip", "no tensor output", names
    blocked = sorted(n for n in names if n in REASONS)
    if blocked:
        return "skip", f"uses ops without a mapping: {blocked}", names
    try:
        model, _ = convert(p, OPSET)
        import onnx

        onnx.checker.check_model(model, full_check=True)
        feeds = {p.input_names[i]: np.array(t._data, order="C")
                 for i, t in enumerate(inputs)}
        got = run_onnx(model, feeds)
    except ExportError as err:  # a documented limit of a converter, with its reason
        return "unsupported", str(err)[:300], names
    except Exception as err:  # noqa: BLE001 - reported by the test
        return "fail", f"{type(err).__name__}: {str(err)[:300]}", names
    for k, (a, e) in enumerate(zip(got, expected)):
        bad = _close(a, e._data, RTOL, ATOL)
        if bad:
            return "fail", f"output {k}: {bad}", names
    return "ok", "", names


@functools.cache
def results():
    """{OpInfo name: [(sample label, status, detail, ops)]} over the whole table, run once."""
    out = {}
    for op in OP_DB:
        samples = _samples(op)
        if not samples:
            out[op.name] = []
            continue
        status, detail, names = run_samples(op, samples)
        if status == "ok":
            out[op.name] = [("all", status, detail, names)]
            continue
        rows = []
        for i, s in enumerate(samples):
            st, d, n = run_samples(op, [s])
            rows.append((f"{i}-{s.name}" if s.name else str(i), st, d, n))
        out[op.name] = rows
    return out


def exported_ops():
    """Names of the OpDefs some sample round-tripped."""
    done = set()
    for rows in results().values():
        for _, status, _, names in rows:
            if status == "ok":
                done |= {n for n in names if n in MAPPINGS}
    return done
