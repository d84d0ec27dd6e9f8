"""torch's deprecated positional overloads (``add_(Number, Tensor)``, ``torch.add(x, 2, y)``,
``torch.addmm(beta, M, alpha, a, b)``, ...) against torch 2.13: results, and the deprecation
warning each gives once per process (checked in a fresh process, since the warning is once)."""

import json
import subprocess
import sys

import pytest

CALLS = ["a.clone().add_(2, b)", "a.clone().sub_(2, b)", "a.add(2, b)", "a.sub(2.5, b)",
         "m.add(a, 2, b)", "m.sub(a, 2, b)", "m.add(a, 2, b, out=m.empty(2))",
         "m.addcmul(a, 2, b, b)", "a.clone().addcmul_(2, b, b)", "a.addcmul(2, b, b)",
         "m.addcdiv(a, 2, b, b)", "a.clone().addcdiv_(2, b, b)", "a.addcdiv(0.5, b, b)",
         "m.addmm(0.5, M, 2.0, x, y)", "m.addmm(0.5, M, x, y)", "M.addmm(0.5, 2.0, x, y)",
         "M.addmm(0.5, x, y)", "M.clone().addmm_(0.5, 2.0, x, y)", "M.clone().addmm_(0.5, x, y)",
         "m.addmv(0.5, v, 2.0, y, a)", "m.addmv(0.5, v, y, a)", "v.addmv(0.5, 2.0, y, a)",
         "m.addr(0.5, M, 2.0, a, a)", "m.addr(0.5, M, a, a)", "M.clone().addr_(0.5, a, a)",
         "m.addbmm(0.5, M, 2.0, x[None], y[None])", "m.addbmm(0.5, M, x[None], y[None])",
         "m.baddbmm(0.5, M[None], 2.0, x[None], y[None])",
         "m.baddbmm(0.5, M[None], x[None], y[None])", "M[None].baddbmm(0.5, x[None], y[None])",
         # the current forms are untouched, and a wrong form still fails
         "m.add(a, b, alpha=2)", "a.add(b, alpha=3)", "m.addmm(M, x, y, beta=0.5)",
         "m.addmm(M, 0.5, x, y)", "a.add(2, 3)", "a.clone().add_(2, b)"]

_SCRIPT = r"""
import json, sys, warnings
import {m} as m
a = m.ones(2); b = m.full((2,), 3.0); v = m.ones(3)
M = m.ones(2, 2) * 0.5; x = m.arange(6.0).reshape(2, 3); y = m.arange(6.0).reshape(3, 2)
rows = []
for call in json.loads(sys.argv[1]):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = eval(call)
            res = ["ok", r.tolist()]
        except Exception as e:
            res = ["raise", type(e).__name__]
    msgs = [str(x.message).split(" (Triggered internally")[0] for x in w
            if issubclass(x.category, UserWarning)]
    rows.append([call, res, msgs])
print(json.dumps(rows))
"""


@pytest.fixture(scope="module")
def results():
    out = {}
    for m in ("graphgrad", "torch"):
        proc = subprocess.run([sys.executable, "-c", _SCRIPT.format(m=m), json.dumps(CALLS)],
                              capture_output=True, text=True, check=True)
        out[m] = {row[0] + f"#{i}": row[1:] for i, row in enumerate(json.loads(proc.stdout))}
    return out


@pytest.mark.parametrize("i,call", list(enumerate(CALLS)))
def test_deprecated_overload_as_torch(results, i, call):
    key = call + f"#{i}"
    assert results["graphgrad"][key] == results["torch"][key]
