"""torch.utils.benchmark's Timer/Measurement/Compare as tutorials use them, compared with
torch 2.13's on the same statements (structure of the results; times are never asserted)."""

import re

import pytest
import torch.utils.benchmark as tb

import graphgrad.utils.benchmark as gb


def _shape(mod, lib):
    t = mod.Timer(stmt="x * 2", setup=f"import {lib} as t; x = t.ones(10)", label="mul",
                  sub_label="10", description="eager")
    m = t.timeit(50)
    b = t.blocked_autorange(min_run_time=0.01)
    text = re.sub(r"[\d.]+ (ns|us|ms|s)\b", "T", repr(m))
    text = re.sub(r"0x[0-9a-f]+", "0x", text).replace(f"import {lib}", "import LIB")
    return {
        "timeit": (len(m.times), m.number_per_run, m.title, m.median > 0, m.iqr),
        "blocked": (len(b.times) >= 1, b.number_per_run >= 1, all(x > 0 for x in b.times)),
        "repr": text,
        "compare_has_label": "mul" in str(mod.Compare([m, b])),
    }


def test_timer_results_have_torchs_shape():
    assert _shape(gb, "graphgrad") == _shape(tb, "torch")


def test_globals_reach_the_statement_and_callgrind_is_refused():
    calls = []
    gb.Timer(stmt="f()", globals={"f": lambda: calls.append(1)}).timeit(5)
    assert len(calls) >= 5
    with pytest.raises(NotImplementedError, match="callgrind"):
        gb.Timer("pass").collect_callgrind()
