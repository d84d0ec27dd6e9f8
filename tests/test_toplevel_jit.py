"""graphgrad.jit (returns its argument, warns once) and graphgrad.compiler.is_compiling."""

import warnings

import pytest
import torch

import graphgrad as gg
from graphgrad import jit


def f(x):
    return x * 2 + 1


def test_script_and_trace_return_the_object_and_warn_once():
    jit._warned[0] = False
    with pytest.warns(UserWarning, match="graphgrad does not script or trace"):
        g = gg.jit.script(f)
    assert g is f
    lin = gg.nn.Linear(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gg.jit.trace(lin, gg.ones(1, 2)) is lin
        assert gg.jit.script(lin) is lin


def test_scripted_results_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.jit.script(f)(torch.tensor([1.0, 2.0])).tolist()
        got = gg.jit.script(f)(gg.tensor([1.0, 2.0])).tolist()
        assert want == got
        want = torch.jit.trace(f, torch.ones(2))(torch.tensor([3.0, 4.0])).tolist()
        got = gg.jit.trace(f, gg.ones(2))(gg.tensor([3.0, 4.0])).tolist()
        assert want == got


@pytest.mark.filterwarnings("ignore:ignore\\(True\\) has been deprecated:FutureWarning")
def test_decorators_are_no_ops():
    for m in (torch, gg):
        class M(m.nn.Module):
            @m.jit.ignore
            def helper(self, x):
                return x + 1

            @m.jit.ignore(drop=True)
            def dropped(self, x):
                return x - 1

            @m.jit.unused
            def unused(self, x):
                return x * 3

            @m.jit.export
            def exported(self, x):
                return x * 4

            def forward(self, x):
                return self.helper(x)

        mod = M()
        x = m.tensor([1.0])
        assert [mod(x).item(), mod.dropped(x).item(), mod.unused(x).item(),
                mod.exported(x).item()] == [2.0, 0.0, 3.0, 4.0]


def test_flags_and_annotate():
    for m in (torch, gg):
        assert m.jit.is_scripting() is False and m.jit.is_tracing() is False
        assert m.jit.annotate(list, [1]) == [1]
        assert m.compiler.is_compiling() is False
        assert m.compiler.is_dynamo_compiling() is False
        assert m.compiler.is_exporting() is False


def test_is_compiling_inside_graphgrad_compile():
    seen = []

    def g(x):
        seen.append(gg.compiler.is_compiling())
        return x * 2

    cg = gg.compile(g)
    cg(gg.ones(3))
    assert True in seen and gg.compiler.is_compiling() is False
