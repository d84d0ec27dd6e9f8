"""Small names the API sweep found missing, against torch 2.13: func.linearize,
func.functionalize, func.replace_all_batch_norm_modules_, and
nn.modules.utils.consume_prefix_in_state_dict_if_present (loading DDP checkpoints)."""

import importlib

import numpy as np
import pytest
import torch

import graphgrad as gg


def _both(prog):
    a, b = prog(gg), prog(torch)
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(x, dtype=float), np.asarray(y, dtype=float),
                                   rtol=1e-10, atol=1e-12)


def test_linearize_is_jvp_at_the_primals():
    # torch.func.linearize traces with make_fx (seconds); its value is defined as torch's jvp
    def f(m):
        return lambda t: (t.sin() * t).sum(0)

    x = [[0.1, 0.2], [0.3, 0.4]]
    tangents = ([[1.0, 1.0], [1.0, 1.0]], [[0.0, 1.0], [2.0, 3.0]])
    gx = gg.tensor(x, dtype=gg.float64)
    out, jvp_fn = gg.func.linearize(f(gg), gx)
    tx = torch.tensor(x, dtype=torch.float64)
    np.testing.assert_allclose(out.numpy(), f(torch)(tx).numpy(), rtol=1e-12)
    for t in tangents:
        want = torch.func.jvp(f(torch), (tx,), (torch.tensor(t, dtype=torch.float64),))[1]
        np.testing.assert_allclose(jvp_fn(gg.tensor(t, dtype=gg.float64)).numpy(),
                                   want.numpy(), rtol=1e-12)


def test_functionalize_keeps_results():
    def prog(m):
        def g(y):
            z = y.clone()
            z.add_(1)
            z[0] *= 3
            return z * 2
        x = m.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=m.float64)
        return (m.func.functionalize(g)(x).tolist(),
                m.func.functionalize(g, remove="mutations_and_views")(x).tolist())
    _both(prog)
    with pytest.raises(RuntimeError, match="invalid argument"):
        gg.func.functionalize(abs, remove="views")


def test_replace_all_batch_norm_modules():
    def prog(m):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.BatchNorm1d(3), m.nn.ReLU(),
                              m.nn.Sequential(m.nn.BatchNorm1d(3)))
        assert m.func.replace_all_batch_norm_modules_(net) is net
        bns = [net[1], net[3][0]]
        return [[b.running_mean is None, b.running_var is None,
                 b.num_batches_tracked is None, b.track_running_stats] for b in bns]
    assert prog(gg) == prog(torch)


def test_consume_prefix_in_state_dict_if_present():
    def prog(m):
        utils = importlib.import_module(m.__name__ + ".nn.modules.utils")

        class Wrapper(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.module = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.BatchNorm1d(2))

        sd = Wrapper().state_dict()
        utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        utils.consume_prefix_in_state_dict_if_present(sd, "absent.")
        return list(sd), sorted(sd._metadata)
    assert prog(gg) == prog(torch)


@pytest.mark.parametrize("case", ["equal_list", "far", "within_loose", "mixed_dtype", "nan",
                                  "nan_unequal", "explicit_tol"])
def test_deprecated_assert_allclose_as_torch(case):
    import warnings

    def run(m):
        a = m.tensor([1.0, 2.0, float("nan")] if case.startswith("nan") else [1.0, 2.0])
        call = {
            "equal_list": lambda: m.testing.assert_allclose(a, [1.0, 2.0]),
            "far": lambda: m.testing.assert_allclose(a, m.tensor([1.0, 2.1])),
            "within_loose": lambda: m.testing.assert_allclose(a, m.tensor([1.0, 2.00015])),
            "mixed_dtype": lambda: m.testing.assert_allclose(a, a.double()),
            "nan": lambda: m.testing.assert_allclose(a, a.clone()),
            "nan_unequal": lambda: m.testing.assert_allclose(a, a.clone(), equal_nan=False),
            "explicit_tol": lambda: m.testing.assert_allclose(a, a + 0.05, rtol=0, atol=0.1),
        }[case]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                call()
                result = "ok"
            except AssertionError as e:
                result = str(e)
        return result, [w.category.__name__ for w in caught]
    assert run(gg) == run(torch)


def test_cpu_streams_and_events_as_torch():
    for m in (gg, torch):
        s, e = m.cpu.Stream(), m.cpu.Event()
        assert (e.query(), e.record(), e.wait(), e.synchronize()) == (True, None, None, None)
        assert (s.record_event(), s.wait_event(e), s.wait_stream(s)) == (None, None, None)
        assert m.cpu.current_stream() is m.cpu.current_stream()
        before = m.cpu.current_stream()
        with m.cpu.stream(s):
            inside = m.cpu.current_stream()
        assert isinstance(inside, m.cpu.Stream) and m.cpu.current_stream() is before
        assert issubclass(m.cpu.StreamContext, object)


def test_jit_eager_surface_as_torch():
    import typing
    import warnings

    List, Dict, Tuple = typing.List, typing.Dict, typing.Tuple  # noqa: UP006 - torch's idiom
    Opt, Union = typing.Optional, typing.Union
    cases = [([1, 2], List[int]), ([1, "a"], List[int]), ({"a": 1}, Dict[str, int]),
             ({"a": "b"}, Dict[str, int]), (None, Opt[int]), ("x", Opt[int]),
             ((1, "a"), Tuple[int, str]), ((1, 2), Tuple[int, str]), (3, int),
             ([], List[int]), (1.5, Union[int, str]), ([[1], [2]], List[List[int]]),
             (None, int | None), (2.5, int | str)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for obj, target in cases:
            assert gg.jit.isinstance(obj, target) == torch.jit.isinstance(obj, target), target
    assert gg.jit.wait(gg.jit.fork(lambda a, b=1: a + b, 2, b=3)) == \
        torch.jit.wait(torch.jit.fork(lambda a, b=1: a + b, 2, b=3))
    assert repr(gg.jit.Attribute(3, int)) == repr(torch.jit.Attribute(3, int))
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        gg.jit.freeze(gg.nn.Linear(2, 2))
    m = gg.nn.Linear(2, 2).eval()
    assert gg.jit.freeze(m) is m and gg.jit.optimize_for_inference(m) is m
    assert gg.jit.set_fusion_strategy([("STATIC", 2)]) == \
        torch.jit.set_fusion_strategy([("STATIC", 2)])
    assert gg.jit.onednn_fusion_enabled() == torch.jit.onednn_fusion_enabled()
    with pytest.raises(NotImplementedError, match="graphgrad.save"):
        gg.jit.save(m, "model.pt")


def test_futures_as_torch():
    def prog(m):
        f = m.futures.Future()
        before = f.done()
        chained = f.then(lambda fut: fut.value() * 10)
        f.set_result(3)
        both = m.futures.collect_all([f, chained])
        try:
            f.set_result(4)
            again = "ok"
        except RuntimeError as e:
            again = str(e)
        return (before, f.done(), f.wait(), chained.wait(), [x.wait() for x in both.wait()],
                m.futures.wait_all([f, chained]), again, issubclass(m.futures.Future, m.Future))
    assert prog(gg) == prog(torch)
