"""The adapter between the compiler's capture and export: records one forward pass.

Export reads the compiler's IR (graphgrad.compiler.capture). Two things differ for export and
live here: an op whose params hold an array computed in Python (an index plan, a pad index,
resampling taps) is recorded with that array baked (and noted, so the audit can list it)
instead of breaking the graph, and an op's auxiliary output that is not one array (the
statistics tuple of a norm) is dropped, as a forward pass never reads it.
"""

from __future__ import annotations

import numpy as np

from ..compiler.capture import Capture, flatten
from ..compiler.trace import GraphBreak, user_site

__all__ = ["ExportCapture", "capture_forward", "GraphBreak"]


class ExportCapture(Capture):
    """A Capture that bakes array params (listed in ``baked_arrays``) and drops tuple aux."""

    def __init__(self):
        super().__init__(fullgraph=True)
        self.baked_arrays: list = []  # (op name, param name, site, severity, why)

    def state_update(self, what):
        """An exported forward never updates buffers (the file cannot): nothing to record; the
        audit reports the train-mode behaviour itself."""

    def record(self, op, inputs, arrays, params, out, aux=None):
        if aux is not None and not isinstance(aux, np.ndarray):
            aux = None
        if params:
            for k, p in params.items():
                if _holds_array(p):
                    why = self._classify(op, params)
                    if why is not None:
                        self.baked_arrays.append((op.name, k, user_site(), *why))
                    break
        ins = [self._arg(x, a) for x, a in zip(inputs, arrays)]
        types = [(out.shape, out.dtype)]
        if aux is not None:
            types.append((aux.shape, aux.dtype))
        instr = self.graph.add(op, ins, types, params)
        instr.site = user_site()
        self.bind(out, instr.outs[0])
        if aux is not None:
            self.bind(aux, instr.outs[1])
        return instr


    def _classify(self, op, params):
        """None when the params' arrays are static (baking them is right); otherwise
        (severity, why). Uses the compiler's resolver of arrays to recorded values."""
        try:
            from ..compiler.dynparams import find_dyn_params
        except ImportError:  # an older compiler: say what is known
            return ("note", "an array computed in Python (an index or mask), written as a "
                    "constant: right only if it does not come from the inputs' values")
        found = find_dyn_params(self, op.name, params)
        if found is None:
            return None
        if isinstance(found, str):
            return ("warning", "an array computed in Python from tensor values is written as "
                    "a constant: right only if those values are fixed")
        kinds = {v.kind for v in found[1]}
        if kinds <= {"const", "external"}:
            return None  # computed from parameters, buffers or constants: fixed in the file
        return ("error", "an index or mask computed from the inputs' values would be written "
                "as this call's constant: the file would reuse it for every input")


def _holds_array(p, depth=0):
    if isinstance(p, np.ndarray):
        return p.ndim > 0
    if depth > 3:
        return False
    if isinstance(p, (list, tuple)):
        return any(_holds_array(e, depth + 1) for e in p)
    if isinstance(p, (int, float, str, bool, slice, type(None), np.dtype, type)):
        return False
    slots = getattr(type(p), "__slots__", None)
    fields = ([getattr(p, n, None) for n in slots] if slots
              else list(getattr(p, "__dict__", {}).values()))
    return any(_holds_array(e, depth + 1) for e in fields)


def capture_forward(model, args, kwargs=None):
    """Runs ``model(*args, **kwargs)`` under no_grad with the recorder on.

    Returns (capture, result). ``capture.graph`` is the forward's Graph; a read of a tensor's
    value into Python raises GraphBreak (with the user's line) because fullgraph is on.
    """
    from ..autograd.grad_mode import no_grad

    kwargs = kwargs or {}
    cap = ExportCapture()
    names = {}
    if hasattr(model, "named_parameters"):
        names.update({id(p): n for n, p in model.named_parameters()})
        names.update({id(b): n for n, b in model.named_buffers()})
    cap.ext_names.update(names)
    if hasattr(model, "named_parameters"):
        # Known up front, so that an index read from a buffer resolves to it (fixed in the
        # file) rather than to "computed in Python"; unused ones are not written.
        for t in list(model.parameters()) + list(model.buffers()):
            cap.value(t._data, t)
    leaves: list = []
    flatten((args, kwargs), leaves)
    for i, t in enumerate(leaves):
        cap.input(t, f"arg{i}")
    cap.input_tensors = [t.detach().clone() for t in leaves]  # before any in-place write
    cap.start()
    try:
        with no_grad():
            result = model(*args, **kwargs)
    finally:
        cap.stop()
    outs: list = []
    cap.out_spec = flatten(result, outs)
    cap.graph.outputs = [cap.value(t._data, t) for t in outs]
    cap.result_leaves = outs
    return cap, result
