"""graphgrad.profiler and graphgrad.autograd.profiler compared with torch's profilers on the
same programs: op names and call counts, nesting under record_function, the table layout,
Chrome traces, schedules; and that nothing stays installed once a profile ends.

Where the op decompositions differ the comparison leaves names out, on purpose: torch also
reports ``aten::linear`` around ``aten::t``/``aten::addmm``, its internal ops (``as_strided``,
``empty_strided``, ``copy_``, ``detach``...), the ops inside backward nodes (graphgrad's
derivative rules run on NumPy arrays without dispatch unless ``create_graph=True``), and the
``autograd::engine::evaluate_function:`` wrapper around each node.
"""

import json
import os
import re
import warnings

import pytest
import torch

import graphgrad as gg
from graphgrad.ops import OPS, _dispatch

MODULES = (torch, gg)
_WRAPPER = "autograd::engine::evaluate_function: "
_TRANSPARENT = ("aten::linear",)  # torch's composite around aten::t and aten::addmm


def _mlp_program(m):
    m.manual_seed(0)
    model = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Linear(8, 2))
    x = m.ones(3, 4)
    with m.profiler.profile(activities=[m.profiler.ProfilerActivity.CPU]) as prof:
        with m.profiler.record_function("my_block"):
            loss = (model(x) ** 2).mean()
        loss.backward()
    return prof


def _counts(prof):
    return {e.key: e.count for e in prof.key_averages()}


def _outer_counts(prof):
    """Calls per name, leaving out torch's extra layers (see _tree)."""
    counts = {}
    for _, name in _tree(prof):
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_mlp_names_and_counts_match_torch():
    names = ["my_block", "aten::addmm", "aten::t", "aten::relu", "aten::pow", "aten::mean",
             "MeanBackward0", "PowBackward0", "AddmmBackward0", "TBackward0", "ReluBackward0",
             "torch::autograd::AccumulateGrad"]
    tprof, gprof = _mlp_program(torch), _mlp_program(gg)
    want, got = _outer_counts(tprof), _outer_counts(gprof)
    assert {n: got.get(n) for n in names} == {n: want.get(n) for n in names}
    assert set(_counts(gprof)) <= set(_counts(tprof))  # no name torch does not report


def _tree(prof):
    """(parent name, name) pairs, with torch's extra layers taken out (see the module doc)."""
    pairs = []
    backward_nodes = set()
    for e in prof.events():
        if e.name.startswith(_WRAPPER) or e.name in _TRANSPARENT + ("aten::ones_like",):
            continue
        parent = e.cpu_parent
        if parent is not None and parent.name in _TRANSPARENT:
            parent = parent.cpu_parent
        if parent is not None and parent.name.startswith(_WRAPPER):
            if e.name != parent.name[len(_WRAPPER):]:
                continue  # the engine's own work around a node (summing gradients)
            parent = parent.cpu_parent
        if parent is not None and (parent.name in backward_nodes or
                                   parent.name.startswith("aten::")):
            continue  # ops inside a node's rule or inside another op
        if e.name.endswith("Backward0") or e.name == "torch::autograd::AccumulateGrad":
            backward_nodes.add(e.name)
        pairs.append((None if parent is None else parent.name, e.name))
    return pairs


def _elementwise_program(m):
    x = m.ones(3, requires_grad=True)
    w = m.full((3,), 2.0, requires_grad=True)
    with m.profiler.profile() as prof:
        with m.profiler.record_function("blk"):
            y = (x * w + x).sin().sum()
        y.backward()
    return prof


def test_nesting_matches_torch():
    want, got = _tree(_elementwise_program(torch)), _tree(_elementwise_program(gg))
    forward = [p for p in want if p[0] == "blk" or p[1] == "blk"]
    assert [p for p in got if p[0] == "blk" or p[1] == "blk"] == forward
    assert sorted(got, key=str) == sorted(want, key=str)


def test_events_are_nested_in_time():
    prof = _elementwise_program(gg)
    events = prof.events()
    starts = [e.time_range.start for e in events]
    assert starts == sorted(starts)
    for e in events:
        assert e.cpu_time_total >= 0 and e.self_cpu_time_total >= -1e-6
        for c in e.cpu_children:
            assert c.cpu_parent is e
            assert e.time_range.start <= c.time_range.start <= c.time_range.end
            assert c.time_range.end <= e.time_range.end


def _rows(table):
    lines = table.rstrip("\n").split("\n")
    return lines, [re.split(r"\s{2,}", ln.strip()) for ln in lines]


@pytest.mark.parametrize("row_limit", [3, 10])
def test_table_layout_matches_torch(row_limit):
    tables = [_mlp_program(m).key_averages().table(sort_by="self_cpu_time_total",
                                                     row_limit=row_limit) for m in MODULES]
    (t_lines, t_rows), (g_lines, g_rows) = (_rows(t) for t in tables)
    assert g_rows[1] == t_rows[1] == ["Name", "Self CPU %", "Self CPU", "CPU total %",
                                      "CPU total", "CPU time avg", "# of Calls"]
    assert len(g_lines) == len(t_lines) == row_limit + 5
    for lines in (t_lines, g_lines):
        assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
        assert re.fullmatch(r"Self CPU time total: [\d.]+(us|ms|s)", lines[-1])
    # the other columns are 12 wide, two spaces apart, as in torch
    assert [len(c) for c in g_lines[0].split()][1:] == [len(c) for c in t_lines[0].split()][1:]
    selfs = [_us(r[2]) for r in g_rows[3:-2]]
    assert selfs == sorted(selfs, reverse=True)
    for r in g_rows[3:-2]:
        assert r[1].endswith("%") and r[3].endswith("%") and int(r[6]) >= 1


def _us(text):
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 1, "ms": 1e3, "s": 1e6}[unit]


def test_record_shapes_column():
    def run(m):
        a, b = m.ones(2, 3), m.ones(3, 4)
        with m.profiler.profile(record_shapes=True) as prof:
            a @ b
        return prof.key_averages(group_by_input_shape=True)
    for m in MODULES:
        avg = run(m)
        mm = [e for e in avg if e.key in ("aten::mm", "aten::matmul")][0]
        assert mm.input_shapes[:2] == [[2, 3], [3, 4]]
        assert "Input Shapes" in avg.table()


def test_export_chrome_trace(tmp_path):
    prof = _elementwise_program(gg)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    assert os.listdir(tmp_path) == ["trace.json"]  # the temporary file was renamed into place
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert [e["name"] for e in events] == [e.name for e in prof.events()]
    for e in events:
        assert e["ph"] == "X" and e["dur"] >= 0 and isinstance(e["ts"], float)
    tprof = _elementwise_program(torch)
    tprof.export_chrome_trace(str(tmp_path / "torch.json"))
    torch_trace = json.loads((tmp_path / "torch.json").read_text())
    assert {"ph", "name", "ts", "dur", "pid", "tid"} <= set(
        next(e for e in torch_trace["traceEvents"] if e.get("name") == "aten::mul"))


@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2),
                                dict(wait=0, warmup=1, active=1, repeat=2, skip_first=1),
                                dict(wait=2, warmup=0, active=1, repeat=1),
                                dict(wait=3, warmup=1, active=1, skip_first_wait=1)])
def test_schedule_actions_match_torch(kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts, gs = torch.profiler.schedule(**kw), gg.profiler.schedule(**kw)
    assert [gs(i).name for i in range(14)] == [ts(i).name for i in range(14)]


def test_schedule_errors_and_warning():
    for m in MODULES:
        with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
            m.profiler.schedule(wait=0, warmup=0, active=0)
        with pytest.warns(UserWarning, match="won't be using warmup"):
            m.profiler.schedule(wait=1, warmup=0, active=1)


def test_profile_with_schedule_and_on_trace_ready():
    def run(m):
        saved = []

        def ready(prof):
            saved.append(sorted(_counts(prof).items()))

        x = m.ones(2, requires_grad=True)
        with m.profiler.profile(schedule=m.profiler.schedule(wait=1, warmup=1, active=2,
                                                             repeat=2),
                                on_trace_ready=ready) as prof:
            for _ in range(9):
                (x * 3).sum().backward()
                prof.step()
        return saved, prof.step_num

    def names(saved):
        return [[(k, n) for k, n in cycle if k.startswith(("ProfilerStep", "MulBackward0"))]
                for cycle in saved]
    (t_saved, t_steps), (g_saved, g_steps) = run(torch), run(gg)
    assert g_steps == t_steps
    assert names(g_saved) == names(t_saved)


def test_autograd_profiler_api():
    for m in MODULES:
        x = m.ones(2, requires_grad=True)
        with m.autograd.profiler.profile(record_shapes=False) as prof:
            with m.autograd.profiler.record_function("outer"):
                (x * 2).sum().backward()
        names = [e.name for e in prof.function_events]
        assert names[0] == "outer" and "aten::mul" in names and "MulBackward0" in names
        assert "Name" in prof.table(sort_by="cpu_time_total", row_limit=5)
        assert prof.self_cpu_time_total > 0
        with m.autograd.profiler.profile(enabled=False) as off:
            x * 2
        assert off is None


def test_record_function_decorator_and_idle_use():
    @gg.profiler.record_function("helper")
    def helper(t):
        return t + 1

    assert float(helper(gg.ones(1))) == 2.0  # no profiler: a no-op
    with gg.profiler.profile() as prof:
        helper(gg.ones(1))
    tree = [(e.cpu_parent.name if e.cpu_parent else None, e.name) for e in prof.events()]
    assert (None, "helper") in tree and ("helper", "aten::add") in tree


def test_create_graph_ops_nest_in_their_node():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with m.profiler.profile() as prof:
            y = x.sin().sum()
            g, = m.autograd.grad(y, x, create_graph=True)
        node = next(e for e in prof.events() if e.name == "SinBackward0")
        return [c.name for c in node.cpu_children]
    assert "aten::cos" in run(gg) and "aten::cos" in run(torch)


def test_nothing_installed_after_the_profile():
    rules = {name: op.vjp for name, op in OPS.items()}
    accumulate = gg.autograd.engine._Run.accumulate
    with gg.profiler.profile():
        with gg.autograd.profiler.profile() as inner:  # nested: the innermost records
            gg.ones(2) * 2
        gg.ones(2) + 1
    # creation functions (ones, zeros, tensor) are not dispatched ops: torch lists aten::ones
    assert [e.name for e in inner.function_events] == ["aten::mul"]
    assert _dispatch._profiler is None
    assert gg.autograd.engine._Run.accumulate is accumulate
    assert all(op.vjp is rules[name] for name, op in OPS.items())
